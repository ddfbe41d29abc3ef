"""Join pre-filtering from global Bloom filters: the answer with the join filter on always
equals the answer with it off; the filter goes where it may (and only there), runs as
BloomFilterExec on the scan's batches or on rows, and says what it did."""

from __future__ import annotations

import datetime as dt
import os
import random
import re

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import Row, functions as F, types as T

from bloomindex import BloomIndex, might_contain

FACT_ROWS = 6000
KEY_SPACE = 1200
ENABLED = "spark.bloomindex.joinFilter.enabled"

FACT_SCHEMA = T.StructType([
    T.StructField("k", T.LongType()), T.StructField("ki", T.IntegerType()),
    T.StructField("s", T.StringType()), T.StructField("d", T.DateType()),
    T.StructField("x", T.DoubleType()), T.StructField("v", T.LongType())])
DIM_SCHEMA = T.StructType([
    T.StructField("k", T.LongType()), T.StructField("ki", T.IntegerType()),
    T.StructField("s", T.StringType()), T.StructField("d", T.DateType()),
    T.StructField("x", T.DoubleType()), T.StructField("cat", T.StringType())])

EPOCH = dt.date(2020, 1, 1)


def _fact_rows(rng: random.Random) -> list:
    rows = []
    for i in range(FACT_ROWS):
        k = rng.randrange(KEY_SPACE)
        nullk = i % 97 == 0
        rows.append(Row(None if nullk else k, None if nullk else k, None if i % 89 == 0 else f"s{k}",
                        EPOCH + dt.timedelta(days=k), k / 2, i))
    return rows


def _dim_keys() -> list[int]:
    # A tenth of the key space, a few keys twice (duplicate matches), and keys beyond it.
    keys = list(range(0, KEY_SPACE, 10)) + list(range(0, 200, 50)) + [KEY_SPACE + 5, 10**12]
    return keys


def _dim_rows() -> list:
    rows = [Row(k, k if k < 2**31 else None, f"s{k}", EPOCH + dt.timedelta(days=k % 100000), k / 2, "ab"[k % 2])
            for k in _dim_keys()]
    rows.append(Row(None, None, None, None, None, "a"))  # null keys never match
    return rows


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("join_indexes"))
    spark.conf.set("spark.bloomindex.root", root)
    base = tmp_path_factory.mktemp("join")
    fact, dim, other = str(base / "fact"), str(base / "dim"), str(base / "dim_noglobal")
    spark.createDataFrame(_fact_rows(random.Random(7)), FACT_SCHEMA).repartition(4).write.parquet(fact)
    spark.createDataFrame(_dim_rows(), DIM_SCHEMA).repartition(2).write.parquet(dim)
    spark.createDataFrame(_dim_rows(), DIM_SCHEMA).write.parquet(other)
    spark.read.parquet(fact).createOrReplaceTempView("fact")
    spark.read.parquet(dim).createOrReplaceTempView("dim")
    spark.read.parquet(other).createOrReplaceTempView("dim_noglobal")
    spark.sql(f"CREATE BLOOM INDEX dim_idx ON parquet.`{dim}` FOR COLUMNS (k, ki, s, d, x) "
              "OPTIONS (global = true, fpp = 0.01)")
    spark.sql(f"CREATE BLOOM INDEX dim_noglobal_idx ON parquet.`{other}` FOR COLUMNS (k)")
    yield {"fact": fact, "dim": dim, "root": root}
    spark.conf.unset("spark.bloomindex.root")
    spark.conf.unset(ENABLED)


def _rows(df) -> list:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _filtered(df) -> bool:
    return "bloom_might_contain" in df._jdf.queryExecution().optimizedPlan().toString()


def _both(spark, query: str):
    """(rows with the join filter, rows without it, whether the filter was applied)."""
    spark.conf.set(ENABLED, "true")
    on = spark.sql(query)
    applied = _filtered(on)
    rows_on = _rows(on)
    spark.conf.set(ENABLED, "false")
    off = spark.sql(query)
    assert not _filtered(off)
    rows_off = _rows(off)
    spark.conf.set(ENABLED, "true")
    return rows_on, rows_off, applied


