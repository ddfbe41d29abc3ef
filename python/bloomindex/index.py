"""Bloom indexes from Python: the same JVM code as the SQL statements underneath.

Two backends behind :class:`BloomIndex`, one chosen when it is built: on a classic session the
calls go through py4j to the jar's facade (``bloomindex.api.IndexApi``, :mod:`bloomindex._classic`);
on a Spark Connect session (``pyspark-client``, no JVM here) they are bloomindex's SQL statements
and DataFrame calls, run by the server's extension (:mod:`bloomindex._connect`). The arguments
are checked, and the results made, here: results and exception classes are the same on both.
"""

from __future__ import annotations

import builtins
import dataclasses
import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ._backend import (ArgumentTypeError, Backend, check_bool, check_number, check_str, ident, recommend_statement,
                       type_name, what_if_statement, wrong_type)
from ._classic import ClassicBackend
from ._connect import ConnectBackend
from .plot import plot_recommendations
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
    ``progress`` is how ``create`` and ``refresh`` show a long build's progress on stderr (tasks
    done out of total, bytes read, time left), on classic sessions: ``"auto"`` (the default)
    where stderr is a terminal and Spark's own console progress bar is off, ``True`` always (a
    start and an end line where stderr is not a terminal or Spark's bar is on), ``False``
    never. A Connect client shows PySpark's own progress bar instead; ``progress=True`` there
    warns once that bloomindex shows none.

    Every method checks its arguments before any JVM call or SQL statement: ``TypeError`` for
    a wrong type, ``ValueError`` for a wrong value, each naming the argument and what it
    accepts, the same on classic and Connect sessions.
    """

    def __init__(self, spark: "SparkSession", progress: "bool | str" = "auto"):
        _check_session(spark, "BloomIndex")
        _check_progress(progress)
        self._backend: Backend = (ConnectBackend(spark, progress) if is_connect(spark)
                                  else ClassicBackend(spark, progress))

    def create(
        self,
        name: str,
        source: "str | DataFrame",
        columns: "Sequence[str | TextColumn] | Mapping[str | TextColumn, Mapping[str, Any]]",
        fpp: "float | str | None" = None,
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
        ``algorithm``). ``fpp``, ``ndv`` and ``algorithm`` are defaults for every column. ``fpp``
        is a rate in (0, 1) or ``"auto"`` (the default, ``spark.bloomindex.fpp.default``): each
        build chooses the column's rate from its files and workload (docs/sql.md). A
        column given as :func:`tokens` or :func:`ngrams` gets a text filter (``LIKE '%x%'``,
        ``contains``, ``startswith``, ``endswith``, ``ILIKE``, ``RLIKE``, ``=``, ``IN``); one
        column may carry an equality filter and text filters at once.

        ``algorithm`` is the Bloom filter design: ``"sbbf"`` (Parquet's split block filter, the
        default), ``"sbbf-murmur3"`` (its deprecated MurmurHash3 predecessor) or ``"classic"``
        (m bits, k hash functions); see :mod:`bloomindex.filters`.

        ``global_filter=True`` also builds, per column, one filter of the whole source (SQL's
        ``OPTIONS (global = true)``): the filter join pre-filters and :func:`might_contain` use.

        ``options`` are the other index options, as SQL's ``OPTIONS``: ``sizing="exact"`` (the
        default: each filter the smallest meeting its ``fpp``) or ``"power-of-two"``, a default
        for every column; ``refresh="on_write"`` (the default, ``spark.bloomindex.refresh.default``),
        ``"background"`` or ``"manual"``: how the index follows writes to its source
        (docs/freshness.md); ``allow_unencrypted_index=True`` stores the index unencrypted when
        source columns are encrypted (Parquet modular encryption) and the session cannot
        encrypt it (otherwise refused). The JVM refuses unknown names.
        """
        w = "create"
        _check_name(name, w)
        if not _is_frame(source):
            check_str(w, "source", source, "a table name, a path (str) or a DataFrame")
        check_str(w, "source_format", source_format, "a str (a data source such as 'parquet')", optional=True)
        if _is_frame(source) and source_format is not None:
            raise ValueError("create: source_format: not used with a DataFrame source")
        entries = _columns(columns)
        if isinstance(fpp, str):
            if fpp.strip().lower() != "auto":
                raise ArgumentTypeError(f"{wrong_type(w, 'fpp', 'a number (float or int)', fpp)} "
                                        "(the one str taken is 'auto')")
        elif fpp is not None:
            check_number(w, "fpp", fpp)
        if ndv is not None:
            check_number(w, "ndv", ndv, integer=True)
        check_str(w, "algorithm", algorithm, "a str ('sbbf', 'sbbf-murmur3' or 'classic')", optional=True)
        check_bool(w, "global_filter", global_filter)
        check_bool(w, "if_not_exists", if_not_exists)
        for key, value in options.items():
            if key.lower() in ("global", "global_"):
                raise ValueError(f"{key}: not an option here; pass global_filter=True")
            _check_option(w, key, value)
        opts = {k: _opt(v) for k, v in options.items()}
        if fpp is not None:
            opts["fpp"] = _opt(fpp)
        if ndv is not None:
            opts["ndv"] = _opt(ndv)
        if algorithm is not None:
            opts["algorithm"] = _opt(algorithm)
        if global_filter:
            opts["global"] = _opt(global_filter)
        _check_once(w, opts)
        return bool(self._backend.create(name, source, source_format, entries, opts, if_not_exists))

    def refresh(self, name: str, mode: str = "incremental") -> int:
        """Indexes new and changed files (``"incremental"``) or everything (``"full"``; either in
        any case, as in SQL); returns the new log version."""
        _check_name(name, "refresh")
        if not isinstance(mode, str):
            raise wrong_type("refresh", "mode", "'incremental' or 'full' (a str)", mode)
        # Case aside, as SQL takes REFRESH's and the options' words.
        if mode.lower() not in ("incremental", "full"):
            raise ValueError(f"refresh: mode: expected 'incremental' or 'full', got {mode!r}")
        return int(self._backend.refresh(name, mode.lower() == "full"))

    def set_refresh(self, name: str, mode: str) -> int:
        """How index ``name`` follows its source's writes from now on: ``"on_write"``,
        ``"background"`` or ``"manual"``, in any case (SQL: ``ALTER BLOOM INDEX name SET OPTIONS
        (refresh = ...)``); returns the new log version. Nothing is rebuilt."""
        _check_name(name, "set_refresh")
        if not isinstance(mode, str):
            raise wrong_type("set_refresh", "mode", "'on_write', 'background' or 'manual' (a str)", mode)
        if mode.lower() not in ("on_write", "background", "manual"):
            raise ValueError(f"set_refresh: mode: expected 'on_write', 'background' or 'manual', got {mode!r}")
        return int(self._backend.set_refresh(name, mode.lower()))

    def optimize(self, name: str) -> int:
        """Rewrites each column's small probe files together into few (SQL: ``OPTIMIZE BLOOM
        INDEX name``), taking in what an incremental refresh would; returns the log version after
        it (the same one when the index was current and compact already)."""
        _check_name(name, "optimize")
        return int(self._backend.optimize(name))

    def vacuum(self, name: str, retain_hours: float | None = None) -> dict[str, int]:
        """Deletes the index data that neither the live version nor a version replaced less than
        ``retain_hours`` ago reads (SQL: ``VACUUM BLOOM INDEX name [RETAIN n HOURS]``; default
        ``spark.bloomindex.vacuum.retention``), and the log entries before a version replaced
        longer ago than that; returns ``{"folders_deleted": n, "bytes_deleted": b,
        "log_entries_deleted": e}``."""
        _check_name(name, "vacuum")
        if retain_hours is not None:
            if isinstance(retain_hours, bool) or not isinstance(retain_hours, (int, float)):
                raise wrong_type("vacuum", "retain_hours", "a number of hours (an int or float) or None", retain_hours)
            if not math.isfinite(retain_hours) or retain_hours < 0:
                raise ValueError(f"vacuum: retain_hours: expected 0 or more hours, got {retain_hours!r}")
        folders, freed, entries = self._backend.vacuum(name, retain_hours)
        return {"folders_deleted": folders, "bytes_deleted": freed, "log_entries_deleted": entries}

    def drop(self, name: str, if_exists: bool = False) -> bool:
        """Drops index ``name``; returns False when it did not exist and ``if_exists`` was set."""
        _check_name(name, "drop")
        check_bool("drop", "if_exists", if_exists)
        return bool(self._backend.drop(name, if_exists))

    def list(self) -> "DataFrame":
        """The indexes, as ``SHOW BLOOM INDEXES`` shows them."""
        return self._backend.list()

    def history(self) -> "DataFrame":
        """The workload history: one row per scan of an indexable source the session's queries
        planned with a filter (``spark.bloomindex.history.enabled``), oldest first, as
        ``SELECT * FROM bloom_index_history()`` shows it: the source, the columns under ``=``,
        ``IN``, ``<=>`` and ``IS NULL`` with their number of values (never the values), files
        listed and read, bytes read, the index that answered and the query's wall time."""
        return self._backend.history()

    def recommend(self, source: str | None = None, *, query: str | None = None,
                  budget: "int | str | None" = None, source_format: str | None = None) -> "DataFrame":
        """``RECOMMEND BLOOM INDEXES``: which indexes to create (and drop), from the workload
        history (``query=None``) or from one SQL ``query``, and from the data. ``source``: a
        table name, or a path with ``source_format`` (None: every source of the workload);
        ``budget``: the most bytes the recommended indexes may take (an int, or a size such as
        ``"512m"``). One row per recommendation: ``kind`` (``create``, ``drop``, ``change_fpp``,
        ``candidate``: a column looked at and not recommended), ``source``, ``index_name``,
        ``columns``, ``fpp`` per column, ``queries``, files and bytes skipped per query and in
        total, ``index_bytes``, ``build_bytes_read``, ``build_reads``, ``statement`` (the SQL
        to run) and ``reason``. See docs/advisor.md.

        >>> bi.recommend("orders", budget="64m").select("kind", "columns", "statement").show()  # doctest: +SKIP
        """
        check_str("recommend", "source", source, optional=True)
        check_str("recommend", "query", query, optional=True)
        check_str("recommend", "source_format", source_format, optional=True)
        size = _budget("recommend", budget)
        if source_format is not None and source is None:
            raise ValueError("recommend: source_format needs a source (the path)")
        target = None
        if source is not None:
            if source_format is not None:
                target = f"{ident(source_format)}.{ident(source)}"
            elif _SQL_TABLE_NAME.fullmatch(source):
                target = source
            else:
                raise ValueError(f"recommend: source: not a table name: {source!r} (for a path, give source_format)")
        statement = recommend_statement(target, query, size)
        return self._backend.sql_frame(statement)

    def what_if(self, columns: "str | Sequence[str]", query: str, *, fpp: float | None = None) -> "DataFrame":
        """``EXPLAIN BLOOM INDEX WHATIF``: per scan of ``query`` with a filter, the files an
        index on ``columns`` (at ``fpp``, default ``spark.bloomindex.fpp.default``) would keep,
        estimated from the data without building it: ``files_listed``, ``files_kept`` and its
        range (``files_kept_low``, ``files_kept_high``), ``files_holding`` (files holding the
        values looked up), ``files_sampled`` and ``method``."""
        cols = [columns] if isinstance(columns, str) else columns
        if isinstance(cols, (bytes, Mapping)) or not isinstance(cols, Sequence):
            raise wrong_type("what_if", "columns", "a str or a sequence of str", columns)
        if not cols:
            raise ValueError("what_if: columns must name at least one column")
        for c in cols:
            check_str("what_if", "columns", c, "a str or a sequence of str")
        check_str("what_if", "query", query)
        if fpp is not None:
            check_number("what_if", "fpp", fpp)
            if not 0 < fpp < 1:
                raise ValueError(f"what_if: fpp must be in (0, 1), got {fpp!r}")
        statement = what_if_statement(builtins.list(cols), fpp, query)
        return self._backend.sql_frame(statement)

    @staticmethod
    def plot_recommendations(recommendations: "DataFrame", ax: Any = None) -> Any:
        """A scatter plot of the expected bytes skipped over the workload against the index
        size, one point per ``create`` and ``candidate`` row of :meth:`recommend` (the columns
        as labels); needs matplotlib (``pip install bloomindex[plot]``). Returns the axes."""
        return plot_recommendations(recommendations, ax)

    def describe(self, name: str, extended: bool = False) -> dict[str, str]:
        """``DESCRIBE BLOOM INDEX`` as an ordered dict: the index as its log, summary and files
        say. ``extended=True`` (``DESCRIBE BLOOM INDEX EXTENDED``) also lists the source and adds
        ``files_new_or_changed`` and ``files_deleted`` (and, for Delta Lake, ``table_current_version``)."""
        _check_name(name, "describe")
        check_bool("describe", "extended", extended)
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
        _check_might_contain("prefilter", index, column, key, allow_stale)
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

    _check_might_contain("might_contain", index, column, key, allow_stale)
    k = F.col(key) if isinstance(key, str) else key
    args = [F.lit(index), F.lit(column), k] + ([F.lit(True)] if allow_stale else [])
    return F.call_function("bloom_might_contain", *args)


