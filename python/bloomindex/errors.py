"""Exceptions of bloomindex's own error conditions.

Every error of the JVM side carries an error condition and a SQLSTATE (defined in the jar's
``error/bloomindex-error-conditions.json``): match ``e.getCondition()`` / ``e.getSqlState()``,
never the message text. A lost commit race has a class of its own, so that a caller can retry:

>>> try:                                                              # doctest: +SKIP
...     BloomIndex(spark).refresh("orders_uid")
... except ConcurrentBloomIndexUpdateError:
...     BloomIndex(spark).refresh("orders_uid")  # nothing was changed: safe to run again
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from pyspark.errors.exceptions.captured import AnalysisException, capture_sql_exception

__all__ = ["CONCURRENT_UPDATE_CONDITION", "BloomIndexError", "ConcurrentBloomIndexUpdateError"]

#: The error condition of a lost commit race (SQLSTATE 40001, serialization failure).
CONCURRENT_UPDATE_CONDITION = "BLOOM_INDEX_CONCURRENT_UPDATE"

T = TypeVar("T")


class BloomIndexError(AnalysisException):
    """An error of one of bloomindex's conditions, as :class:`BloomIndex` raises it: a
    :class:`pyspark.errors.AnalysisException` whose ``getMessage()`` works (PySpark's renders
    the message from Spark's own conditions file, which lacks bloomindex's)."""

    def getMessage(self) -> str:
        return self._desc


class ConcurrentBloomIndexUpdateError(BloomIndexError):
    """Another command committed the index's next log version first: nothing this command did
    is visible, and running it again is safe. The JVM's ``ConcurrentBloomIndexUpdateException``
    (condition ``BLOOM_INDEX_CONCURRENT_UPDATE``, SQLSTATE ``40001``); a subclass of
    :class:`pyspark.errors.AnalysisException`."""


def _converted(e: AnalysisException) -> AnalysisException:
    """``e`` as the exception class of its condition (the same JVM error underneath)."""
    try:
        condition = e.getCondition()
    except Exception:  # noqa: BLE001 - no JVM to ask: keep the exception as it is
        return e
    origin = getattr(e, "_origin", None)
    if isinstance(e, BloomIndexError) or origin is None or not (condition or "").startswith("BLOOM_"):
        return e
    if condition == CONCURRENT_UPDATE_CONDITION:
        return ConcurrentBloomIndexUpdateError(origin=origin)
    return BloomIndexError(origin=origin)


def capture(f: Callable[..., T]) -> Callable[..., T]:
    """PySpark's ``capture_sql_exception``, then bloomindex's exception classes by condition."""
    captured = capture_sql_exception(f)

    @functools.wraps(f)
    def deco(*a: Any, **kw: Any) -> T:
        try:
            return captured(*a, **kw)
        except AnalysisException as e:
            converted = _converted(e)
            if converted is e:
                raise
            raise converted from None

    return deco