APPLIED = [
    "SELECT f.v, d.cat FROM fact f JOIN dim d ON f.k = d.k",
    "SELECT f.v, d.cat FROM dim d JOIN fact f ON d.k = f.k",                        # indexed side on the left
    "SELECT f.v FROM fact f LEFT SEMI JOIN dim d ON f.k = d.k",
    "SELECT v FROM fact WHERE k IN (SELECT k FROM dim)",                            # IN (subquery) rewrite
    "SELECT v FROM fact f WHERE EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k)",
    "SELECT d.cat, f.v FROM dim d LEFT JOIN fact f ON d.k = f.k",                   # fact supplies nulls
    "SELECT d.cat, f.v FROM fact f RIGHT JOIN dim d ON f.k = d.k",
    "SELECT f.v, d.cat FROM fact f JOIN dim d ON f.k = d.k AND f.s = d.s",          # two key columns
    "SELECT f.v FROM fact f JOIN dim d ON f.ki = d.ki",                             # int keys
    "SELECT f.v FROM fact f JOIN dim d ON f.k = d.ki",                              # int column, bigint key
    "SELECT f.v FROM fact f JOIN dim d ON f.ki = d.k",                              # bigint column, int key
    "SELECT f.v FROM fact f JOIN dim d ON f.s = d.s",
    "SELECT f.v FROM fact f JOIN dim d ON f.d = d.d",
    "SELECT f.v FROM fact f JOIN dim d ON f.k + 1 = d.k",                           # computed key
    "SELECT f.v, d.cat FROM fact f JOIN (SELECT * FROM dim WHERE cat = 'a') d ON f.k = d.k",
    "SELECT f.v, d.n FROM fact f JOIN (SELECT k, count(*) AS n FROM dim GROUP BY k) d ON f.k = d.k",
    "SELECT f.v FROM (SELECT k AS key, v FROM fact WHERE v % 3 = 0) f JOIN (SELECT k AS key2 FROM dim) d ON f.key = d.key2",
    "SELECT f.k, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.k",
    "SELECT f1.v FROM fact f1 JOIN dim d ON f1.k = d.k JOIN fact f2 ON f2.v = f1.v",
]

NOT_APPLIED = [
    "SELECT f.v, d.cat FROM fact f LEFT JOIN dim d ON f.k = d.k",                   # fact preserved
    "SELECT f.v, d.cat FROM dim d RIGHT JOIN fact f ON d.k = f.k",
    "SELECT f.v, d.cat FROM fact f FULL OUTER JOIN dim d ON f.k = d.k",
    "SELECT f.v FROM fact f LEFT ANTI JOIN dim d ON f.k = d.k",
    "SELECT v FROM fact WHERE k NOT IN (SELECT k FROM dim)",
    "SELECT v FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k)",
    "SELECT f.v FROM fact f JOIN dim d ON f.k <=> d.k",                             # null-safe equality
    "SELECT f.v FROM fact f JOIN dim d ON f.x = d.x",                               # double keys
    "SELECT f.v FROM fact f JOIN dim d ON f.k = d.k + 1",                           # not the column itself
    "SELECT f.v FROM fact f JOIN (SELECT k FROM dim UNION ALL SELECT k FROM fact) d ON f.k = d.k",
    "SELECT f.v FROM fact f JOIN dim_noglobal d ON f.k = d.k",                      # no global filter
    "SELECT f.v FROM fact f JOIN dim d ON cast(f.k AS string) = cast(d.k AS string)",  # not a widening
    "SELECT f.v FROM fact f JOIN fact g ON f.k = g.k AND g.v < 10",                 # nothing indexed
]


@pytest.mark.parametrize("query", APPLIED)
def test_join_filter_applied_and_answer_unchanged(spark, tables, query):
    on, off, applied = _both(spark, query)
    assert applied, query
    assert on == off
    assert on, "the query should return rows"