def _check_name(name: Any, where: str) -> None:
    """An index name is a non-empty string (the JVM checks what it may hold)."""
    check_str(where, "name", name, "a str (an index name)")


def _is_frame(value: Any) -> bool:
    from pyspark.sql import DataFrame

    return isinstance(value, DataFrame)


def _check_frame(df: Any, method: str) -> None:
    if not _is_frame(df):
        hint = " (spark.sql(query) makes one from SQL text)" if isinstance(df, str) else ""
        raise ArgumentTypeError(f"{method}: df must be a DataFrame{hint}, got {type_name(df)}")


def _check_session(spark: Any, where: str) -> None:
    """A classic SparkSession or a Spark Connect one (not its builder, not a SparkContext)."""
    from pyspark.sql import SparkSession

    if isinstance(spark, SparkSession) or (is_connect(spark) and type(spark).__name__ == "SparkSession"):
        return
    hint = " (call getOrCreate() on it)" if type(spark).__name__ == "Builder" else ""
    raise wrong_type(where, "spark", f"a SparkSession, classic or Spark Connect{hint}", spark)


def _check_progress(progress: Any) -> None:
    if isinstance(progress, bool):
        return
    if not isinstance(progress, str):
        raise wrong_type("BloomIndex", "progress", "'auto', True or False", progress)
    if progress != "auto":
        raise ValueError(f"BloomIndex: progress must be 'auto', True or False, got {progress!r}")


