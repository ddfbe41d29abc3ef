"""The classic backend of :class:`bloomindex.BloomIndex`: py4j calls to the jar's facade
``bloomindex.api.IndexApi``, and a long build's progress on stderr."""

from __future__ import annotations

import builtins
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ._backend import Backend
from .errors import capture
from .session import jvm_object

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ClassicBackend"]


class ClassicBackend(Backend):
    """``progress``: print a build's task counts to stderr when it takes more than a few seconds."""

    def __init__(self, spark: "SparkSession", progress: bool):
        self._spark = spark
        self._api = jvm_object(spark, "bloomindex.api.IndexApi$")
        self._progress = progress

    def create(self, name: str, source: "str | DataFrame", source_format: str | None,
               columns: Sequence[str], column_options: Mapping[str, Mapping[str, str]],
               options: Mapping[str, str], if_not_exists: bool) -> Any:
        if isinstance(source, str):
            call = lambda: self._api.createOnTableOrPath(
                self._spark._jsparkSession, name, source, source_format, columns, column_options, options,
                if_not_exists)
        else:
            call = lambda: self._api.createOnDataFrame(source._jdf, name, columns, column_options, options,
                                                       if_not_exists)
        return self._run(name, call)

    def refresh(self, name: str, full: bool) -> Any:
        return self._run(name, lambda: self._api.refresh(self._spark._jsparkSession, name, full))

    def drop(self, name: str, if_exists: bool) -> Any:
        return capture(self._api.drop)(self._spark._jsparkSession, name, if_exists)

    def list(self) -> "DataFrame":
        from pyspark.sql import DataFrame

        return DataFrame(capture(self._api.list)(self._spark._jsparkSession), self._spark)

    def describe(self, name: str, extended: bool) -> Iterable[Sequence[Any]]:
        return capture(self._api.describe)(self._spark._jsparkSession, name, extended)

    def explain(self, df: "DataFrame") -> Any:
        return capture(self._api.explain)(df._jdf)

    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[Iterable[tuple[Any, Any]]]:
        return [m.items() for m in self._api.joinFilterMetrics(df._jdf)]

    def _run(self, name: str, call: Callable[[], Any]) -> Any:
        """Runs a build, printing progress to stderr when it takes more than a few seconds."""
        done = threading.Event()
        if self._progress:
            group = self._api.jobGroup(name)
            threading.Thread(target=self._report, args=(group, done), daemon=True).start()
        try:
            return capture(call)()
        finally:
            done.set()

    def _report(self, group: str, done: threading.Event) -> None:
        if done.wait(3.0):
            return
        tracker = self._spark.sparkContext.statusTracker()
        shown = False
        while not done.wait(1.0):
            try:
                total = finished = 0
                for job in tracker.getJobIdsForGroup(group):
                    info = tracker.getJobInfo(job)
                    for sid in (info.stageIds if info else []):
                        st = tracker.getStageInfo(sid)
                        if st:
                            total += st.numTasks
                            finished += st.numCompletedTasks
                if total:
                    sys.stderr.write(f"\rbloomindex: building '{group[len('bloomindex-'):]}': "
                                     f"{finished}/{total} tasks")
                    sys.stderr.flush()
                    shown = True
            except Exception:  # progress is best effort; the build's own errors surface elsewhere
                return
        if shown:
            sys.stderr.write("\n")