@pytest.mark.parametrize("query", NOT_APPLIED)
def test_join_filter_stays_out(spark, tables, query):
    on, off, applied = _both(spark, query)
    assert not applied, query
    assert on == off


def test_random_joins_differential(spark, tables):
    """Random join shapes over random key ranges: never a different answer."""
    rng = random.Random(11)
    shapes = ["JOIN", "LEFT SEMI JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN", "LEFT ANTI JOIN"]
    keys = [("k", "k"), ("ki", "ki"), ("s", "s"), ("d", "d"), ("k", "ki"), ("ki", "k")]
    applied_count = 0
    for _ in range(int(os.environ.get("BLOOMINDEX_JOIN_QUERIES", "12"))):
        shape, (fk, dk) = rng.choice(shapes), rng.choice(keys)
        lo = rng.randrange(KEY_SPACE)
        sel = "f.v" if "SEMI" in shape or "ANTI" in shape else "f.v, d.cat"
        q = (f"SELECT {sel} FROM (SELECT * FROM fact WHERE k >= {lo}) f {shape} "
             f"(SELECT * FROM dim WHERE cat = '{rng.choice('ab')}') d ON f.{fk} = d.{dk}")
        on, off, applied = _both(spark, q)
        assert on == off, q
        applied_count += applied
    assert applied_count > 0


def test_operator_metrics_columnar_input(spark, tables):
    bi = BloomIndex(spark)
    df = spark.sql("SELECT f.v, d.cat FROM fact f JOIN dim d ON f.k = d.k")
    matches = len(df.collect())
    assert "BloomFilter [dim_idx.k" in df._jdf.queryExecution().executedPlan().toString()
    [m] = bi.join_filter_metrics(df)
    assert m["numInputRows"] == FACT_ROWS  # below the scan's other filters: every row of the files
    in_dim = spark.sql("SELECT count(*) FROM fact WHERE k IN (SELECT k FROM dim)").head()[0]
    assert in_dim <= m["numOutputRows"] < FACT_ROWS / 4  # 1 in 10 keys plus false positives
    assert matches >= in_dim


def test_operator_row_input(spark, tables):
    """Without the vectorized reader the operator buffers and checks rows."""
    spark.conf.set("spark.sql.parquet.enableVectorizedReader", "false")
    try:
        on, off, applied = _both(spark, "SELECT f.v, d.cat FROM fact f JOIN dim d ON f.k = d.k AND f.s = d.s")
        assert applied and on == off
        df = spark.sql("SELECT f.v FROM fact f JOIN dim d ON f.k = d.k")
        df.collect()
        [m] = BloomIndex(spark).join_filter_metrics(df)
        assert m["numInputRows"] == FACT_ROWS and m["numOutputRows"] < FACT_ROWS / 4
    finally:
        spark.conf.unset("spark.sql.parquet.enableVectorizedReader")


FAILING_KEYS = [
    # ANSI: a division by zero and a bad cast on the rows the query's WHERE drops ...
    "SELECT f.v, d.cat FROM fact f JOIN dim d ON 6000 DIV (f.k % 7) = d.k WHERE f.k % 7 <> 0",
    "SELECT f.v, d.cat FROM fact f JOIN dim d ON CAST(IF(f.k % 7 = 0, 'x', CAST(f.k AS STRING)) AS BIGINT) = d.k "
    "WHERE f.k % 7 <> 0",
    # ... and on the rows an inner join below the filtered one drops.
    "SELECT f.v, d.cat FROM fact f JOIN (SELECT DISTINCT k FROM fact WHERE k % 7 <> 0) g ON f.k = g.k "
    "JOIN dim d ON 6000 DIV (f.k % 7) = d.k",
]