def _check_might_contain(where: str, index: Any, column: Any, key: Any, allow_stale: Any) -> None:
    from pyspark.sql import Column

    check_str(where, "index", index, "a str (index and column are names)")
    check_str(where, "column", column, "a str (index and column are names)")
    if not isinstance(key, Column):
        check_str(where, "key", key, "a column name (str) or a Column")
    check_bool(where, "allow_stale", allow_stale)


_OPTION_TYPES = "a str, int, float or bool"


def _check_option(where: str, key: Any, value: Any) -> None:
    if not isinstance(key, str):
        raise wrong_type(where, "an option's name", "a str", key)
    if not isinstance(value, (str, int, float)):  # bool is an int
        raise ArgumentTypeError(f"{where}: option {key} must be {_OPTION_TYPES}, got {type_name(value)}")


def _check_once(where: str, names: Iterable[str]) -> None:
    """No option name twice in two spellings: names ignore case (the JVM lower-cases them and
    keeps one of the values, SQL's OPTIONS refuses the statement), so ``fpp=0.01, FPP=0.5`` is
    a ValueError naming both."""
    seen: dict[str, str] = {}
    for name in names:
        first = seen.setdefault(name.lower(), name)
        if first != name:
            raise ValueError(f"{where}: option {name.lower()!r} is given twice, as {first!r} and {name!r} "
                             "(option names ignore case)")


