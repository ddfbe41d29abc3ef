"""XXH64 of Spark values in their Parquet plain encoding: the hash Parquet's Bloom filters use.

``hash_name="murmur3"`` hashes the same encoding with MurmurHash3 x64 128 (low 64 bits, parquet-mr's
seed) instead: the hash of the deprecated ``sbbf-murmur3`` design.

Same rules as the JVM's ``bloomindex.hash.ParquetHash``:

==========================================  ====================  =============================
Spark type                                  Parquet physical      bytes hashed
==========================================  ====================  =============================
tinyint, smallint, int, date                INT32                 4 bytes LE (sign-extended)
bigint, timestamp, timestamp_ntz            INT64                 8 bytes LE (microseconds)
float, double                               FLOAT, DOUBLE         raw IEEE bits, LE
string, binary                              BYTE_ARRAY            the (UTF-8) bytes
decimal(p<=9,s) / decimal(p<=18,s)          INT32 / INT64         unscaled value, LE
decimal(p>18,s)                             FIXED_LEN_BYTE_ARRAY  unscaled, big-endian, minimal
==========================================  ====================  =============================

Dates are days since 1970-01-01; timestamps microseconds since the epoch. A timezone-aware
``datetime`` is converted to UTC; a naive one is taken as UTC for ``timestamp`` (set
``spark.sql.session.timeZone=UTC`` for Spark to agree) and as wall-clock time for
``timestamp_ntz``.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Iterable as _Iterable
from typing import Any, Callable, Iterable

import numpy as np
import xxhash

from ._murmur3 import murmur3_bytes, murmur3_u32, murmur3_u64
from ._xxh64 import xxh64_u32, xxh64_u64
from .types import SparkType, decimal_bytes, parse_type

__all__ = ["hash_values", "hash_value", "HASHES"]

# name -> (4-byte values, 8-byte values, one byte string): the functions over plain encodings.
_FUNCTIONS = {
    "xxh64": (xxh64_u32, xxh64_u64, xxhash.xxh64_intdigest),
    "murmur3": (murmur3_u32, murmur3_u64, murmur3_bytes),
}
HASHES = tuple(_FUNCTIONS)

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_INT_RANGES = {"tinyint": (-(2**7), 2**7 - 1), "smallint": (-(2**15), 2**15 - 1),
               "int": (-(2**31), 2**31 - 1), "bigint": (-(2**63), 2**63 - 1)}


def hash_values(values: Iterable[Any] | np.ndarray, spark_type: str, hash_name: str = "xxh64") -> np.ndarray:
    """Hashes each non-null value of Spark SQL type ``spark_type`` (``"bigint"``,
    ``"decimal(20,2)"``...) as a Parquet writer would before inserting it in a filter.

    ``values`` is any iterable (or a NumPy array, hashed without a Python loop for fixed-width
    types), not one ``str`` or ``bytes`` (a single value: pass ``[value]``); ``None`` values are
    skipped, as Parquet never inserts nulls. ``hash_name`` is ``"xxh64"`` (Parquet's, the
    ``sbbf`` and ``classic`` designs') or ``"murmur3"`` (the ``sbbf-murmur3`` design's): a
    filter's ``hash_name``. Returns ``np.uint64``.

    A value of the wrong type for ``spark_type`` (a str for ``bigint``, a float for
    ``decimal(5,2)``, a datetime for ``date``) is a ``TypeError``; one of the right type out of
    its range (300 for ``tinyint``, too many digits) a ``ValueError``; both name ``values``.

    >>> hash_values([1, 2, None], "int").shape
    (2,)
    """
    _check_args(values, spark_type, hash_name)
    u32, u64, of_bytes = _FUNCTIONS[hash_name]
    t = parse_type(spark_type)
    if t.physical in ("INT32", "INT64", "FLOAT", "DOUBLE"):
        return _hash_fixed(values, t, u32, u64)
    items = [v for v in values if v is not None]
    if t.physical == "FIXED_LEN_BYTE_ARRAY":
        return np.fromiter((of_bytes(_decimal_flba(v, t)) for v in items),
                           dtype=np.uint64, count=len(items))
    return np.fromiter((of_bytes(_as_bytes(v, t)) for v in items),
                       dtype=np.uint64, count=len(items))


def check_values(check_hashes: Callable[[np.ndarray], np.ndarray], values: Iterable[Any] | np.ndarray,
                 spark_type: str, hash_name: str) -> np.ndarray:
    """``check_hashes`` of each non-null value as Spark's equality sees it: a float or double
    zero is equal to the other zero (``0.0 = -0.0`` in Spark, as in Python), whose bits and hash
    differ, so a zero may be in the filter as either; and every NaN is equal to every other NaN
    in Spark (``NaN = NaN`` is true there), whatever its bits, so a NaN may be in the filter as
    any of 2**52 bit patterns: a NaN is always "maybe"."""
    _check_args(values, spark_type, hash_name)
    t = parse_type(spark_type)
    if t.physical not in ("FLOAT", "DOUBLE"):
        return check_hashes(hash_values(values, spark_type, hash_name))
    arr = _float_array(values, np.float32 if t.physical == "FLOAT" else np.float64)
    out = check_hashes(hash_values(arr, spark_type, hash_name))
    zeros = arr == 0
    if zeros.any():
        out = out | check_hashes(hash_values(np.where(zeros, -arr, arr), spark_type, hash_name))
    return out | np.isnan(arr)


def _check_args(values: Any, spark_type: Any, hash_name: Any) -> None:
    """The arguments' types (the container's, not each value's: the conversions check those)."""
    if not isinstance(hash_name, str):
        raise TypeError(f"hash_name: must be a str ({' or '.join(map(repr, HASHES))}), got {type(hash_name).__name__}")
    if hash_name not in _FUNCTIONS:
        raise ValueError(f"hash_name: expected one of {', '.join(HASHES)}, got {hash_name!r}")
    if not isinstance(spark_type, str):
        raise TypeError("spark_type: must be a str, a Spark SQL type name such as 'bigint' or "
                        f"'decimal(20,2)', got {type(spark_type).__name__}")
    if isinstance(values, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"values: must be an iterable of values or a NumPy array, got one {type(values).__name__} "
                        "(pass [value], or use might_contain)")
    if not isinstance(values, (np.ndarray, _Iterable)):
        raise TypeError(f"values: must be an iterable of values (a list, tuple, ...) or a NumPy array, "
                        f"got {type(values).__name__}")