@pytest.mark.parametrize("vectorized", ["true", "false"])
@pytest.mark.parametrize("query", FAILING_KEYS)
def test_a_key_that_fails_only_on_rows_the_query_drops_fails_nothing(spark, tables, query, vectorized):
    """The check runs below the query's other filters and joins: a key that cannot be computed
    on a row (an ANSI error) lets the row through, and the error is raised, or not, where
    Spark raises it without the index."""
    spark.conf.set("spark.sql.ansi.enabled", "true")
    spark.conf.set("spark.sql.parquet.enableVectorizedReader", vectorized)
    try:
        on, off, applied = _both(spark, query)
        assert applied, query
        assert on == off and on
        df = spark.sql(query)
        df.collect()
        [m] = BloomIndex(spark).join_filter_metrics(df)
        assert m["numOutputRows"] < m["numInputRows"] / 2  # the other rows are still checked
        # A row that reaches the join with a failing key still fails the query, as without the index.
        with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
            spark.sql("SELECT f.v FROM fact f JOIN dim d ON 6000 DIV (f.k % 7) = d.k").collect()
        # A check written by hand fails as Spark's own filter would.
        with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
            spark.sql("SELECT k FROM fact WHERE bloom_might_contain('dim_idx', 'k', 6000 DIV (k % 7)) AND v >= 0").collect()
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
        spark.conf.unset("spark.sql.parquet.enableVectorizedReader")


def test_a_key_on_partition_columns_is_left_to_dynamic_partition_pruning(spark, tables, tmp_path):
    """A check whose key reads only the other side's partition columns would be evaluated on
    partition values when the scan lists its files, outside the operator: without its run-time
    test of the indexed side's files and its tolerance of failing keys. It is not added; a key
    on a data column of the same table still is."""
    path = str(tmp_path / "fact_by_p")
    spark.range(0, 400).selectExpr("id * 3 AS k", "id % 8 AS p", "id % 4 AS q", "id AS v") \
        .write.partitionBy("p").parquet(path)
    spark.read.parquet(path).createOrReplaceTempView("fact_by_p")
    bi = BloomIndex(spark)
    on, off, applied = _both(spark, "SELECT f.v, d.cat FROM fact_by_p f JOIN dim d ON f.p = d.k")
    assert not applied and on == off and on
    report = bi.explain(spark.sql("SELECT f.v, d.cat FROM fact_by_p f JOIN dim d ON f.p = d.k"))
    assert "the key reads only partition columns" in report, report
    q = "SELECT f.v, d.cat FROM fact_by_p f JOIN dim d ON f.k = d.k AND f.p = d.ki"
    on, off, applied = _both(spark, q)
    assert applied and on == off and on  # the data column k still filters, the partition column p not
    plan = spark.sql(q)._jdf.queryExecution().optimizedPlan().toString()
    assert "checks f.k" in bi.explain(spark.sql(q)) and "checks f.p" not in bi.explain(spark.sql(q)), plan
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        # A key failing on partition p=0, whose rows the WHERE drops.
        on, off, applied = _both(spark, "SELECT f.v, d.cat FROM fact_by_p f JOIN dim d ON 60 DIV f.p = d.k WHERE f.q <> 0")
        assert not applied and on == off and on
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")


def test_a_local_relation_is_not_checked(spark, tables):
    """Spark filters the rows of a VALUES list while it optimizes the query: a check there would
    miss its run-time test of the indexed side's files, so none is added."""
    q = "SELECT v.x, d.cat FROM VALUES (10), (11), (20) AS v(x) JOIN dim d ON v.x = d.k"
    on, off, applied = _both(spark, q)
    assert not applied and on == off and on
    assert "local rows" in BloomIndex(spark).explain(spark.sql(q))


def test_a_plan_with_a_partition_key_run_after_the_indexed_side_changed(spark, tables, tmp_path):
    """Planned, then the indexed side gets a new key (a catalog table's INSERT, no refresh), then
    run: the rows matching the new key are there, as without the filter."""
    on, off = _planned_then_indexed_side_changed(
        spark, tmp_path, "fact_by_p2", "dim_t", "k BIGINT, cat STRING", "(1, 'a'), (2, 'b')", "(4, 'new')",
        "SELECT f.v, d.cat FROM fact_by_p2 f JOIN dim_t d ON f.p = d.k")
    assert on == off and sum(1 for r in on if r[1] == "new") == 10


