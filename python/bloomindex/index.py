"""Bloom indexes from Python: the same JVM code as the SQL statements underneath.

Two backends behind :class:`BloomIndex`: on a classic session the calls go through py4j to
the jar's facade (``bloomindex.api.IndexApi``); on a Spark Connect session (``pyspark-client``,
no JVM here) they are bloomindex's SQL statements and DataFrame calls, run by the server's
extension. Results and exception classes are the same on both.
"""

from __future__ import annotations

import builtins
import re
import sys
import threading
import uuid
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .errors import capture, convert
from .session import is_connect, jvm_object

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["BloomIndex", "might_contain"]


class BloomIndex:
    """Creates, refreshes, drops, lists and describes Bloom indexes.

    >>> bi = BloomIndex(spark)                                          # doctest: +SKIP
    >>> bi.create("orders_uid", "orders", ["user_id"], fpp=0.01)         # doctest: +SKIP
    >>> bi.create("events_ip", "/data/events", {"ip": {"fpp": 0.05}},
    ...           source_format="parquet", global_filter=True)           # doctest: +SKIP
    >>> bi.refresh("orders_uid")                                         # doctest: +SKIP
    >>> bi.describe("orders_uid")["files_indexed"]                       # doctest: +SKIP
    '200'

    Errors come as PySpark's exceptions (``AnalysisException`` ...) with the JVM's message and
    an error condition (``e.getCondition()``, ``e.getSqlState()``); those of bloomindex's
    conditions are :class:`bloomindex.BloomIndexError`. ``create``, ``refresh`` and ``drop``
    raise :class:`bloomindex.ConcurrentBloomIndexUpdateError` when another command committed
    first: nothing was changed, and the call may be retried.

    ``spark`` is a classic session or a Spark Connect one (``SparkSession.builder.remote(...)``):
    on Connect every call runs as bloomindex's SQL on the server (which needs the jar and the
    extension, see :func:`bloomindex.configure`), with the same results and exception classes.
    ``progress`` (classic sessions) prints a long build's task counts to stderr; a Connect
    client shows PySpark's own progress bar instead.
    """

    def __init__(self, spark: "SparkSession", progress: bool = True):
        self._spark = spark
        self._connect = is_connect(spark)
        self._api = None if self._connect else jvm_object(spark, "bloomindex.api.IndexApi$")
        self._progress = progress and not self._connect

    def create(
        self,
        name: str,
        source: "str | DataFrame",
        columns: Sequence[str] | Mapping[str, Mapping[str, Any]],
        fpp: float | None = None,
        ndv: int | None = None,
        *,
        algorithm: str | None = None,
        source_format: str | None = None,
        global_filter: bool = False,
        if_not_exists: bool = False,
        **options: str | int | float | bool,
    ) -> bool:
        """Creates index ``name`` over ``source`` and builds it; returns False if it existed
        and ``if_not_exists`` was set.

        ``source`` is a table name, a path (with ``source_format=``, e.g. ``"parquet"``: the
        files' data source) or a DataFrame that reads files directly. ``columns`` is a list of
        names or a dict of name -> per-column options (``fpp``, ``ndv``, ``sizing``,
        ``algorithm``). ``fpp``, ``ndv`` and ``algorithm`` are defaults for every column.

        ``algorithm`` is the Bloom filter design: ``"sbbf"`` (Parquet's split block filter, the
        default), ``"sbbf-murmur3"`` (its deprecated MurmurHash3 predecessor) or ``"classic"``
        (m bits, k hash functions); see :mod:`bloomindex.filters`.

        ``global_filter=True`` also builds, per column, one filter of the whole source (SQL's
        ``OPTIONS (global = true)``): the filter join pre-filters and :func:`might_contain` use.

        ``options`` are the other index options, as SQL's ``OPTIONS``: ``sizing="exact"`` (the
        default: each filter the smallest meeting its ``fpp``) or ``"power-of-two"``, a default
        for every column; ``allow_unencrypted_index=True`` stores the index unencrypted when
        source columns are encrypted (Parquet modular encryption) and the session cannot
        encrypt it (otherwise refused). The JVM refuses unknown names.
        """
        from pyspark.sql import DataFrame

        if isinstance(columns, Mapping):
            names = list(columns)
            col_opts = {c: {k: _opt(v) for k, v in (o or {}).items()} for c, o in columns.items()}
        elif isinstance(columns, str):
            names, col_opts = [columns], {}
        else:
            names, col_opts = list(columns), {}
        if not names or not all(isinstance(c, str) for c in names):
            raise ValueError(f"columns: expected column names, got {columns!r}")
        if not isinstance(global_filter, bool):
            raise ValueError(f"global_filter: must be True or False, got {global_filter!r}")
        for key in options:
            if key.lower() in ("global", "global_"):
                raise ValueError(f"{key}: not an option here; pass global_filter=True")
        opts = {k: _opt(v) for k, v in options.items()}
        if fpp is not None:
            opts["fpp"] = _opt(fpp)
        if ndv is not None:
            opts["ndv"] = _opt(ndv)
        if algorithm is not None:
            opts["algorithm"] = _opt(algorithm)
        if global_filter:
            opts["global"] = _opt(global_filter)

        if isinstance(source, DataFrame):
            if source_format is not None:
                raise ValueError("source_format: not used with a DataFrame source")
        elif not isinstance(source, str):
            raise ValueError(f"source: expected a table name, a path or a DataFrame, got {type(source).__name__}")
        if self._connect:
            return self._create_sql(name, source, source_format, names, col_opts, opts, if_not_exists)
        if isinstance(source, DataFrame):
            call = lambda: self._api.createOnDataFrame(source._jdf, name, names, col_opts, opts, if_not_exists)
        else:
            call = lambda: self._api.createOnTableOrPath(
                self._spark._jsparkSession, name, source, source_format, names, col_opts, opts, if_not_exists)
        return bool(self._run(name, call))

    def refresh(self, name: str, mode: str = "incremental") -> int:
        """Indexes new and changed files (``"incremental"``) or everything (``"full"``);
        returns the new log version."""
        if mode not in ("incremental", "full"):
            raise ValueError(f"mode: expected 'incremental' or 'full', got {mode!r}")
        if self._connect:
            return int(self._sql(f"REFRESH BLOOM INDEX {_ident(name)} {mode.upper()}")[0][0])
        return int(self._run(name, lambda: self._api.refresh(self._spark._jsparkSession, name, mode == "full")))

    def drop(self, name: str, if_exists: bool = False) -> bool:
        """Drops index ``name``; returns False when it did not exist and ``if_exists`` was set."""
        if self._connect:
            return bool(self._sql(f"DROP BLOOM INDEX {'IF EXISTS ' if if_exists else ''}{_ident(name)}")[0][0])
        return bool(capture(self._api.drop)(self._spark._jsparkSession, name, if_exists))

    def list(self) -> "DataFrame":
        """The indexes, as ``SHOW BLOOM INDEXES`` shows them."""
        if self._connect:
            return convert(self._spark.sql)("SHOW BLOOM INDEXES")
        from pyspark.sql import DataFrame

        return DataFrame(capture(self._api.list)(self._spark._jsparkSession), self._spark)

    def describe(self, name: str, extended: bool = False) -> dict[str, str]:
        """``DESCRIBE BLOOM INDEX`` as an ordered dict: the index as its log, summary and files
        say. ``extended=True`` (``DESCRIBE BLOOM INDEX EXTENDED``) also lists the source and adds
        ``files_new_or_changed`` and ``files_deleted`` (and, for Delta Lake, ``table_current_version``)."""
        if not isinstance(extended, bool):
            raise ValueError(f"extended must be True or False, not {extended!r}")
        if self._connect:
            return {str(r[0]): str(r[1]) for r in
                    self._sql(f"DESCRIBE BLOOM INDEX {'EXTENDED ' if extended else ''}{_ident(name)}")}
        pairs = capture(self._api.describe)(self._spark._jsparkSession, name, extended)
        return {str(p[0]): str(p[1]) for p in pairs}

    def explain(self, df: "DataFrame") -> str:
        """A readable report of what Bloom indexes do to ``df``: per scan the index used, files
        kept/total and bytes skipped, and for each index that did not apply, why; per join
        pre-filter the index, column and key it checks, and why a join got none.

        On Spark Connect: ``EXPLAIN BLOOM INDEX FOR SELECT * FROM <a temporary view of df>``."""
        if self._connect:
            return self._with_view(
                df, lambda view: str(self._sql(f"EXPLAIN BLOOM INDEX FOR SELECT * FROM {view}")[0][0]))
        return str(capture(self._api.explain)(df._jdf))

    def prefilter(self, df: "DataFrame", key: "str | Column", index: str, column: str,
                  *, allow_stale: bool = False) -> "DataFrame":
        """``df`` without the rows whose ``key`` is certainly absent from the global filter of
        ``column`` in ``index`` (null keys are dropped too): a join pre-filter by hand.

        Refused (``AnalysisException``) when the index does not hold every current file of its
        source as it is now, since rows matching the new files' values would be dropped;
        ``allow_stale=True`` uses the filter anyway.

        >>> orders = bi.prefilter(spark.table("orders"), "user_id", "users_idx", "id")  # doctest: +SKIP
        """
        return df.filter(might_contain(index, column, key, allow_stale=allow_stale))

    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[dict[str, int]]:  # `list` is a method here
        """The metrics of each Bloom filter operator of ``df``'s executed plan (run an action
        first): ``numInputRows``, ``numOutputRows``, ``filterTime`` (ns).

        On Spark Connect: the plan metrics the server sent with ``df``'s last action
        (``df.executionInfo``); ``ValueError`` when no action ran on ``df``."""
        if self._connect:
            return _connect_join_filter_metrics(df)
        return [{str(k): int(v) for k, v in m.items()} for m in self._api.joinFilterMetrics(df._jdf)]

    def _sql(self, statement: str) -> builtins.list[Any]:
        """A statement's rows on a Connect session, with bloomindex's exception classes."""
        return convert(lambda: self._spark.sql(statement).collect())()

    def _with_view(self, df: "DataFrame", use: Callable[[str], Any]) -> Any:
        """``use(view)`` with ``df`` as a temporary view of a fresh name, dropped afterwards.
        ``df``'s execution info (its last action's metrics) is kept: registering the view
        replaces it on Connect."""
        view = f"_bloomindex_{uuid.uuid4().hex}"
        info = getattr(df, "_execution_info", None)
        convert(df.createOrReplaceTempView)(view)
        try:
            return use(view)
        finally:
            self._spark.catalog.dropTempView(view)
            if hasattr(df, "_execution_info"):
                df._execution_info = info

    def _create_sql(self, name: str, source: "str | DataFrame", source_format: str | None,
                    names: builtins.list[str], col_opts: Mapping[str, Mapping[str, str]],
                    opts: Mapping[str, str], if_not_exists: bool) -> bool:
        """``create`` on a Connect session: ``CREATE BLOOM INDEX ... ON`` the table, ``LOCATION
        'path' USING format`` for a path, ``VIEW`` (a temporary one) for a DataFrame."""
        cols = ", ".join(_ident(c) + (f" OPTIONS ({_options(col_opts[c])})" if col_opts.get(c) else "")
                         for c in names)
        head = f"CREATE BLOOM INDEX {'IF NOT EXISTS ' if if_not_exists else ''}{_ident(name)} ON "
        tail = f" FOR COLUMNS ({cols})" + (f" OPTIONS ({_options(opts)})" if opts else "")
        if isinstance(source, str):
            if source_format is not None:
                target = f"LOCATION {_literal(source)} USING {_ident(source_format)}"
            else:
                target = _table_name(self._spark, source)
            return bool(self._sql(head + target + tail)[0][0])
        return bool(self._with_view(source, lambda view: self._sql(f"{head}VIEW {view}{tail}")[0][0]))

    def _run(self, name: str, call):
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