@dataclasses.dataclass(frozen=True)
class TextColumn:
    """A text filter on a string column, for :meth:`BloomIndex.create`'s ``columns``: made by
    :func:`tokens` or :func:`ngrams` (SQL's ``column USING TOKENS`` / ``USING NGRAMS (n)``)."""

    name: str
    kind: str  # "tokens" or "ngrams(n)"
    options: tuple[tuple[str, str], ...] = ()

    def sql(self) -> str:
        """The kind as SQL writes it after USING."""
        return "TOKENS" if self.kind == "tokens" else "NGRAMS (" + self.kind[len("ngrams("):-1] + ")"


def _text_options(where: str, case: Any, extra: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    opts: dict[str, Any] = dict(extra)
    if case is not None:
        check_str(where, "case", case, "'none' or 'lower'")
        if case.lower() not in ("none", "lower"):
            raise ValueError(f"{where}: case: expected 'none' or 'lower', got {case!r}")
        opts["case"] = case
    for k, v in opts.items():
        _check_option(where, k, v)
    _check_once(where, opts)
    return tuple((k, _opt(v)) for k, v in opts.items())


def tokens(column: str, *, case: str | None = None, separators: str | None = None,
           **options: str | int | float | bool) -> TextColumn:
    """A token filter on string ``column``: ``LIKE``, ``contains``, ``startswith``, ``endswith``,
    ``RLIKE``, ``=`` and ``IN`` prune on the words a pattern bounds on both sides by a separator
    or the value's edge. ``case="lower"`` also lets ``ILIKE`` and ``lower(c)`` predicates prune;
    ``separators`` are the separator characters (default: every character that is not a letter
    or digit); ``options`` are the column options (``fpp``, ``ndv``, ``sizing``, ``algorithm``).

    >>> BloomIndex(spark).create("logs_idx", "logs", ["trace_id", tokens("message", case="lower")])  # doctest: +SKIP
    """
    check_str("tokens", "column", column, "a column name (str)")
    extra: dict[str, Any] = dict(options)
    if separators is not None:
        check_str("tokens", "separators", separators, "a str of separator characters")
        extra["separators"] = separators
    return TextColumn(column, "tokens", _text_options("tokens", case, extra))


def ngrams(column: str, n: int, *, case: str | None = None, **options: str | int | float | bool) -> TextColumn:
    """An n-gram filter on string ``column``: the predicates :func:`tokens` names prune on every
    literal run of ``n`` or more characters of a pattern (``LIKE '%abc%'`` with ``n=3``).
    ``case`` and ``options`` as for :func:`tokens`."""
    check_str("ngrams", "column", column, "a column name (str)")
    check_number("ngrams", "n", n, integer=True)
    if not 1 <= n <= 16:
        raise ValueError(f"ngrams: n: expected a whole number in [1, 16], got {n!r}")
    return TextColumn(column, f"ngrams({int(n)})", _text_options("ngrams", case, options))


_Entry = tuple[str, "str | None", dict[str, str]]


def _columns(columns: Any) -> builtins.list[_Entry]:
    """``create``'s ``columns``: per filter, the column's name, its kind (None: an equality
    filter; "tokens" or "ngrams(n)") and its options as strings."""
    accepts = "a column name, a list of names or text columns, or a dict of them -> options"
    if isinstance(columns, Mapping):
        names = builtins.list(columns)
    elif isinstance(columns, (str, TextColumn)):
        names = [columns]
    elif isinstance(columns, (builtins.list, tuple)):
        names = builtins.list(columns)
    else:
        raise ArgumentTypeError(f"create: columns: expected {accepts}, got {type_name(columns)}")
    if not names:
        raise ValueError(f"create: columns: expected column names, got {columns!r}")
    for c in names:
        if isinstance(c, TextColumn):
            continue
        if not isinstance(c, str):
            raise ArgumentTypeError(f"create: columns: expected column names (str) or tokens(...) / ngrams(...), "
                                    f"got {type_name(c)} in {columns!r}")
        if not c.strip():
            raise ValueError(f"create: columns: expected column names, got an empty one in {columns!r}")
    entries: builtins.list[_Entry] = []
    for c in names:
        own: dict[str, str] = dict(c.options) if isinstance(c, TextColumn) else {}
        if isinstance(columns, Mapping):
            o = columns[c]
            if o is None:
                o = {}
            if not isinstance(o, Mapping):
                raise ArgumentTypeError(f"create: columns: the options of column {c} must be a dict "
                                        f"(e.g. {{'fpp': 0.01}}) or None, got {type_name(o)}")
            for k, v in o.items():
                _check_option(f"create: columns: column {c}", k, v)
            own.update({k: _opt(v) for k, v in o.items()})
            _check_once(f"create: columns: column {c.name if isinstance(c, TextColumn) else c}", own)
        if isinstance(c, TextColumn):
            entries.append((c.name, c.kind, own))
        else:
            entries.append((c, None, own))
    return entries


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


# A table name as SQL spells it: dot-separated parts, each a word or a `quoted` identifier.
_SQL_TABLE_NAME = re.compile(r"\s*(?:\w+|`(?:[^`]|``)*`)(?:\s*\.\s*(?:\w+|`(?:[^`]|``)*`))*\s*")
# As Spark's JavaUtils.byteStringAsBytes reads it: spaces around, none between number and unit.
_SIZE = re.compile(r"\s*\d+(?:b|k|kb|m|mb|g|gb|t|tb|p|pb)?\s*", re.IGNORECASE)


def _budget(where: str, budget: Any) -> str | None:
    """A storage budget as RECOMMEND's BUDGET takes it: bytes (an int > 0) or a size ("512m")."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, str)):
        raise wrong_type(where, "budget", "an int (bytes), a size such as '512m', or None", budget)
    if isinstance(budget, int):
        if budget <= 0:
            raise ValueError(f"{where}: budget must be > 0 bytes, got {budget}")
        return str(budget)
    if not _SIZE.fullmatch(budget) or int(re.sub(r"\D", "", budget)) <= 0:
        raise ValueError(f"{where}: budget must be a size such as '512m', '2g' or a number of bytes, got {budget!r}")
    return budget.strip()