def _planned_then_indexed_side_changed(spark, tmp_path, fact: str, dim: str, dim_schema: str, rows: str,
                                       new_rows: str, q: str) -> tuple:
    """(rows with the join filter, rows without) of `q` planned (optimized) with the filter on and
    off over view `fact` (80 rows, partitioned by p = v % 8) and catalog table `dim` (`rows`, its
    `k` indexed with a global filter, refreshed by hand), then run after `new_rows` were inserted
    into `dim` with no refresh."""
    path = str(tmp_path / fact)
    spark.range(0, 80).selectExpr("id AS v", "id % 8 AS p").write.partitionBy("p").parquet(path)
    spark.read.parquet(path).createOrReplaceTempView(fact)
    spark.sql(f"DROP TABLE IF EXISTS {dim}")
    try:
        spark.sql(f"CREATE TABLE {dim} ({dim_schema}) USING parquet")
        spark.sql(f"INSERT INTO {dim} VALUES {rows}")
        spark.sql(f"CREATE BLOOM INDEX {dim}_idx ON {dim} FOR COLUMNS (k) OPTIONS (global = true, refresh = 'manual')")
        planned = {}
        for enabled in ("false", "true"):
            spark.conf.set(ENABLED, enabled)
            planned[enabled] = spark.sql(q)
            planned[enabled]._jdf.queryExecution().optimizedPlan()
        spark.conf.set(ENABLED, "true")
        spark.sql(f"INSERT INTO {dim} VALUES {new_rows}")
        return _rows(planned["true"]), _rows(planned["false"])
    finally:
        spark.conf.set(ENABLED, "true")
        spark.sql(f"DROP TABLE IF EXISTS {dim}")


def test_an_index_created_again_after_its_folder_was_removed_is_another_history(spark, tables, tmp_path):
    """Its log starts again at the same versions: the driver must not take the filters it loaded
    of the first history (global filters, index columns) for the second's."""
    import shutil
    even, odd = str(tmp_path / "dim_even"), str(tmp_path / "dim_odd")
    spark.range(0, 300).selectExpr("id * 2 AS k").write.parquet(even)
    spark.range(0, 300).selectExpr("id * 2 + 1 AS k").write.parquet(odd)
    create = "CREATE BLOOM INDEX dim_again ON parquet.`{}` FOR COLUMNS (k) OPTIONS (global = true, refresh = 'manual')"
    spark.sql(create.format(even))
    q_even = f"SELECT f.v FROM fact f JOIN parquet.`{even}` d ON f.k = d.k"
    on, off, applied = _both(spark, q_even)
    assert applied and on == off and on
    assert spark.sql(f"SELECT count(*) FROM parquet.`{even}` WHERE k = 10").head()[0] == 1  # a pruned lookup loads k
    shutil.rmtree(os.path.join(tables["root"], "dim_again"))
    spark.sql(create.format(odd))
    q_odd = f"SELECT f.v FROM fact f JOIN parquet.`{odd}` d ON f.k = d.k"
    on, off, applied = _both(spark, q_odd)
    assert applied and on == off and on
    for k in (11, 10):
        q = f"SELECT k FROM parquet.`{odd}` WHERE k = {k}"
        with_index = _rows(spark.sql(q))
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
        assert with_index == _rows(spark.sql(q))
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    spark.sql("DROP BLOOM INDEX dim_again")


def test_filter_sits_below_the_exchange(spark, tables):
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        df = spark.sql("SELECT f.v, d.cat FROM fact f JOIN dim d ON f.k = d.k")
        df.collect()
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert "SortMergeJoin" in plan
        lines = plan.splitlines()
        bf = next(i for i, l in enumerate(lines) if "BloomFilter [" in l)
        exchanges = [i for i, l in enumerate(lines) if "Exchange hashpartitioning(k" in l]
        assert any(i < bf for i in exchanges), plan  # the exchange is above the filter
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_explain_reports_join_filter(spark, tables):
    bi = BloomIndex(spark)
    report = bi.explain(spark.sql("SELECT f.v FROM fact f JOIN dim d ON f.k = d.k"))
    assert "join filter: index dim_idx (log version" in report and "global filter of k" in report
    # The other direction (dim's rows against fact's k) has no filter, and the note says which rows.
    assert re.search(r"join filter not applied: the rows of \S+/dim \(key \S*k\) not checked against \S+/fact\.k: "
                     r"no index with a global filter", report), report
    report = bi.explain(spark.sql("SELECT f.v FROM fact f JOIN dim d ON f.x = d.x"))
    assert "join filter not applied" in report and "floating point" in report, report
    report = bi.explain(spark.sql("SELECT f.v FROM fact f JOIN dim_noglobal d ON f.k = d.k"))
    assert "no index with a global filter" in report


