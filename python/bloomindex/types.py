"""Spark SQL type names as the hashing functions accept them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALIASES = {
    "tinyint": "tinyint", "byte": "tinyint",
    "smallint": "smallint", "short": "smallint",
    "int": "int", "integer": "int",
    "bigint": "bigint", "long": "bigint",
    "float": "float", "real": "float",
    "double": "double",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamp", "timestamp_ltz": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}

_NOT_INDEXABLE = ("boolean", "array", "map", "struct", "interval", "variant", "void", "null")

_DECIMAL = re.compile(r"^(?:decimal|dec|numeric)\s*(?:\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\))?$")
_CHAR = re.compile(r"^(char|character|varchar)\s*\(\s*(\d+)\s*\)$")

MAX_INT_DIGITS = 9
MAX_LONG_DIGITS = 18


@dataclass(frozen=True)
class SparkType:
    """A parsed indexable type: ``name`` is the canonical name, ``physical`` Parquet's type."""

    name: str
    physical: str  # INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
    precision: int = 0
    scale: int = 0

    @property
    def simple_string(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return self.name


def decimal_bytes(precision: int) -> int:
    """Bytes of the FIXED_LEN_BYTE_ARRAY Spark writes for a decimal of this precision."""
    n = 1
    while (1 << (8 * n - 1)) < 10**precision:
        n += 1
    return n


def parse_type(spark_type: str) -> SparkType:
    """Parses a Spark SQL type name (``'int'``, ``'decimal(20,2)'``, ...).

    Raises ``ValueError`` naming the type when a Bloom filter cannot hold it.
    """
    if not isinstance(spark_type, str):
        raise ValueError(f"spark_type: expected a Spark SQL type name, got {spark_type!r}")
    t = spark_type.strip().lower()
    if t in _ALIASES:
        name = _ALIASES[t]
        physical = {
            "tinyint": "INT32", "smallint": "INT32", "int": "INT32", "date": "INT32",
            "bigint": "INT64", "timestamp": "INT64", "timestamp_ntz": "INT64",
            "float": "FLOAT", "double": "DOUBLE",
            "string": "BYTE_ARRAY", "binary": "BYTE_ARRAY",
        }[name]
        return SparkType(name, physical)
    m = _DECIMAL.match(t)
    if m:
        precision = int(m.group(1) or 10)
        scale = int(m.group(2) or 0)
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise ValueError(f"spark_type: invalid decimal precision/scale in {spark_type!r}")
        if precision <= MAX_INT_DIGITS:
            physical = "INT32"
        elif precision <= MAX_LONG_DIGITS:
            physical = "INT64"
        else:
            physical = "FIXED_LEN_BYTE_ARRAY"
        return SparkType("decimal", physical, precision, scale)
    if _CHAR.match(t):
        # Stored as strings; a CHAR(n) value is hashed as given, so pass it padded as stored.
        return SparkType("string", "BYTE_ARRAY")
    if t.startswith(_NOT_INDEXABLE):
        raise ValueError(f"spark_type: {spark_type} cannot be held in a Bloom filter")
    raise ValueError(f"spark_type: unknown or unsupported Spark SQL type {spark_type!r}")
