"""What a backend of :class:`bloomindex.BloomIndex` implements.

:class:`BloomIndex` checks and normalizes the arguments, picks one backend when it is built
(:mod:`bloomindex._classic` on a classic session, :mod:`bloomindex._connect` on a Spark
Connect one) and turns what the backend returns into its Python results (``bool``, ``int``,
``str``, dicts). A backend runs the operation and raises bloomindex's exception classes
(:mod:`bloomindex.errors`).
"""

from __future__ import annotations

import abc
import builtins
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["Backend", "ArgumentTypeError"]


class Backend(abc.ABC):
    """One session's way of running :class:`bloomindex.BloomIndex`'s operations.

    Values come back as the engine gives them (a JVM boolean, a result row's field): the
    caller converts them.
    """

    @abc.abstractmethod
    def create(self, name: str, source: "str | DataFrame", source_format: str | None,
               columns: Sequence[tuple[str, str | None, Mapping[str, str]]],
               options: Mapping[str, str], if_not_exists: bool) -> Any:
        """Creates and builds the index (the arguments checked already; ``source_format`` only
        with a path); true when it was created, false when it existed (``if_not_exists``).
        ``columns``: per filter, the column, its kind (None, "tokens" or "ngrams(n)") and options."""

    @abc.abstractmethod
    def refresh(self, name: str, full: bool) -> Any:
        """Refreshes the index (everything when ``full``); the new log version."""

    @abc.abstractmethod
    def set_refresh(self, name: str, mode: str) -> Any:
        """``ALTER BLOOM INDEX name SET OPTIONS (refresh = mode)``; the new log version."""

    @abc.abstractmethod
    def optimize(self, name: str) -> Any:
        """``OPTIMIZE BLOOM INDEX name``; the log version after it."""

    @abc.abstractmethod
    def vacuum(self, name: str, retain_hours: float | None) -> tuple[int, int, int]:
        """``VACUUM BLOOM INDEX name [RETAIN n HOURS]``; (folders deleted, bytes deleted, log entries deleted)."""

    @abc.abstractmethod
    def drop(self, name: str, if_exists: bool) -> Any:
        """Drops the index; false when it did not exist and ``if_exists`` was set."""

    @abc.abstractmethod
    def list(self) -> "DataFrame":
        """The indexes, as ``SHOW BLOOM INDEXES`` shows them."""

    @abc.abstractmethod
    def history(self) -> "DataFrame":
        """The workload history, ``SELECT * FROM bloom_index_history()``."""

    @abc.abstractmethod
    def describe(self, name: str, extended: bool) -> Iterable[Sequence[Any]]:
        """``DESCRIBE BLOOM INDEX``'s (key, value) pairs, in order."""

    @abc.abstractmethod
    def explain(self, df: "DataFrame") -> Any:
        """``EXPLAIN BLOOM INDEX``'s report on ``df``."""

    @abc.abstractmethod
    def join_filter_metrics(self, df: "DataFrame") -> builtins.list[Iterable[tuple[Any, Any]]]:
        """Per Bloom filter operator of ``df``'s executed plan, in plan order (pre-order), its
        metrics as (name, value) pairs."""


    @abc.abstractmethod
    def sql_frame(self, statement: str) -> "DataFrame":
        """The rows of one of bloomindex's statements (RECOMMEND, EXPLAIN ... WHATIF) as a
        DataFrame: both backends run the statement through SQL."""


# The workload history's table function (bloomindex.history.HistoryFunction on the JVM): both
# backends read it through SQL, a classic session as a Connect one.
HISTORY_QUERY = "SELECT * FROM bloom_index_history()"


def ident(name: str) -> str:
    """``name`` as one quoted SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def literal(value: str) -> str:
    """``value`` as a SQL string literal (bloomindex's lexer: backslash escapes the next character)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def recommend_statement(source: str | None, query: str | None, budget: str | None) -> str:
    """``RECOMMEND BLOOM INDEXES [ON source] [BUDGET 'size'] [FOR query | FROM HISTORY]``;
    ``source`` is SQL already (a table name or format.`path`)."""
    out = "RECOMMEND BLOOM INDEXES"
    if source is not None:
        out += f" ON {source}"
    if budget is not None:
        out += f" BUDGET {literal(budget)}"
    return out + (f" FOR {query}" if query is not None else " FROM HISTORY")


def what_if_statement(columns: Sequence[str], fpp: float | None, query: str) -> str:
    """``EXPLAIN BLOOM INDEX WHATIF (columns) [OPTIONS (fpp = x)] FOR query``."""
    cols = ", ".join(ident(c) for c in columns)
    opts = f" OPTIONS (fpp = {float(fpp)!r})" if fpp is not None else ""
    return f"EXPLAIN BLOOM INDEX WHATIF ({cols}){opts} FOR {query}"


class ArgumentTypeError(TypeError):
    """An argument of the wrong type, raised before any JVM call or SQL statement.

    A plain :class:`TypeError` (not a :class:`ValueError`: that is for a wrong value of the
    right type)."""


def type_name(value: Any) -> str:
    return type(value).__name__


def wrong_type(where: str, arg: str, accepts: str, value: Any) -> ArgumentTypeError:
    """``<where>: <arg> must be <accepts>, got <type>``."""
    return ArgumentTypeError(f"{where}: {arg} must be {accepts}, got {type_name(value)}")


def check_str(where: str, arg: str, value: Any, what: str = "a str", *, optional: bool = False) -> None:
    """A non-empty string (``None`` too when ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise wrong_type(where, arg, what + (" or None" if optional else ""), value)
    if not value.strip():
        raise ValueError(f"{where}: {arg} must not be empty")


def check_bool(where: str, arg: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise wrong_type(where, arg, "True or False", value)


def check_number(where: str, arg: str, value: Any, *, integer: bool = False) -> None:
    """An int (``integer``) or a real number, not a bool; ``None`` is left to the caller."""
    import numbers

    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise wrong_type(where, arg, "an int" if integer else "a number (float or int)", value)