def hash_value(value: Any, spark_type: str, hash_name: str = "xxh64") -> int:
    """The hash of one non-null value, as a Python int in [0, 2**64): :func:`hash_values`'s."""
    if value is None:
        raise ValueError("value: None has no hash; Bloom filters never hold nulls")
    return int(hash_values([value], spark_type, hash_name)[0])


def _hash_fixed(values: Iterable[Any] | np.ndarray, t: SparkType, u32: Any, u64: Any) -> np.ndarray:
    if t.physical == "FLOAT":
        arr = _float_array(values, np.float32)
        return u32(arr.view(np.uint32))
    if t.physical == "DOUBLE":
        arr = _float_array(values, np.float64)
        return u64(arr.view(np.uint64))
    ints = _int_array(values, t)
    if t.physical == "INT32":
        return u32(ints.astype(np.int32))
    return u64(ints.astype(np.int64))


def _float_array(values: Iterable[Any] | np.ndarray, dtype: type) -> np.ndarray:
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "fiu":
            raise TypeError(f"values: must be numbers, got an array of {values.dtype}")
        return values.astype(dtype, copy=False)
    items = [v for v in values if v is not None]
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"values: {v!r} is not a number ({type(v).__name__}; float and double take numbers)")
    try:
        return np.asarray(items, dtype=dtype)
    except OverflowError:
        raise ValueError(f"values: a value is out of range for {np.dtype(dtype).name}") from None