def test_stale_index_is_left_alone_until_refresh(spark, tables, tmp_path):
    dim2 = str(tmp_path / "dim2")
    spark.createDataFrame(_dim_rows(), DIM_SCHEMA).write.parquet(dim2)
    spark.sql(f"CREATE BLOOM INDEX dim2_idx ON parquet.`{dim2}` FOR COLUMNS (k) OPTIONS (global = true)")
    q = f"SELECT f.v, d.cat FROM fact f JOIN parquet.`{dim2}` d ON f.k = d.k"
    on, off, applied = _both(spark, q)
    assert applied and on == off
    # New keys arrive in a new file: the filter no longer holds every key of the side.
    spark.createDataFrame([Row(k, None, None, None, None, "c") for k in range(1, KEY_SPACE, 10)],
                          DIM_SCHEMA).write.mode("append").parquet(dim2)
    on, off, applied = _both(spark, q)
    assert not applied
    assert on == off and any(r[1] == "c" for r in on)
    assert "stale" in BloomIndex(spark).explain(spark.sql(q))
    spark.sql("REFRESH BLOOM INDEX dim2_idx")
    on, off, applied = _both(spark, q)
    assert applied and on == off and any(r[1] == "c" for r in on)


def test_disabled_by_conf(spark, tables):
    spark.conf.set(ENABLED, "false")
    try:
        assert not _filtered(spark.sql("SELECT f.v FROM fact f JOIN dim d ON f.k = d.k"))
    finally:
        spark.conf.set(ENABLED, "true")


def test_sql_function(spark, tables):
    dim_keys = set(_dim_keys())
    rows = spark.sql("SELECT k, bloom_might_contain('dim_idx', 'k', k) AS m FROM fact").collect()
    assert all(r.m is None for r in rows if r.k is None)
    assert all(r.m for r in rows if r.k in dim_keys)
    absent = [r for r in rows if r.k is not None and r.k not in dim_keys]
    assert sum(1 for r in absent if r.m) < len(absent) * 0.05
    # As a WHERE conjunct it runs as the bulk operator, with the same answer.
    df = spark.sql("SELECT k FROM fact WHERE bloom_might_contain('dim_idx', 'k', k) AND v >= 0")
    got = sorted(r.k for r in df.collect())
    assert got == sorted(r.k for r in rows if r.m)
    assert "BloomFilter [dim_idx.k" in df._jdf.queryExecution().executedPlan().toString()
    # Other key types, exactly converted.
    assert spark.sql("SELECT bloom_might_contain('dim_idx', 'k', 10)").head()[0] is True
    assert spark.sql("SELECT bloom_might_contain('dim_idx', 'ki', 10L)").head()[0] is True
    assert spark.sql("SELECT bloom_might_contain('dim_idx', 'ki', 10000000000L)").head()[0] is False
    assert spark.sql("SELECT bloom_might_contain('dim_idx', 's', 's10')").head()[0] is True


