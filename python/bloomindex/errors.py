"""Exceptions of bloomindex's own error conditions.

Every error of the JVM side carries an error condition and a SQLSTATE (defined in the jar's
``error/bloomindex-error-conditions.json``): match ``e.getCondition()`` / ``e.getSqlState()``,
never the message text. A lost commit race has a class of its own, so that a caller can retry:

>>> try:                                                              # doctest: +SKIP
...     BloomIndex(spark).refresh("orders_uid")
... except ConcurrentBloomIndexUpdateError:
...     BloomIndex(spark).refresh("orders_uid")  # nothing was changed: safe to run again

The same classes come on a classic session (py4j) and on a Spark Connect session: an error
of one of bloomindex's conditions is raised as an instance of both :class:`BloomIndexError`
(or :class:`ConcurrentBloomIndexUpdateError`) and the class PySpark raised for it
(``pyspark.errors.exceptions.captured.AnalysisException`` on classic,
``pyspark.errors.exceptions.connect.AnalysisException`` on Connect, or their ``ParseException``),
so ``except pyspark.errors.AnalysisException`` catches it on both.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from pyspark.errors.exceptions.base import AnalysisException

__all__ = ["CONCURRENT_UPDATE_CONDITION", "BloomIndexError", "ConcurrentBloomIndexUpdateError"]

#: The error condition of a lost commit race (SQLSTATE 40001, serialization failure).
CONCURRENT_UPDATE_CONDITION = "BLOOM_INDEX_CONCURRENT_UPDATE"

T = TypeVar("T")


class BloomIndexError(AnalysisException):
    """An error of one of bloomindex's conditions (``BLOOM_...``), as :class:`BloomIndex`
    raises it: a :class:`pyspark.errors.AnalysisException` whose ``getCondition()``,
    ``getSqlState()``, ``getMessageParameters()`` and ``getMessage()`` work on classic and
    Spark Connect sessions alike. The instances raised are also of PySpark's own class for the
    error (classic or Connect)."""


class ConcurrentBloomIndexUpdateError(BloomIndexError):
    """Another command committed the index's next log version first: nothing this command did
    is visible, and running it again is safe. The JVM's ``ConcurrentBloomIndexUpdateException``
    (condition ``BLOOM_INDEX_CONCURRENT_UPDATE``, SQLSTATE ``40001``); a subclass of
    :class:`pyspark.errors.AnalysisException`."""


def _captured_get_message(self: Any) -> str:
    # PySpark's classic getMessage() renders the message from Spark's own conditions file,
    # which lacks bloomindex's: the JVM's message is the one.
    return self._desc


_CLASSES: dict[tuple[type, type], type] = {}


def _combined(ours: type, theirs: type) -> type:
    """``ours`` (BloomIndexError or its subclass) mixed with PySpark's exception class ``theirs``."""
    key = (ours, theirs)
    cls = _CLASSES.get(key)
    if cls is None:
        body: dict[str, Any] = {"__module__": __name__, "__qualname__": ours.__qualname__, "__doc__": ours.__doc__}
        if theirs.__module__.endswith(".captured"):
            body["getMessage"] = _captured_get_message
        cls = _CLASSES[key] = type(ours.__name__, (ours, theirs), body)
    return cls


def _converted(e: AnalysisException) -> AnalysisException:
    """``e`` as the exception class of its condition (the same error underneath), or ``e``."""
    if isinstance(e, BloomIndexError):
        return e
    try:
        condition = e.getCondition()
    except Exception:  # noqa: BLE001 - no JVM to ask: keep the exception as it is
        return e
    if not (condition or "").startswith("BLOOM_"):
        return e
    ours = ConcurrentBloomIndexUpdateError if condition == CONCURRENT_UPDATE_CONDITION else BloomIndexError
    cls = _combined(ours, type(e))
    if getattr(e, "_origin", None) is not None:  # classic: built from the JVM exception again
        return cls(origin=e._origin)
    # Spark Connect: the same state (message, condition, parameters, SQLSTATE, server trace).
    converted = cls.__new__(cls)
    converted.__dict__.update(e.__dict__)
    converted.args = e.args
    return converted


def convert(f: Callable[..., T]) -> Callable[..., T]:
    """``f`` raising bloomindex's exception classes for its conditions (``f`` raises PySpark's)."""

    @functools.wraps(f)
    def deco(*a: Any, **kw: Any) -> T:
        try:
            return f(*a, **kw)
        except AnalysisException as e:
            converted = _converted(e)
            if converted is e:
                raise
            raise converted.with_traceback(e.__traceback__) from None

    return deco


def capture(f: Callable[..., T]) -> Callable[..., T]:
    """For a py4j call: PySpark's ``capture_sql_exception``, then bloomindex's exception classes
    by condition."""
    from pyspark.errors.exceptions.captured import capture_sql_exception

    return convert(capture_sql_exception(f))
