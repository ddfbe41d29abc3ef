"""Every public function and method of bloomindex checks its arguments before any JVM call or
SQL statement: ``TypeError`` for a wrong type, ``ValueError`` for a wrong value, each message
naming the argument and what it accepts.

The same tests run on a Spark Connect session (tests/connect/test_python_args_connect.py):
the checks, and so the exceptions and messages, are the same on both kinds of session."""

from __future__ import annotations

import datetime as dt
import inspect
from decimal import Decimal
from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

import bloomindex
from bloomindex import BloomIndex, ClassicBloomFilter, Sbbf, SbbfMurmur3, might_contain


class Case(NamedTuple):
    target: str         # the public callable, as in bloomindex.__all__ ("BloomIndex.create", "configure")
    call: Callable[..., Any]  # call(bi, df, spark)
    error: type         # TypeError (a wrong type) or ValueError (a wrong value)
    message: str        # a regex the message matches: it names the argument


class _Builder:
    """Records .config() like SparkSession.Builder does, without starting a JVM."""

    def __init__(self) -> None:
        self._options: dict[str, str] = {}

    def config(self, key, value):
        self._options[key] = value
        return self


T, V = TypeError, ValueError
BI_CASES = [
    Case("BloomIndex", lambda bi, df, spark: BloomIndex(None), T, r"^BloomIndex: spark must be a SparkSession.*got NoneType"),
    Case("BloomIndex", lambda bi, df, spark: BloomIndex("local[2]"), T, r"^BloomIndex: spark must be a SparkSession.*got str"),
    Case("BloomIndex", lambda bi, df, spark: BloomIndex(spark, progress=1), T,
         r"^BloomIndex: progress must be 'auto', True or False, got int"),
    Case("BloomIndex", lambda bi, df, spark: BloomIndex(spark, progress=None), T, r"^BloomIndex: progress must be .*NoneType"),
    Case("BloomIndex", lambda bi, df, spark: BloomIndex(spark, progress="always"), V,
         r"^BloomIndex: progress must be 'auto', True or False, got 'always'"),

    Case("BloomIndex.create", lambda bi, df, spark: bi.create(123, "t", ["s"]), T, r"^create: name must be a str .*got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("", "t", ["s"]), V, r"^create: name must not be empty"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("  ", "t", ["s"]), V, r"^create: name must not be empty"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", 7, ["a"]), T,
         r"^create: source must be a table name, a path \(str\) or a DataFrame, got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", None, ["a"]), T, r"^create: source must be .*NoneType"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "", ["a"]), V, r"^create: source must not be empty"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", 42), T,
         r"^create: columns: expected a column name, a list of names or text columns, or a dict of them -> options, got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", []), V, r"^create: columns: expected column names"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a", 1]), T,
         r"^create: columns: expected column names \(str\) or tokens\(\.\.\.\) / ngrams\(\.\.\.\), got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", [""]), V, r"^create: columns: .*an empty one"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens(1), T, r"^tokens: column must be a column name \(str\), got int"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", case=True), T, r"^tokens: case must be 'none' or 'lower', got bool"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", case="upper"), V, r"^tokens: case: expected 'none' or 'lower', got 'upper'"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", separators=[" "]), T, r"^tokens: separators must be a str"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", separators=""), V, r"^tokens: separators must not be empty"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", fpp=[0.1]), T, r"^tokens: option fpp must be a str, int, float or bool"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", case="lower", CASE="none"), V,
         r"^tokens: option 'case' is given twice, as 'CASE' and 'case' \(option names ignore case\)"),
    Case("tokens", lambda bi, df, spark: bloomindex.tokens("m", separators="-", Separators=","), V,
         r"^tokens: option 'separators' is given twice, as 'Separators' and 'separators'"),
    Case("ngrams", lambda bi, df, spark: bloomindex.ngrams(None, 3), T, r"^ngrams: column must be a column name \(str\), got NoneType"),
    Case("ngrams", lambda bi, df, spark: bloomindex.ngrams("m", "3"), T, r"^ngrams: n must be an int"),
    Case("ngrams", lambda bi, df, spark: bloomindex.ngrams("m", 0), V, r"^ngrams: n: expected a whole number in \[1, 16\], got 0"),
    Case("ngrams", lambda bi, df, spark: bloomindex.ngrams("m", 3, case="Upper"), V, r"^ngrams: case: expected 'none' or 'lower'"),
    Case("ngrams", lambda bi, df, spark: bloomindex.ngrams("m", 3, fpp=0.1, Fpp=0.2), V,
         r"^ngrams: option 'fpp' is given twice, as 'fpp' and 'Fpp'"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", {1: None}), T, r"^create: columns: .*got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", {"a": 0.01}), T,
         r"^create: columns: the options of column a must be a dict .*got float"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", {"a": {"fpp": [0.1]}}), T,
         r"^create: columns: column a: option fpp must be a str, int, float or bool, got list"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], fpp="0.1"), T,
         r"^create: fpp must be a number \(float or int\), got str"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], fpp=True), T, r"^create: fpp must be a number.*bool"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], ndv=1.5), T, r"^create: ndv must be an int, got float"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], ndv="10"), T, r"^create: ndv must be an int, got str"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], algorithm=3), T,
         r"^create: algorithm must be a str \('sbbf', 'sbbf-murmur3' or 'classic'\) or None, got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], algorithm=""), V, r"^create: algorithm must not be empty"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "/p", ["a"], source_format=5), T,
         r"^create: source_format must be a str .* or None, got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "/p", ["a"], source_format=""), V,
         r"^create: source_format must not be empty"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", df, ["a"], source_format="parquet"), V,
         r"^create: source_format: not used with a DataFrame source"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], global_filter="yes"), T,
         r"^create: global_filter must be True or False, got str"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], if_not_exists=1), T,
         r"^create: if_not_exists must be True or False, got int"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], colour=["red"]), T,
         r"^create: option colour must be a str, int, float or bool, got list"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], global_=True), V,
         r"^global_: not an option here; pass global_filter=True"),
    # Option names ignore case (the JVM lower-cases them, SQL's OPTIONS refuses a name given twice).
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], fpp=0.01, FPP=0.5), V,
         r"^create: option 'fpp' is given twice, as 'FPP' and 'fpp' \(option names ignore case\)"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", ["a"], refresh="manual", Refresh="on_write"), V,
         r"^create: option 'refresh' is given twice, as 'refresh' and 'Refresh'"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", {"c": {"algorithm": "classic", "ALGORITHM": "sbbf"}}),
         V, r"^create: columns: column c: option 'algorithm' is given twice, as 'algorithm' and 'ALGORITHM'"),
    Case("BloomIndex.create", lambda bi, df, spark: bi.create("z", "t", {bloomindex.tokens("m", fpp=0.1): {"FPP": 0.2}}),
         V, r"^create: columns: column m: option 'fpp' is given twice, as 'fpp' and 'FPP'"),

    Case("BloomIndex.set_refresh", lambda bi, df, spark: bi.set_refresh(3, "manual"), T,
         r"^set_refresh: name must be a str .*got int"),
    Case("BloomIndex.set_refresh", lambda bi, df, spark: bi.set_refresh("z", True), T,
         r"^set_refresh: mode must be 'on_write', 'background' or 'manual' \(a str\), got bool"),
    Case("BloomIndex.set_refresh", lambda bi, df, spark: bi.set_refresh("z", "always"), V,
         r"^set_refresh: mode: expected 'on_write', 'background' or 'manual', got 'always'"),
    Case("BloomIndex.optimize", lambda bi, df, spark: bi.optimize(7), T, r"^optimize: name must be a str .*got int"),
    Case("BloomIndex.vacuum", lambda bi, df, spark: bi.vacuum(b"z"), T, r"^vacuum: name must be a str .*got bytes"),
    Case("BloomIndex.vacuum", lambda bi, df, spark: bi.vacuum("z", retain_hours="1"), T,
         r"^vacuum: retain_hours must be a number of hours \(an int or float\) or None, got str"),
    Case("BloomIndex.vacuum", lambda bi, df, spark: bi.vacuum("z", retain_hours=True), T,
         r"^vacuum: retain_hours must be a number of hours .*got bool"),
    Case("BloomIndex.vacuum", lambda bi, df, spark: bi.vacuum("z", retain_hours=-1), V,
         r"^vacuum: retain_hours: expected 0 or more hours, got -1"),
    Case("BloomIndex.vacuum", lambda bi, df, spark: bi.vacuum("z", retain_hours=float("nan")), V,
         r"^vacuum: retain_hours: expected 0 or more hours, got nan"),
    Case("BloomIndex.refresh", lambda bi, df, spark: bi.refresh(None), T, r"^refresh: name must be a str .*got NoneType"),
    Case("BloomIndex.refresh", lambda bi, df, spark: bi.refresh(""), V, r"^refresh: name must not be empty"),
    Case("BloomIndex.refresh", lambda bi, df, spark: bi.refresh("z", True), T,
         r"^refresh: mode must be 'incremental' or 'full' \(a str\), got bool"),
    Case("BloomIndex.refresh", lambda bi, df, spark: bi.refresh("z", mode="bogus"), V,
         r"^refresh: mode: expected 'incremental' or 'full', got 'bogus'"),

    Case("BloomIndex.drop", lambda bi, df, spark: bi.drop(["z"]), T, r"^drop: name must be a str .*got list"),
    Case("BloomIndex.drop", lambda bi, df, spark: bi.drop(""), V, r"^drop: name must not be empty"),
    Case("BloomIndex.drop", lambda bi, df, spark: bi.drop("z", if_exists="yes"), T, r"^drop: if_exists must be True or False, got str"),

    Case("BloomIndex.describe", lambda bi, df, spark: bi.describe(3.5), T, r"^describe: name must be a str .*got float"),
    Case("BloomIndex.describe", lambda bi, df, spark: bi.describe(" "), V, r"^describe: name must not be empty"),
    Case("BloomIndex.describe", lambda bi, df, spark: bi.describe("z", extended=1), T,
         r"^describe: extended must be True or False, got int"),

    Case("BloomIndex.explain", lambda bi, df, spark: bi.explain("SELECT 1"), T,
         r"^explain: df must be a DataFrame \(spark.sql\(query\) makes one from SQL text\), got str"),
    Case("BloomIndex.explain", lambda bi, df, spark: bi.explain(None), T, r"^explain: df must be a DataFrame, got NoneType"),

    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter({"a": 1}, "k", "i", "c"), T,
         r"^prefilter: df must be a DataFrame, got dict"),
    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter(df, 5, "i", "c"), T,
         r"^prefilter: key must be a column name \(str\) or a Column, got int"),
    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter(df, "id", 5, "c"), T, r"^prefilter: index must be a str"),
    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter(df, "id", "", "c"), V, r"^prefilter: index must not be empty"),
    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter(df, "id", "i", None), T,
         r"^prefilter: column must be a str \(index and column are names\), got NoneType"),
    Case("BloomIndex.prefilter", lambda bi, df, spark: bi.prefilter(df, "id", "i", "c", allow_stale="no"), T,
         r"^prefilter: allow_stale must be True or False, got str"),

    Case("BloomIndex.join_filter_metrics", lambda bi, df, spark: bi.join_filter_metrics(None), T,
         r"^join_filter_metrics: df must be a DataFrame, got NoneType"),
    Case("BloomIndex.join_filter_metrics", lambda bi, df, spark: bi.join_filter_metrics(df.collect()), T,
         r"^join_filter_metrics: df must be a DataFrame, got list"),

    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(5), T, r"^recommend: source must be a str or None, got int"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend("/p"), V,
         r"^recommend: source: not a table name: '/p' \(for a path, give source_format\)"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(query=df), T, r"^recommend: query must be a str or None, got DataFrame"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(query=" "), V, r"^recommend: query must not be empty"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(budget=1.5), T,
         r"^recommend: budget must be an int \(bytes\), a size such as '512m', or None, got float"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(budget=True), T, r"^recommend: budget must be .*got bool"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(budget="lots"), V,
         r"^recommend: budget must be a size such as '512m', '2g' or a number of bytes, got 'lots'"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(budget=0), V, r"^recommend: budget must be > 0 bytes, got 0"),
    # Spark's size strings allow no space between the number and the unit (the JVM refused it).
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(budget="512 m"), V,
         r"^recommend: budget must be a size such as '512m', '2g' or a number of bytes, got '512 m'"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend("/p", source_format=3), T,
         r"^recommend: source_format must be a str or None, got int"),
    Case("BloomIndex.recommend", lambda bi, df, spark: bi.recommend(source_format="parquet"), V,
         r"^recommend: source_format needs a source \(the path\)"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if(5, "SELECT 1"), T,
         r"^what_if: columns must be a str or a sequence of str, got int"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if(["a", 1], "SELECT 1"), T,
         r"^what_if: columns must be a str or a sequence of str, got int"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if([], "SELECT 1"), V, r"^what_if: columns must name at least one column"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if("a", None), T, r"^what_if: query must be a str, got NoneType"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if("a", "SELECT 1", fpp="0.1"), T,
         r"^what_if: fpp must be a number \(float or int\), got str"),
    Case("BloomIndex.what_if", lambda bi, df, spark: bi.what_if("a", "SELECT 1", fpp=1.0), V, r"^what_if: fpp must be in \(0, 1\), got 1.0"),
    Case("BloomIndex.plot_recommendations", lambda bi, df, spark: BloomIndex.plot_recommendations("x"), T,
         r"^plot_recommendations: recommendations must be a DataFrame of BloomIndex.recommend\(\) or its rows, got str"),
    Case("BloomIndex.plot_recommendations", lambda bi, df, spark: BloomIndex.plot_recommendations([], ax=3), T,
         r"^plot_recommendations: ax must be matplotlib Axes or None, got int"),

    Case("might_contain", lambda bi, df, spark: might_contain(1, "c", "k"), T,
         r"^might_contain: index must be a str \(index and column are names\), got int"),
    Case("might_contain", lambda bi, df, spark: might_contain("i", None, "k"), T,
         r"^might_contain: column must be a str \(index and column are names\), got NoneType"),
    Case("might_contain", lambda bi, df, spark: might_contain("i", "", "k"), V, r"^might_contain: column must not be empty"),
    Case("might_contain", lambda bi, df, spark: might_contain("i", "c", 3), T,
         r"^might_contain: key must be a column name \(str\) or a Column, got int"),
    Case("might_contain", lambda bi, df, spark: might_contain("i", "c", "k", allow_stale=1), T,
         r"^might_contain: allow_stale must be True or False, got int"),

    Case("configure", lambda bi, df, spark: bloomindex.configure(5), T,
         r"^configure: builder must be a SparkSession.Builder such as SparkSession.builder, got int"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(spark), T,
         r"^configure: builder must be a SparkSession.Builder .*\(configure the builder before getOrCreate\(\)\), got SparkSession"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), kernel=1), T,
         r"^configure: kernel must be 'vector', 'scalar' or None, got int"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), kernel="gpu"), V,
         r"^kernel: expected 'vector', 'scalar' or None, got 'gpu'"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), delta="yes"), T,
         r"^configure: delta must be True or False, got str"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), iceberg=1), T,
         r"^configure: iceberg must be True or False, got int"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), iceberg_catalogs=["local"]), T,
         r"^configure: iceberg_catalogs must be a dict of catalog name -> dict of settings, or None, got list"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), iceberg=True, iceberg_catalogs={"a.b": {}}), V,
         r"^iceberg_catalogs: bad catalog name 'a.b'"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), iceberg=True, iceberg_catalogs={"c": "x"}), T,
         r"^configure: iceberg_catalogs\['c'\] must be a dict of settings, got str"),
    Case("configure", lambda bi, df, spark: bloomindex.configure(_Builder(), iceberg_catalogs={"c": {}}), V,
         r"^iceberg_catalogs: Iceberg catalogs need iceberg=True"),
]