def _int_array(values: Iterable[Any] | np.ndarray, t: SparkType) -> np.ndarray:
    """The plain-encoded integer of each value: the int, days, micros or unscaled decimal."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        arr = values.astype(np.int64)
        if values.dtype == np.uint64 and (values > np.iinfo(np.int64).max).any():
            raise ValueError("values: uint64 values beyond bigint's range")
        if t.name == "decimal":
            # An int is the number itself, as in a list (5 is 5.00 of decimal(5,2)), not the
            # unscaled value: scaled here, after checking it fits (so the product cannot overflow).
            whole = (10**t.precision - 1) // 10**t.scale
            if arr.size and (arr.min() < -whole or arr.max() > whole):
                bad = arr[(arr < -whole) | (arr > whole)][0]
                raise ValueError(f"values: {bad} does not fit {t.simple_string}")
            arr = arr * np.int64(10**t.scale)
    elif isinstance(values, np.ndarray) and values.dtype.kind == "M":
        if t.name not in ("date", "timestamp", "timestamp_ntz"):
            raise TypeError(f"values: an array of {values.dtype} holds dates and times, not {t.simple_string} values")
        unit = "D" if t.name == "date" else "us"
        # NaT is a null, skipped as None is in a list.
        present = values[~np.isnat(values)]
        arr = present.astype(f"datetime64[{unit}]")
        if t.name == "date" and (arr != present).any():
            raise TypeError(f"values: {present[arr != present][0]} has a time of day; date takes dates")
        arr = arr.astype(np.int64)
    else:
        convert = _CONVERTERS.get(t.name, _to_int)
        # Each converter checks its value's range, so every item fits an int64. A NaT (NumPy's
        # or pandas') is a null, skipped as None is, and as NaT is in a datetime64 array.
        arr = np.asarray([convert(v, t) for v in values if not _is_null(v)], dtype=np.int64)
    bounds = _INT_RANGES.get(t.name)
    if t.name == "decimal":
        limit = 10**t.precision - 1
        bounds = (-limit, limit)
    if t.name == "date":
        bounds = _INT_RANGES["int"]
    if bounds is not None and arr.size and (arr.min() < bounds[0] or arr.max() > bounds[1]):
        bad = arr[(arr < bounds[0]) | (arr > bounds[1])][0]
        raise ValueError(f"values: {bad} is out of range for {t.simple_string}")
    return arr


def _is_null(v: Any) -> bool:
    return v is None or (isinstance(v, np.datetime64) and bool(np.isnat(v))) or type(v).__name__ == "NaTType"


def _to_int(v: Any, t: SparkType) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"values: {v!r} is not an integer ({type(v).__name__}; {t.simple_string} takes ints)")
    v = int(v)
    lo, hi = _INT_RANGES.get(t.name, _INT_RANGES["bigint"])
    if not lo <= v <= hi:
        raise ValueError(f"values: {v} is out of range for {t.simple_string}")
    return v


def _to_days(v: Any, t: SparkType) -> int:
    if isinstance(v, _dt.datetime):
        raise TypeError(f"values: {v!r} is a datetime, not a date (date takes datetime.date, numpy datetime64 or "
                        "days since 1970-01-01)")
    if isinstance(v, _dt.date):
        return (v - _EPOCH_DATE).days
    if isinstance(v, np.datetime64):
        return int(v.astype("datetime64[D]").astype(np.int64))
    return _to_int(v, t)


def _to_micros(v: Any, t: SparkType) -> int:
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            if t.name == "timestamp_ntz":
                raise ValueError(f"values: {v!r} has a timezone; timestamp_ntz values must be naive")
            delta = v - _EPOCH_UTC
        else:
            delta = v - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(v, _dt.date):
        raise TypeError(f"values: {v!r} is a date, not a datetime ({t.name} takes datetime.datetime, "
                        "numpy datetime64 or microseconds since the epoch)")
    if isinstance(v, np.datetime64):
        return int(v.astype("datetime64[us]").astype(np.int64))
    return _to_int(v, t)


def _unscaled(v: Any, t: SparkType) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, str, _decimal.Decimal, np.integer)):
        raise TypeError(f"values: {v!r} is not a decimal ({type(v).__name__}; pass Decimal, int or str)")
    try:
        d = _decimal.Decimal(v) if not isinstance(v, np.integer) else _decimal.Decimal(int(v))
    except _decimal.InvalidOperation:
        raise ValueError(f"values: {v!r} is not a decimal number") from None
    if not d.is_finite():
        raise ValueError(f"values: {v!r} is not a finite decimal")
    try:
        scaled = d.scaleb(t.scale, context=_decimal.Context(prec=100))
    except ArithmeticError:  # decimal.Overflow and the like: an exponent far beyond any precision
        raise ValueError(f"values: {v} does not fit {t.simple_string}") from None
    if scaled != scaled.to_integral_value():
        raise ValueError(f"values: {v} has more than {t.scale} fractional digits for {t.simple_string}")
    unscaled = int(scaled)
    if abs(unscaled) >= 10**t.precision:
        raise ValueError(f"values: {v} does not fit {t.simple_string}")
    return unscaled


_CONVERTERS = {"date": _to_days, "timestamp": _to_micros, "timestamp_ntz": _to_micros,
               "decimal": _unscaled}


def _decimal_flba(v: Any, t: SparkType) -> bytes:
    return _unscaled(v, t).to_bytes(decimal_bytes(t.precision), "big", signed=True)


def _as_bytes(v: Any, t: SparkType) -> bytes:
    if t.name == "string":
        if isinstance(v, str):
            try:
                return v.encode("utf-8")
            except UnicodeEncodeError:
                # A lone surrogate: no UTF-8 form, so no Spark string holds it.
                raise ValueError(f"values: {v!r} is not valid Unicode (a lone surrogate has no UTF-8 form)") from None
        raise TypeError(f"values: {v!r} is not a str ({type(v).__name__}; string takes str)")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"values: {v!r} is not bytes ({type(v).__name__}; binary takes bytes, bytearray or memoryview)")