def might_contain(index: str, column: str, key: "str | Column", *, allow_stale: bool = False) -> "Column":
    """The SQL function ``bloom_might_contain('<index>', '<column>', key)`` as a Column: true
    when ``key`` may be in the index's global filter of ``column``, false when it certainly is
    not, null for a null key.

    The filter must hold every value of the column as this session reads the source: refused
    (``AnalysisException``) when files were added or changed since the index's last refresh
    (unless ``allow_stale=True``), or when the session decodes the column otherwise than the
    build did (another time zone for a CSV timestamp, say).

    >>> df.filter(might_contain("users_idx", "id", "user_id"))   # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    if not isinstance(index, str) or not isinstance(column, str):
        raise ValueError("might_contain: index and column must be names (str)")
    if not isinstance(allow_stale, bool):
        raise ValueError(f"might_contain: allow_stale must be True or False, got {allow_stale!r}")
    k = F.col(key) if isinstance(key, str) else key
    args = [F.lit(index), F.lit(column), k] + ([F.lit(True)] if allow_stale else [])
    return F.call_function("bloom_might_contain", *args)


def _ident(name: str) -> str:
    """``name`` as one quoted SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def _literal(value: str) -> str:
    """``value`` as a SQL string literal (bloomindex's lexer: backslash escapes the next character)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _options(options: Mapping[str, str]) -> str:
    return ", ".join(f"{_literal(k)} = {_literal(v)}" for k, v in options.items())


# A table name as SQL spells it: dot-separated parts, each a word or a `quoted` identifier.
_PART = r"(?:\w+|`(?:[^`]|``)*`)"  # \w: Unicode letters and digits, as the lexers read words
_TABLE_NAME = re.compile(rf"\s*{_PART}(?:\s*\.\s*{_PART})*\s*")


def _table_name(spark: "SparkSession", source: str) -> str:
    """``source`` (a table name, as the classic API parses it) for a statement on a Connect
    session. A string that is not a table name is given to Spark's parser on the server (as
    ``spark.table`` does), which raises the ParseException the classic API raises."""
    if _TABLE_NAME.fullmatch(source):
        return source
    convert(lambda: spark.table(source).schema)()
    raise ValueError(f"source: not a table name: {source!r}")


def _connect_join_filter_metrics(df: "DataFrame") -> builtins.list[dict[str, int]]:
    """The Bloom filter operators' metrics in the plan metrics of ``df``'s last action on Connect."""
    info = df.executionInfo
    metrics = info.metrics if info is not None else None
    if metrics is None:
        raise ValueError("join_filter_metrics: run an action on this DataFrame first (collect(), toPandas() ...): "
                         "a Spark Connect client gets the plan's metrics with the action's results")
    # The plan's nodes in the order of the classic API (pre-order, children in plan order): the
    # list is sorted by parent, stably, so siblings keep their order.
    nodes = builtins.list(metrics._metrics)
    ids = {m.plan_id for m in nodes}
    children: dict[int, builtins.list[Any]] = {}
    for m in nodes:
        children.setdefault(m.parent_plan_id, []).append(m)
    out: builtins.list[dict[str, int]] = []
    # The root is its own parent; a node whose parent is not listed starts a tree too.
    roots = [m for m in nodes if m.parent_plan_id == m.plan_id or m.parent_plan_id not in ids]
    stack, seen = builtins.list(reversed(roots)), set()
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        if m.name == _FILTER_NODE:
            out.append({str(v.name): int(v.value) for v in m.metrics})
        stack.extend(reversed([c for c in children.get(m.plan_id, []) if c is not m]))
    # Nodes the walk did not reach (ids are the plan's node ids; a query stage's is its stage id).
    out.extend({str(v.name): int(v.value) for v in m.metrics} for m in nodes
               if m.name == _FILTER_NODE and id(m) not in seen)
    return out


#: The node name of the JVM's BloomFilterExec in a plan's metrics.
_FILTER_NODE = "BloomFilter"


def _opt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