def _design_cases(cls: type, make: Callable[[], Any]) -> list[Case]:
    """The filter designs' checks (bloomindex.sbbf, .filters, .hashing: pure Python, no JVM)."""
    n = cls.__name__
    return [
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv("10", 0.01), T, r"^ndv: must be an int >= 0, got str '10'"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(10.0, 0.01), T, r"^ndv: must be an int >= 0, got float"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(-1, 0.01), V, r"^ndv: must be an integer >= 0, got -1"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(10, "0.01"), T, r"^fpp: must be a number \(float\) in \(0, 1\), got str '0.01'"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(10, True), T, r"^fpp: must be a number .*got bool"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(10, 1.5), V, r"^fpp: must be in \(0, 1\), got 1.5"),
        Case(f"{n}.for_ndv", lambda *a: cls.for_ndv(10, 0.1, power_of_two="y"), T,
             r"^power_of_two: must be True or False, got str 'y'"),
        Case(f"{n}.insert", lambda *a: make().insert([1], 5), T,
             r"^spark_type: must be a str, a Spark SQL type name such as 'bigint' .*got int"),
        Case(f"{n}.insert", lambda *a: make().insert([1], "nope"), V, r"^spark_type: unknown or unsupported Spark SQL type 'nope'"),
        Case(f"{n}.insert", lambda *a: make().insert(5, "bigint"), T,
             r"^values: must be an iterable of values \(a list, tuple, ...\) or a NumPy array, got int"),
        Case(f"{n}.insert", lambda *a: make().insert("abc", "string"), T,
             r"^values: must be an iterable of values or a NumPy array, got one str \(pass \[value\]"),
        Case(f"{n}.insert", lambda *a: make().insert([1, "2"], "bigint"), T, r"^values: '2' is not an integer \(str; bigint takes ints\)"),
        Case(f"{n}.insert", lambda *a: make().insert([300], "tinyint"), V, r"^values: 300 is out of range for tinyint"),
        Case(f"{n}.check", lambda *a: make().check([1], 5), T, r"^spark_type: must be a str, a Spark SQL type name"),
        Case(f"{n}.check", lambda *a: make().check(5, "bigint"), T, r"^values: must be an iterable of values .*got int"),
        Case(f"{n}.might_contain", lambda *a: make().might_contain(1, 5), T, r"^spark_type: must be a str, a Spark SQL type name"),
        Case(f"{n}.might_contain", lambda *a: make().might_contain(None, "bigint"), V, r"^value: None is never in a Bloom filter"),
        Case(f"{n}.might_contain", lambda *a: make().might_contain("x", "bigint"), T, r"^values: 'x' is not an integer"),
        Case(f"{n}.merge", lambda *a: make().merge(5), T, rf"^other: must be an? {n} of 64 bytes.*, got int"),
        Case(f"{n}.merge", lambda *a: make().merge(Sbbf(64) if cls is not Sbbf else SbbfMurmur3(64)), T,
             rf"^other: must be an? {n} of 64 bytes.*, got Sbbf"),
        Case(f"{n}.merge", lambda *a: make().merge(cls(128) if cls is not ClassicBloomFilter else cls(128, 3)), V,
             r"^other: cannot merge"),
        Case(f"{n}.expected_fpp", lambda *a: make().expected_fpp("x"), T, r"^ndv: must be an int >= 0, got str 'x'"),
        Case(f"{n}.expected_fpp", lambda *a: make().expected_fpp(-1), V, r"^ndv: must be an integer >= 0, got -1"),
        *[Case(f"{n}.{method}", lambda *a, method=method, arg=arg: getattr(make(), method)(arg), T,
               r"^hashes: must be 64-bit hashes: a numpy array of uint64 \(or other integers\), or a list or tuple of ints, "
               rf"got {got}")
          for method in ("insert_hashes", "check_hashes")
          for arg, got in ((["x"], r"list NumPy reads as <U1"), ([1, 2.5], r"float 2.5 in a list"),
                           ([1, None], r"NoneType None in a list"), (np.array([1.0]), r"an array of float64"),
                           ("x", r"str"), (None, r"NoneType"))],
        *[Case(f"{n}.{method}", lambda *a, method=method: getattr(make(), method)([-1, 2**64 - 1]), V,
               r"^hashes: must be 64-bit hashes, ints in \[0, 2\*\*64\)")
          for method in ("insert_hashes", "check_hashes")],
    ]


