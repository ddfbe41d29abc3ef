"""The classic backend of :class:`bloomindex.BloomIndex`: py4j calls to the jar's facade
``bloomindex.api.IndexApi``, and a long build's progress on stderr."""

from __future__ import annotations

import builtins
import sys
import threading
import time
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
        """Runs a build, showing its progress on stderr when it takes more than a few seconds."""
        done = threading.Event()
        reporter = None
        if self._progress:
            group = self._api.jobGroup(name)
            reporter = threading.Thread(target=self._report, args=(name, group, done), daemon=True)
            reporter.start()
        try:
            return capture(call)()
        finally:
            done.set()
            if reporter is not None:
                reporter.join(timeout=2.0)  # its last line before the caller's next output

    def _tasks(self, group: str) -> tuple[int, int]:
        """(finished, total) tasks of the jobs of the build's job group so far."""
        tracker = self._spark.sparkContext.statusTracker()
        total = finished = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for sid in (info.stageIds if info else []):
                st = tracker.getStageInfo(sid)
                if st:
                    total += st.numTasks
                    finished += st.numCompletedTasks
        return finished, total

    def _report(self, name: str, group: str, done: threading.Event) -> None:
        """One progress display: none where Spark's console progress bar shows the build's
        stages already; on a terminal one line rewritten in place (tasks, time, time left); elsewhere
        (a log, a notebook's captured stderr) a start line; then one line when the build ends."""
        start = time.monotonic()
        if done.wait(PROGRESS_DELAY) or _spark_shows_progress(self._spark):
            return
        tty = sys.stderr.isatty()
        last, shown = "", False
        while not done.wait(PROGRESS_INTERVAL):
            try:
                finished, total = self._tasks(group)
            except Exception:  # progress is best effort; the build's own errors surface elsewhere
                return
            if not total:
                continue
            elapsed = time.monotonic() - start
            left = f", about {elapsed * (total - finished) / finished:.0f} s left" if 0 < finished < total else ""
            text = f"bloomindex: building '{name}': {finished}/{total} tasks, {elapsed:.0f} s{left}"
            if tty and text != last:
                sys.stderr.write("\r" + text.ljust(len(last)))
                sys.stderr.flush()
                last, shown = text, True
            elif not tty and not shown:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
                shown = True
        if shown:
            sys.stderr.write(("\n" if tty else "") + f"bloomindex: built '{name}' in {time.monotonic() - start:.1f} s\n")
            sys.stderr.flush()


# A build's progress appears after PROGRESS_DELAY seconds, updated every PROGRESS_INTERVAL.
PROGRESS_DELAY = 3.0
PROGRESS_INTERVAL = 1.0


def _spark_shows_progress(spark: "SparkSession") -> bool:
    """Whether Spark's own console progress bar is on (`spark.ui.showConsoleProgress`)."""
    try:
        return spark.sparkContext.getConf().get("spark.ui.showConsoleProgress", "false").lower() == "true"
    except Exception:
        return False
