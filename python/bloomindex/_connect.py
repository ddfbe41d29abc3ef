"""The Spark Connect backend of :class:`bloomindex.BloomIndex`: no JVM here, so each operation
is one of bloomindex's SQL statements, run by the server's extension (a DataFrame goes in as a
temporary view), and the join filters' metrics come from the plan metrics the server sent."""

from __future__ import annotations

import builtins
import re
import uuid
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ._backend import HISTORY_QUERY, Backend
from .errors import convert

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ConnectBackend"]


class ConnectBackend(Backend):
    """``progress``: none of bloomindex's own here (a Connect client shows PySpark's progress
    bar); ``progress=True`` warns once per process that it has no effect."""

    def __init__(self, spark: "SparkSession", progress: "bool | str" = "auto"):
        global _PROGRESS_WARNED
        self._spark = spark
        if progress is True and not _PROGRESS_WARNED:
            _PROGRESS_WARNED = True
            warnings.warn("BloomIndex(progress=True) has no effect on a Spark Connect session: bloomindex shows "
                          "its own progress on classic sessions only (PySpark's Connect client shows its "
                          "progress bar)", UserWarning, stacklevel=3)

    def create(self, name: str, source: "str | DataFrame", source_format: str | None,
               columns: Sequence[tuple[str, str | None, Mapping[str, str]]],
               options: Mapping[str, str], if_not_exists: bool) -> Any:
        """``CREATE BLOOM INDEX ... ON`` the table, ``LOCATION 'path' USING format`` for a path,
        ``VIEW`` (a temporary one) for a DataFrame."""
        cols = ", ".join(_ident(c) + (f" USING {_using(k)}" if k else "")
                         + (f" OPTIONS ({_options(o)})" if o else "") for c, k, o in columns)
        head = f"CREATE BLOOM INDEX {'IF NOT EXISTS ' if if_not_exists else ''}{_ident(name)} ON "
        tail = f" FOR COLUMNS ({cols})" + (f" OPTIONS ({_options(options)})" if options else "")
        if isinstance(source, str):
            if source_format is not None:
                target = f"LOCATION {_literal(source)} USING {_ident(source_format)}"
            else:
                target = _table_name(self._spark, source)
            return self._sql(head + target + tail)[0][0]
        return self._with_view(source, lambda spark, view: self._sql(f"{head}VIEW {view}{tail}", spark)[0][0])

    def refresh(self, name: str, full: bool) -> Any:
        return self._sql(f"REFRESH BLOOM INDEX {_ident(name)} {'FULL' if full else 'INCREMENTAL'}")[0][0]

    def set_refresh(self, name: str, mode: str) -> Any:
        return self._sql(f"ALTER BLOOM INDEX {_ident(name)} SET OPTIONS (refresh = {_literal(mode)})")[0][0]

    def optimize(self, name: str) -> Any:
        return self._sql(f"OPTIMIZE BLOOM INDEX {_ident(name)}")[0][0]

    def vacuum(self, name: str, retain_hours: float | None) -> tuple[int, int, int]:
        retain = "" if retain_hours is None else f" RETAIN {float(retain_hours)!r} HOURS"
        row = self._sql(f"VACUUM BLOOM INDEX {_ident(name)}{retain}")[0]
        return int(row[0]), int(row[1]), int(row[2])

    def drop(self, name: str, if_exists: bool) -> Any:
        return self._sql(f"DROP BLOOM INDEX {'IF EXISTS ' if if_exists else ''}{_ident(name)}")[0][0]

    def list(self) -> "DataFrame":
        return convert(self._spark.sql)("SHOW BLOOM INDEXES")

    def history(self) -> "DataFrame":
        return convert(self._spark.sql)(HISTORY_QUERY)

    def sql_frame(self, statement: str) -> "DataFrame":
        return convert(self._spark.sql)(statement)

    def describe(self, name: str, extended: bool) -> Iterable[Sequence[Any]]:
        return self._sql(f"DESCRIBE BLOOM INDEX {'EXTENDED ' if extended else ''}{_ident(name)}")

    def explain(self, df: "DataFrame") -> Any:
        """``EXPLAIN BLOOM INDEX FOR SELECT * FROM <a temporary view of df>``."""
        return self._with_view(df, lambda spark, view: self._sql(f"EXPLAIN BLOOM INDEX FOR SELECT * FROM {view}",
                                                                  spark)[0][0])

    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[Iterable[tuple[Any, Any]]]:
        """The Bloom filter operators' metrics in the plan metrics of ``df``'s last action."""
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
        out: builtins.list[Iterable[tuple[Any, Any]]] = []
        # The root is its own parent; a node whose parent is not listed starts a tree too.
        roots = [m for m in nodes if m.parent_plan_id == m.plan_id or m.parent_plan_id not in ids]
        stack, seen = builtins.list(reversed(roots)), set()
        while stack:
            m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            if m.name == _FILTER_NODE:
                out.append([(v.name, v.value) for v in m.metrics])
            stack.extend(reversed([c for c in children.get(m.plan_id, []) if c is not m]))
        # Nodes the walk did not reach (ids are the plan's node ids; a query stage's is its stage id).
        out.extend([(v.name, v.value) for v in m.metrics] for m in nodes
                   if m.name == _FILTER_NODE and id(m) not in seen)
        return out

    def _sql(self, statement: str, spark: "SparkSession | None" = None) -> builtins.list[Any]:
        """A statement's rows (in ``spark``, by default this backend's session), with
        bloomindex's exception classes."""
        session = self._spark if spark is None else spark
        return convert(lambda: session.sql(statement).collect())()

    def _with_view(self, df: "DataFrame", use: "Callable[[SparkSession, str], Any]") -> Any:
        """``use(session, view)`` with ``df`` as a temporary view of a fresh name in ``df``'s
        session (the one a statement reading the view must run in, as the classic API uses
        ``df.sparkSession``), dropped afterwards. ``df``'s execution info (its last action's
        metrics) is kept: registering the view replaces it on Connect."""
        view = f"_bloomindex_{uuid.uuid4().hex}"
        session = df.sparkSession
        info = getattr(df, "_execution_info", None)
        convert(df.createOrReplaceTempView)(view)
        try:
            return use(session, view)
        finally:
            session.catalog.dropTempView(view)
            if hasattr(df, "_execution_info"):
                df._execution_info = info


#: Whether ``progress=True`` on a Connect session has been warned about (once per process).
_PROGRESS_WARNED = False

#: The node name of the JVM's BloomFilterExec in a plan's metrics.
_FILTER_NODE = "BloomFilter"


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


def _using(kind: str) -> str:
    """A text filter's kind ("tokens", "ngrams(3)") as SQL writes it after USING."""
    if kind == "tokens":
        return "TOKENS"
    n = kind[len("ngrams("):-1]
    if not (kind.startswith("ngrams(") and kind.endswith(")") and n.isdigit()):
        raise ValueError(f"create: a text column's kind: expected 'tokens' or 'ngrams(n)', got {kind!r}")
    return f"NGRAMS ({n})"
