"""Bloom indexes from Python: the same JVM code as the SQL statements underneath.

Two backends behind :class:`BloomIndex`, one chosen when it is built: on a classic session the
calls go through py4j to the jar's facade (``bloomindex.api.IndexApi``, :mod:`bloomindex._classic`);
on a Spark Connect session (``pyspark-client``, no JVM here) they are bloomindex's SQL statements
and DataFrame calls, run by the server's extension (:mod:`bloomindex._connect`). The arguments
are checked, and the results made, here: results and exception classes are the same on both.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ._backend import Backend
from ._classic import ClassicBackend
from ._connect import ConnectBackend
from .session import is_connect

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
        self._backend: Backend = ConnectBackend(spark) if is_connect(spark) else ClassicBackend(spark, progress)

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

        _check_name(name)
        if isinstance(columns, Mapping):
            names = list(columns)
            col_opts = {c: {k: _opt(v) for k, v in (o or {}).items()} for c, o in columns.items()}
        elif isinstance(columns, str):
            names, col_opts = [columns], {}
        elif isinstance(columns, (builtins.list, tuple)):
            names, col_opts = builtins.list(columns), {}
        else:
            raise ValueError(f"columns: expected a column name, a list of names or a dict of name -> options, "
                             f"got {type(columns).__name__}")
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
        return bool(self._backend.create(name, source, source_format, names, col_opts, opts, if_not_exists))

    def refresh(self, name: str, mode: str = "incremental") -> int:
        """Indexes new and changed files (``"incremental"``) or everything (``"full"``);
        returns the new log version."""
        _check_name(name)
        if mode not in ("incremental", "full"):
            raise ValueError(f"mode: expected 'incremental' or 'full', got {mode!r}")
        return int(self._backend.refresh(name, mode == "full"))

    def drop(self, name: str, if_exists: bool = False) -> bool:
        """Drops index ``name``; returns False when it did not exist and ``if_exists`` was set."""
        _check_name(name)
        if not isinstance(if_exists, bool):
            raise ValueError(f"if_exists must be True or False, not {if_exists!r}")
        return bool(self._backend.drop(name, if_exists))

    def list(self) -> "DataFrame":
        """The indexes, as ``SHOW BLOOM INDEXES`` shows them."""
        return self._backend.list()

    def describe(self, name: str, extended: bool = False) -> dict[str, str]:
        """``DESCRIBE BLOOM INDEX`` as an ordered dict: the index as its log, summary and files
        say. ``extended=True`` (``DESCRIBE BLOOM INDEX EXTENDED``) also lists the source and adds
        ``files_new_or_changed`` and ``files_deleted`` (and, for Delta Lake, ``table_current_version``)."""
        _check_name(name)
        if not isinstance(extended, bool):
            raise ValueError(f"extended must be True or False, not {extended!r}")
        return {str(p[0]): str(p[1]) for p in self._backend.describe(name, extended)}

    def explain(self, df: "DataFrame") -> str:
        """A readable report of what Bloom indexes do to ``df``: per scan the index used, files
        kept/total and bytes skipped, and for each index that did not apply, why; per join
        pre-filter the index, column and key it checks, and why a join got none.

        On Spark Connect: ``EXPLAIN BLOOM INDEX FOR SELECT * FROM <a temporary view of df>``.
        For a SQL text, ``explain(spark.sql(query))`` (or SQL's ``EXPLAIN BLOOM INDEX FOR <query>``)."""
        _check_frame(df, "explain")
        return str(self._backend.explain(df))

    def prefilter(self, df: "DataFrame", key: "str | Column", index: str, column: str,
                  *, allow_stale: bool = False) -> "DataFrame":
        """``df`` without the rows whose ``key`` is certainly absent from the global filter of
        ``column`` in ``index`` (null keys are dropped too): a join pre-filter by hand.

        Refused (``AnalysisException``) when the index does not hold every current file of its
        source as it is now, since rows matching the new files' values would be dropped;
        ``allow_stale=True`` uses the filter anyway.

        >>> orders = bi.prefilter(spark.table("orders"), "user_id", "users_idx", "id")  # doctest: +SKIP
        """
        _check_frame(df, "prefilter")
        return df.filter(might_contain(index, column, key, allow_stale=allow_stale))

    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[dict[str, float]]:  # `list` is a method here
        """The metrics of each Bloom filter operator of ``df``'s executed plan (run an action
        first): ``numInputRows``, ``numOutputRows`` and ``filterTimeMs``, the time in the
        filter's checks in milliseconds (the unit Spark's UI shows it in; the SQL metric counts
        nanoseconds).

        On Spark Connect: the plan metrics the server sent with ``df``'s last action
        (``df.executionInfo``); ``ValueError`` when no action ran on ``df``."""
        _check_frame(df, "join_filter_metrics")
        return [_metrics_with_units(m) for m in self._backend.join_filter_metrics(df)]


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


def _check_name(name: Any) -> None:
    """An index name is a non-empty string (the JVM checks what it may hold)."""
    if not isinstance(name, str):
        raise ValueError(f"name: an index name must be a string, got {type(name).__name__} ({name!r})")
    if not name.strip():
        raise ValueError("name: an index name must not be empty")


def _check_frame(df: Any, method: str) -> None:
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        hint = " (spark.sql(query) makes one from SQL text)" if isinstance(df, str) else ""
        raise ValueError(f"{method}: expected a DataFrame{hint}, got {type(df).__name__}")


def _opt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _metrics_with_units(metrics: Iterable[tuple[Any, Any]]) -> dict[str, float]:
    """A Bloom filter operator's SQL metrics, its nanosecond timing as ``filterTimeMs``."""
    out: dict[str, float] = {}
    for key, value in metrics:
        if str(key) == "filterTime":
            out["filterTimeMs"] = round(int(value) / 1e6, 3)
        else:
            out[str(key)] = int(value)
    return out