FILTER_CASES = [
    Case("Sbbf", lambda *a: Sbbf("64"), T, r"^num_bytes: must be an int, a multiple of 32 .*got str '64'"),
    Case("Sbbf", lambda *a: Sbbf(64.0), T, r"^num_bytes: must be an int, a multiple of 32 .*got float"),
    Case("Sbbf", lambda *a: Sbbf(100), V, r"^num_bytes: must be a multiple of 32 .*got 100"),
    Case("SbbfMurmur3", lambda *a: SbbfMurmur3("x"), T, r"^num_bytes: must be an int, a power of two .*got str 'x'"),
    Case("SbbfMurmur3", lambda *a: SbbfMurmur3(96), V, r"^num_bytes: must be a power of two .*got 96"),
    Case("ClassicBloomFilter", lambda *a: ClassicBloomFilter("x", 3), T, r"^num_bytes: must be an int, a multiple of 8 .*got str 'x'"),
    Case("ClassicBloomFilter", lambda *a: ClassicBloomFilter(12, 3), V, r"^num_bytes: must be a multiple of 8 .*got 12"),
    Case("ClassicBloomFilter", lambda *a: ClassicBloomFilter(64, "x"), T, r"^num_hashes: must be an int between 1 and 64, got str 'x'"),
    Case("ClassicBloomFilter", lambda *a: ClassicBloomFilter(64, True), T, r"^num_hashes: must be an int .*got bool"),
    Case("ClassicBloomFilter", lambda *a: ClassicBloomFilter(64, 65), V, r"^num_hashes: must be between 1 and 64, got 65"),
    Case("Sbbf.deserialize", lambda *a: Sbbf.deserialize(5), T,
         r"^data: must be bytes, bytearray or memoryview \(a serialized filter\), got int"),
    Case("Sbbf.deserialize", lambda *a: Sbbf.deserialize("x"), T, r"^data: must be bytes.*got str"),
    Case("Sbbf.deserialize", lambda *a: Sbbf.deserialize(Sbbf(64).serialize()[:-1]), V,
         r"^data: header says 64 bytes of bit set, 63 follow"),
    Case("SbbfMurmur3.deserialize", lambda *a: SbbfMurmur3.deserialize(5), T, r"^data: must be bytes.*got int"),
    Case("SbbfMurmur3.deserialize", lambda *a: SbbfMurmur3.deserialize(bytes(5)), V, r"^data: "),
    Case("ClassicBloomFilter.deserialize", lambda *a: ClassicBloomFilter.deserialize(None), T, r"^data: must be bytes.*got NoneType"),
    Case("ClassicBloomFilter.deserialize", lambda *a: ClassicBloomFilter.deserialize(b""), V, r"^data: "),
    Case("hash_value", lambda *a: bloomindex.hash_value(1, 5), T, r"^spark_type: must be a str, a Spark SQL type name .*got int"),
    Case("hash_value", lambda *a: bloomindex.hash_value(1, "bigint", 5), T, r"^hash_name: must be a str \('xxh64' or 'murmur3'\), got int"),
    Case("hash_value", lambda *a: bloomindex.hash_value(1, "bigint", "md5"), V, r"^hash_name: expected one of xxh64, murmur3"),
    Case("hash_value", lambda *a: bloomindex.hash_value(None, "bigint"), V, r"^value: None has no hash"),
    Case("hash_value", lambda *a: bloomindex.hash_value(1.5, "string"), T, r"^values: 1.5 is not a str \(float; string takes str\)"),
    Case("hash_values", lambda *a: bloomindex.hash_values([1], "bigint", "md5"), V, r"^hash_name: expected one of"),
    Case("hash_values", lambda *a: bloomindex.hash_values(5, "bigint"), T, r"^values: must be an iterable of values .*got int"),
    Case("hash_values", lambda *a: bloomindex.hash_values(b"ab", "binary"), T, r"^values: .*got one bytes \(pass \[value\]"),
    Case("hash_values", lambda *a: bloomindex.hash_values(["x"], "bigint"), T, r"^values: 'x' is not an integer"),
    Case("hash_values", lambda *a: bloomindex.hash_values(np.array(["x"]), "double"), T, r"^values: must be numbers, got an array of <U1"),
    Case("hash_values", lambda *a: bloomindex.hash_values([1.5], "decimal(5,2)"), T, r"^values: 1.5 is not a decimal \(float; pass"),
    Case("hash_values", lambda *a: bloomindex.hash_values([dt.date(2020, 1, 1)], "timestamp"), T,
         r"^values: .* is a date, not a datetime \(timestamp takes datetime.datetime"),
    Case("hash_values", lambda *a: bloomindex.hash_values([Decimal("1.234")], "decimal(5,2)"), V,
         r"^values: 1.234 has more than 2 fractional digits"),
    Case("hash_values", lambda *a: bloomindex.hash_values([1], 5), T, r"^spark_type: must be a str"),
    Case("hash_values", lambda *a: bloomindex.hash_values([1], "boolean"), V, r"^spark_type: boolean cannot be held"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp("x", 10), T, r"^num_bytes: must be an int, a multiple of 32.*got str"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(100, 10), V, r"^num_bytes: must be a multiple of 32.*got 100"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, "x"), T, r"^ndv: must be an int >= 0, got str"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, 10, 5), T,
         r"^algorithm: must be a str \('sbbf', 'sbbf-murmur3' or 'classic'\), got int"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, 10, "cuckoo"), V, r"^algorithm: expected one of"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, 10, "classic"), V, r"^fpp: the classic design's rate depends on k"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, 10, "classic", fpp="0.1"), T, r"^fpp: must be a number.*got str"),
    Case("expected_fpp", lambda *a: bloomindex.expected_fpp(64, 10, "sbbf", fpp=[0.1]), T, r"^fpp: must be a number.*got list"),
    Case("optimal_num_bytes", lambda *a: bloomindex.optimal_num_bytes("x", 0.1), T, r"^ndv: must be an int >= 0, got str"),
    Case("optimal_num_bytes", lambda *a: bloomindex.optimal_num_bytes(10, None), T, r"^fpp: must be a number.*got NoneType"),
    Case("optimal_num_bytes", lambda *a: bloomindex.optimal_num_bytes(10, 2.0), V, r"^fpp: must be in \(0, 1\), got 2.0"),
    Case("optimal_num_bytes", lambda *a: bloomindex.optimal_num_bytes(10, 0.1, "y"), T,
         r"^power_of_two: must be True or False, got str 'y'"),
    *_design_cases(Sbbf, lambda: Sbbf(64)),
    *_design_cases(SbbfMurmur3, lambda: SbbfMurmur3(64)),
    *_design_cases(ClassicBloomFilter, lambda: ClassicBloomFilter(64, 3)),
]


