"""The classic backend of :class:`bloomindex.BloomIndex`: py4j calls to the jar's facade
``bloomindex.api.IndexApi``, and a long build's progress on stderr."""

from __future__ import annotations

import builtins
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ._backend import HISTORY_QUERY, Backend
from .errors import capture, convert
from .session import jvm_object

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ClassicBackend"]


class ClassicBackend(Backend):
    """``progress`` (``"auto"``, ``True`` or ``False``, checked already): whether ``create`` and
    ``refresh`` show a long build's progress on stderr, see :func:`display`."""

    def __init__(self, spark: "SparkSession", progress: "bool | str" = "auto"):
        self._spark = spark
        self._api = jvm_object(spark, "bloomindex.api.IndexApi$")
        self._progress = progress

    def create(self, name: str, source: "str | DataFrame", source_format: str | None,
               columns: Sequence[tuple[str, str | None, Mapping[str, str]]],
               options: Mapping[str, str], if_not_exists: bool) -> Any:
        names = [c for c, _, _ in columns]
        kinds = [k for _, k, _ in columns]
        column_options = [dict(o) for _, _, o in columns]
        if isinstance(source, str):
            call = lambda: self._api.createOnTableOrPath(
                self._spark._jsparkSession, name, source, source_format, names, kinds, column_options, options,
                if_not_exists)
        else:
            call = lambda: self._api.createOnDataFrame(source._jdf, name, names, kinds, column_options, options,
                                                       if_not_exists)
        return self._run(name, call)

    def refresh(self, name: str, full: bool) -> Any:
        return self._run(name, lambda: self._api.refresh(self._spark._jsparkSession, name, full))

    def set_refresh(self, name: str, mode: str) -> Any:
        return capture(self._api.setRefresh)(self._spark._jsparkSession, name, mode)

    def optimize(self, name: str) -> Any:
        return self._run(name, lambda: self._api.optimize(self._spark._jsparkSession, name))

    def vacuum(self, name: str, retain_hours: float | None) -> tuple[int, int, int]:
        folders, freed, entries = capture(self._api.vacuum)(self._spark._jsparkSession, name,
                                                           -1.0 if retain_hours is None else float(retain_hours))
        return int(folders), int(freed), int(entries)

    def drop(self, name: str, if_exists: bool) -> Any:
        return capture(self._api.drop)(self._spark._jsparkSession, name, if_exists)

    def list(self) -> "DataFrame":
        from pyspark.sql import DataFrame

        return DataFrame(capture(self._api.list)(self._spark._jsparkSession), self._spark)

    def history(self) -> "DataFrame":
        return convert(self._spark.sql)(HISTORY_QUERY)

    def sql_frame(self, statement: str) -> "DataFrame":
        return convert(self._spark.sql)(statement)

    def describe(self, name: str, extended: bool) -> Iterable[Sequence[Any]]:
        return capture(self._api.describe)(self._spark._jsparkSession, name, extended)

    def explain(self, df: "DataFrame") -> Any:
        return capture(self._api.explain)(df._jdf)

    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[Iterable[tuple[Any, Any]]]:
        return [m.items() for m in self._api.joinFilterMetrics(df._jdf)]

    def _run(self, name: str, call: Callable[[], Any]) -> Any:
        """Runs a build in the index's job group (the JVM sets it, and the job description the
        Spark UI shows), with its progress on stderr as :func:`display` decides."""
        done = threading.Event()
        reporter = None
        mode = display(self._progress, _stderr_is_terminal(), _spark_shows_progress(self._spark))
        if mode is not None:
            group = self._api.jobGroup(name)
            reporter = threading.Thread(target=self._report, args=(name, group, mode, done), daemon=True)
            reporter.start()
        try:
            return capture(call)()
        finally:
            done.set()
            if reporter is not None:
                reporter.join(timeout=2.0)  # its last line before the caller's next output

    def _stages(self, group: str) -> tuple[int, int, int]:
        """(finished tasks, tasks, input bytes) of the jobs of the build's job group so far;
        skipped stages (their output computed already) left out."""
        sc = self._spark.sparkContext
        tracker = sc.statusTracker()
        store = sc._jsc.sc().statusStore()
        total = finished = read = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for sid in (info.stageIds if info else []):
                try:
                    st = store.lastStageAttempt(sid)
                except Exception:  # not submitted yet
                    continue
                if st.status().toString() == "SKIPPED":
                    continue
                total += st.numTasks()
                finished += st.numCompleteTasks()
                read += st.inputBytes()
        return finished, total, read

    def _files(self, group: str) -> tuple[int, int] | None:
        """(source files read, source files) of the build's data pass, once it started; None
        before, or where every filter came from the files' footers (nothing to read)."""
        try:
            counts = self._api.filesProgress(group)
        except Exception:  # progress is best effort
            return None
        return (int(counts[0]), int(counts[1])) if counts is not None else None

    def _report(self, name: str, group: str, mode: str, done: threading.Event) -> None:
        """One progress display after PROGRESS_DELAY seconds: in ``"line"`` mode one line
        rewritten in place (a terminal), in ``"lines"`` mode a start line and an end line."""
        start = time.monotonic()
        if done.wait(PROGRESS_DELAY):
            return
        last, shown, counts = "", False, (0, 0, 0)
        while True:
            finished_run = done.wait(PROGRESS_INTERVAL)
            try:
                counts = self._stages(group)
            except Exception:  # progress is best effort; the build's own errors surface elsewhere
                if not shown:
                    return
            finished, total, read = counts
            if finished_run:
                break
            if not total:
                continue
            elapsed = time.monotonic() - start
            files = self._files(group)
            read_so_far, of = files if files else (finished, total)
            left = f", about {elapsed * (of - read_so_far) / read_so_far:.0f} s left" if 0 < read_so_far < of else ""
            text = (f"bloomindex: building '{name}': {_files_part(files)}{finished}/{total} tasks, {_size(read)} read, "
                    f"{elapsed:.0f} s{left}")
            if mode == "line" and text != last:
                sys.stderr.write("\r" + text.ljust(len(last)))
                sys.stderr.flush()
                last, shown = text, True
            elif mode == "lines" and not shown:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
                shown = True
        if shown:
            finished, total, read = counts
            sys.stderr.write(("\n" if mode == "line" else "") + f"bloomindex: built '{name}' in "
                             f"{time.monotonic() - start:.1f} s: {_files_part(self._files(group))}"
                             f"{finished}/{total} tasks, {_size(read)} read\n")
            sys.stderr.flush()


