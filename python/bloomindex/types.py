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


@dataclass(frozen=True)
class StoredColumn:
    """How a Parquet file stores the column a filter read out of it was built from: its
    ``physical`` type, its logical annotation (pyarrow's ``LogicalType.to_json()`` as a dict)
    and a fixed-length byte array's ``length``. The filter holds hashes of those bytes."""

    column: str
    physical: str
    logical: dict
    length: int = 0

    def check(self, spark_type: str) -> None:
        """Raises ``ValueError`` when values of ``spark_type`` hash to other bytes than the file
        stores for its values (Spark's own layout: :mod:`bloomindex.hashing`): checking them
        against the filter would answer "absent" for values the file holds."""
        t = parse_type(spark_type)
        kind = self.logical.get("Type", "None")
        why = None
        if t.physical != self.physical:
            why = f"hashed as Parquet {t.physical}, stored as {self.physical}"
        elif t.physical == "FIXED_LEN_BYTE_ARRAY" and self.length != decimal_bytes(t.precision):
            why = f"hashed as {decimal_bytes(t.precision)}-byte arrays, stored as {self.length}-byte arrays"
        elif t.name == "decimal" and (kind != "Decimal" or self.logical.get("scale") != t.scale):
            why = f"hashed as unscaled values of scale {t.scale}, stored as {self._shown()}"
        elif t.name != "decimal" and kind == "Decimal":
            why = f"not a decimal type, stored as {self._shown()}"
        elif t.name in ("timestamp", "timestamp_ntz") and (kind != "Timestamp" or self.logical.get("timeUnit") != "microseconds"):
            why = f"hashed as microseconds, stored as {self._shown()}"
        elif t.name == "date" and kind != "Date":
            why = f"hashed as days, stored as {self._shown()}"
        if why:
            raise ValueError(f"spark_type: {spark_type!r} does not match how the file stores column {self.column!r} "
                             f"({why}); its filter holds the hashes of those bytes")

    def _shown(self) -> str:
        extra = {k: v for k, v in self.logical.items() if k not in ("Type", "is_from_converted_type", "force_set_converted_type")}
        return f"{self.physical} {self.logical.get('Type', 'without annotation')}" + (f" {extra}" if extra else "")


def check_stored(filt: object, spark_type: str) -> None:
    """:meth:`StoredColumn.check` of the column ``filt`` was read for, where it was read out of
    a Parquet file (:func:`bloomindex.parquet.read_bloom_filter`)."""
    stored = getattr(filt, "stored", None)
    if stored is not None:
        stored.check(spark_type)