def _id(case: Case) -> str:
    return f"{case.target}:{case.error.__name__}:{case.message[:60]}"


class _NoBackend:
    """A backend that fails the test when called: the checks come before any JVM call or SQL."""

    def __getattr__(self, name):
        raise AssertionError(f"the backend's {name} was called before the arguments were checked")


@pytest.fixture()
def bi(spark):
    b = BloomIndex(spark, progress=False)
    b._backend = _NoBackend()
    return b


@pytest.fixture()
def df(spark):
    return spark.range(3)


@pytest.fixture()
def no_column_calls(monkeypatch):
    """might_contain and prefilter build their Column only after the checks."""
    from pyspark.sql import functions as F

    def fail(*args, **kwargs):
        raise AssertionError("a Column was built before the arguments were checked")

    for name in ("call_function", "col", "lit"):
        monkeypatch.setattr(F, name, fail)


def _raises(case: Case, *args: Any) -> None:
    """``case.error`` exactly: a wrong type is a TypeError and not a ValueError, a wrong value the reverse."""
    with pytest.raises(case.error, match=case.message) as e:
        case.call(*args)
    if case.error is ValueError:
        assert not isinstance(e.value, TypeError), "a wrong value is a ValueError, not a TypeError"
    else:
        assert not isinstance(e.value, ValueError), "a wrong type is a TypeError, not a ValueError"