def display(progress: "bool | str", terminal: bool, spark_bar: bool) -> str | None:
    """How a build shows its progress: ``"line"`` (one line rewritten in place), ``"lines"``
    (a start and an end line) or ``None``.

    ``"auto"``: a line where stderr is a terminal and Spark's console progress bar is off, else
    none. ``True``: a line on a terminal without Spark's bar, else start and end lines (never a
    second bar beside Spark's). ``False``: none."""
    if progress is False:
        return None
    if terminal and not spark_bar:
        return "line"
    return "lines" if progress is True else None


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except Exception:  # a replaced stderr without isatty
        return False


def _size(n: float) -> str:
    """A byte count for people: 512 B, 1.5 KiB, 3.2 MiB ..."""
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            break
    return f"{n:.1f} {unit}"


# A build's progress appears after PROGRESS_DELAY seconds, updated every PROGRESS_INTERVAL.
PROGRESS_DELAY = 3.0
PROGRESS_INTERVAL = 1.0


def _spark_shows_progress(spark: "SparkSession") -> bool:
    """Whether Spark's own console progress bar is on (`spark.ui.showConsoleProgress`)."""
    try:
        return spark.sparkContext.getConf().get("spark.ui.showConsoleProgress", "false").lower() == "true"
    except Exception:
        return False


def _files_part(files: tuple[int, int] | None) -> str:
    return f"{files[0]}/{files[1]} files, " if files else ""