@pytest.mark.parametrize("call, message", [
    ("bloom_might_contain('nope', 'k', k)", "does not exist"),
    ("bloom_might_contain('dim_idx', 'cat', k)", "has no column 'cat'"),
    ("bloom_might_contain('dim_noglobal_idx', 'k', k)", "no global filters"),
    ("bloom_might_contain('dim_idx', 'k')", "takes 3 arguments"),
    ("bloom_might_contain(s, 'k', k)", "must be a string literal"),
    ("bloom_might_contain('dim_idx', 'k', x)", "cannot check"),
    ("bloom_might_contain('dim_idx', 's', k)", "cannot check"),
    ("bloom_might_contain('../x', 'k', k)", "Invalid Bloom index name"),
])
def test_sql_function_errors(spark, tables, call, message):
    with pytest.raises(AnalysisException, match=message):
        spark.sql(f"SELECT {call} FROM fact").collect()


def test_python_helpers(spark, tables):
    fact = spark.table("fact")
    got = sorted(r.k for r in fact.filter(might_contain("dim_idx", "k", "k")).select("k").collect())
    want = sorted(r.k for r in spark.sql(
        "SELECT k FROM fact WHERE bloom_might_contain('dim_idx', 'k', k)").collect())
    assert got == want and set(_dim_keys()) & set(got)
    pre = BloomIndex(spark).prefilter(fact, F.col("ki"), "dim_idx", "ki")
    assert pre.count() == spark.sql("SELECT * FROM fact WHERE bloom_might_contain('dim_idx', 'ki', ki)").count()
    with pytest.raises(TypeError, match="names"):
        might_contain("dim_idx", None, "k")


def test_a_stream_stream_join_is_not_filtered(spark, tables, tmp_path):
    """A stream-stream join keeps each side's rows as state and matches them with the other
    side's rows of later batches: a row of the first batch whose key the indexed side's files do
    not hold yet must still meet the row that arrives later, as without the filter."""
    a, b = str(tmp_path / "sa"), str(tmp_path / "sb")
    spark.createDataFrame([(7, "a7")], "k BIGINT, a STRING").write.parquet(a)
    spark.createDataFrame([(1, "b1")], "k BIGINT, b STRING").write.parquet(b)
    spark.sql(f"CREATE BLOOM INDEX stream_b_ix ON parquet.`{b}` FOR COLUMNS (k) OPTIONS (global = true, refresh = 'manual')")
    # The same join as a batch query is filtered: the index and its global filter are usable.
    batch = (spark.read.parquet(a).join(spark.read.parquet(b), "k"))
    assert "join filter: index stream_b_ix" in BloomIndex(spark).explain(batch)
    queries = {}
    try:
        for enabled in ("true", "false"):
            spark.conf.set(ENABLED, enabled)  # a streaming query takes the session's settings at its start
            left = spark.readStream.schema("k BIGINT, a STRING").parquet(a)
            right = spark.readStream.schema("k BIGINT, b STRING").parquet(b)
            queries[enabled] = (left.join(right, "k").writeStream.format("memory").queryName(f"stream_join_{enabled}")
                                .option("checkpointLocation", str(tmp_path / f"ck_{enabled}")).start())
        for q in queries.values():
            q.processAllAvailable()
        spark.createDataFrame([(7, "b7")], "k BIGINT, b STRING").write.mode("append").parquet(b)
        for q in queries.values():
            q.processAllAvailable()
        on = sorted(tuple(r) for r in spark.table("stream_join_true").collect())
        off = sorted(tuple(r) for r in spark.table("stream_join_false").collect())
        assert off == [(7, "a7", "b7")]
        assert on == off
    finally:
        spark.conf.set(ENABLED, "true")
        for q in queries.values():
            q.stop()


def test_a_literal_in_subquery_run_after_the_indexed_side_changed(spark, tables, tmp_path):
    """`5 IN (SELECT k FROM dim)` reads no column of the outer side: a check of it would be a
    partition filter the scan applies when it lists its files, without the check's test, when
    the plan runs, that the indexed side still holds what its filter does. Planned, then the
    indexed side gets the key (no refresh), then run: every row, as without the filter."""
    on, off = _planned_then_indexed_side_changed(
        spark, tmp_path, "fact_lit", "dim_lit", "k BIGINT", "(1), (2)", "(5)",
        "SELECT v FROM fact_lit WHERE 5 IN (SELECT k FROM dim_lit)")
    assert len(off) == 80 and on == off