@pytest.mark.parametrize("case", BI_CASES, ids=_id)
def test_wrong_arguments_are_refused_before_any_jvm_call_or_sql(case, bi, df, spark, no_column_calls):
    _raises(case, bi, df, spark)


@pytest.mark.parametrize("case", FILTER_CASES, ids=_id)
def test_the_filter_designs_refuse_wrong_arguments_naming_them(case):
    _raises(case)


def _public_callables() -> set[str]:
    """What bloomindex.__all__ exports that takes arguments: functions, classes' constructors,
    and their public methods (inherited ones too), as ``Class`` and ``Class.method``."""
    out = set()
    for name in bloomindex.__all__:
        obj = getattr(bloomindex, name)
        if inspect.isfunction(obj):
            if inspect.signature(obj).parameters:
                out.add(name)
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            if len(inspect.signature(obj.__init__).parameters) > 1:
                out.add(name)
            for attr, member in inspect.getmembers(obj):
                if attr.startswith("_") or not callable(member):
                    continue
                params = [p for p in inspect.signature(member).parameters if p not in ("self", "cls")]
                if params and inspect.getmodule(member).__name__.startswith("bloomindex"):
                    out.add(f"{name}.{attr}")
    return out


def test_the_cases_walk_the_whole_public_api():
    walked = {c.target for c in BI_CASES + FILTER_CASES}
    public = _public_callables()
    assert len(public) > 40
    assert public - walked == set(), "public callables without a wrong-argument case"
    assert walked - public == set(), "cases of callables that are not public"
    # Every parameter of every public callable is named by a case.
    for target in walked:
        obj = bloomindex
        for part in target.split("."):
            obj = getattr(obj, part)
        fn = obj.__init__ if inspect.isclass(obj) else obj
        params = [p for p, v in inspect.signature(fn).parameters.items() if p != "self" and v.kind != v.VAR_KEYWORD]
        messages = " ".join(c.message for c in BI_CASES + FILTER_CASES if c.target == target)
        missing = [p for p in params if p not in messages]
        assert not missing, f"{target}: no case names {missing}"
