"""Values of every indexable Spark type, random and edge, for the parity tests."""

from __future__ import annotations

import datetime as dt
import decimal
import random

from pyspark.sql import types as T

# (column name, Spark SQL type name, Spark type, pyarrow type factory name)
COLUMNS = [
    ("c_tinyint", "tinyint", T.ByteType()),
    ("c_smallint", "smallint", T.ShortType()),
    ("c_int", "int", T.IntegerType()),
    ("c_bigint", "bigint", T.LongType()),
    ("c_float", "float", T.FloatType()),
    ("c_double", "double", T.DoubleType()),
    ("c_string", "string", T.StringType()),
    ("c_binary", "binary", T.BinaryType()),
    ("c_date", "date", T.DateType()),
    ("c_timestamp", "timestamp", T.TimestampType()),
    ("c_timestamp_ntz", "timestamp_ntz", T.TimestampNTZType()),
    ("c_dec_5_2", "decimal(5,2)", T.DecimalType(5, 2)),
    ("c_dec_18_4", "decimal(18,4)", T.DecimalType(18, 4)),
    ("c_dec_20_2", "decimal(20,2)", T.DecimalType(20, 2)),
    ("c_dec_38_10", "decimal(38,10)", T.DecimalType(38, 10)),
]

UTC = dt.timezone.utc
_CTX = decimal.Context(prec=100)  # the default 28 digits would round decimal(38, s) values


def _edges(type_name: str) -> list:
    if type_name == "tinyint":
        return [0, 1, -1, -128, 127]
    if type_name == "smallint":
        return [0, -1, -32768, 32767]
    if type_name == "int":
        return [0, -1, -(2**31), 2**31 - 1]
    if type_name == "bigint":
        return [0, -1, -(2**63), 2**63 - 1]
    if type_name in ("float", "double"):
        return [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, -2.25e-30]
    if type_name == "string":
        return ["", "a", "héllo wörld", "日本語テキスト", "emoji \U0001F600", "x" * 10000, "trailing "]
    if type_name == "binary":
        return [b"", b"\x00", b"\xff" * 33, bytes(range(256))]
    if type_name == "date":
        return [dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(1900, 3, 1), dt.date(1, 1, 1),
                dt.date(9999, 12, 31), dt.date(2024, 2, 29)]
    if type_name == "timestamp":
        return [dt.datetime(1970, 1, 1, tzinfo=UTC), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                dt.datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC), dt.datetime(2262, 4, 11, 23, 47, 16, 854775, tzinfo=UTC)]
    if type_name == "timestamp_ntz":
        return [dt.datetime(1970, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
                dt.datetime(1900, 1, 1, 0, 0, 0, 1), dt.datetime(2999, 12, 31, 12, 0, 0, 123456)]
    if type_name.startswith("decimal"):
        p, s = (int(x) for x in type_name[8:-1].split(","))
        big = decimal.Decimal(10**p - 1).scaleb(-s, _CTX)
        tiny = decimal.Decimal(1).scaleb(-s, _CTX)
        return [decimal.Decimal(0), big, big.copy_negate(), tiny, tiny.copy_negate()]
    raise AssertionError(type_name)


def _random(type_name: str, rng: random.Random):
    if type_name == "tinyint":
        return rng.randint(-128, 127)
    if type_name == "smallint":
        return rng.randint(-32768, 32767)
    if type_name == "int":
        return rng.randint(-(2**31), 2**31 - 1)
    if type_name == "bigint":
        return rng.randint(-(2**63), 2**63 - 1)
    if type_name == "float":
        return rng.uniform(-1e6, 1e6)
    if type_name == "double":
        return rng.uniform(-1e300, 1e300) * rng.random()
    if type_name == "string":
        return "".join(rng.choice("abcxyzé日\u00a0 ") for _ in range(rng.randint(0, 40)))
    if type_name == "binary":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
    if type_name == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-200000, 200000))
    if type_name in ("timestamp", "timestamp_ntz"):
        v = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rng.randint(-(2**55), 2**55))
        return v.replace(tzinfo=UTC) if type_name == "timestamp" else v
    if type_name.startswith("decimal"):
        p, s = (int(x) for x in type_name[8:-1].split(","))
        return decimal.Decimal(rng.randint(-(10**p) + 1, 10**p - 1)).scaleb(-s, _CTX)
    raise AssertionError(type_name)


def values_for(type_name: str, n: int, seed: int) -> list:
    """Edge values, random values and a few nulls and duplicates, in a fixed order."""
    rng = random.Random(f"{type_name}-{seed}")
    vals = _edges(type_name) + [_random(type_name, rng) for _ in range(n)]
    vals += [None, None] + vals[:3]
    return vals


def rows(n: int, seed: int) -> tuple[list[tuple], T.StructType]:
    """Rows with one column per type (each column its own values), and their schema."""
    columns = [values_for(t, n, seed) for _, t, _ in COLUMNS]
    length = max(len(c) for c in columns)
    columns = [c + [None] * (length - len(c)) for c in columns]
    schema = T.StructType([T.StructField(name, st, True) for name, _, st in COLUMNS])
    return list(zip(*columns)), schema
