"""File pruning: the answer with pruning on always equals the answer with it off, and
pruning happens where it should (files kept counted, EXPLAIN, inputFiles, explain report)."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import random

import pytest
from pyspark.sql import Row, types as T

from bloomindex import BloomIndex
from index_helpers import assert_batch_same_with_pruning_off, assert_same_with_pruning_off, fresh_driver

N_QUERIES = int(os.environ.get("BLOOMINDEX_DIFF_QUERIES", "100"))
# The same random predicates on a V2 scan (nightly: 1,000).
V2_QUERIES = int(os.environ.get("BLOOMINDEX_V2_QUERIES", "75"))
# Predicates answered per query, each in a UNION ALL branch of its own (index_helpers.batched_answers).
DIFF_BATCH = 25
# The test hook choosing how a pruning decision holds the files it skips (catalog/SkippedFiles).
SKIPPED_PATHS_MAX = "spark.internal.bloomindex.test.skippedPathsMax"

COLUMNS = [  # name, Spark type, generator of a value from an int "key"
    ("c_int", T.IntegerType(), lambda k: k * 7 - 300),
    ("c_bigint", T.LongType(), lambda k: k * 1_000_003 - 5),
    ("c_tiny", T.ByteType(), lambda k: k % 200 - 100),
    ("c_str", T.StringType(), lambda k: f"s{k}" if k % 11 else ("" if k % 2 else "日本")),
    ("c_double", T.DoubleType(), lambda k: [0.0, -0.0, float("nan"), float("inf")][k % 4] if k % 17 == 0 else k / 4),
    ("c_float", T.FloatType(), lambda k: -0.0 if k % 19 == 0 else k / 8),
    ("c_date", T.DateType(), lambda k: dt.date(1960, 1, 1) + dt.timedelta(days=k * 3)),
    ("c_ts", T.TimestampType(), lambda k: dt.datetime(1969, 12, 31, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=k * 1_000_001)),
    ("c_dec", T.DecimalType(10, 2), lambda k: decimal.Decimal(k * 13 - 900).scaleb(-2)),
    ("c_bigdec", T.DecimalType(25, 3), lambda k: decimal.Decimal(k * 10**15 + 7).scaleb(-3)),
    ("c_bin", T.BinaryType(), lambda k: bytes([k % 256, k // 256 % 256])),
]
KEYS = 1500


def _value(col_idx: int, key: int, rng: random.Random):
    if rng.random() < 0.05:
        return None
    return COLUMNS[col_idx][2](key)


def _rows(rng: random.Random, keys: range) -> list:
    rows = []
    for k in keys:
        # Each column gets a key near the row's own, so files hold disjoint-ish value ranges.
        vals = [_value(i, k + rng.choice([0, 0, 0, 1, -1]) if k > 0 else k, rng) for i in range(len(COLUMNS))]
        rows.append(Row(*vals, k % 3, k // 100))
    return rows


SCHEMA = T.StructType([T.StructField(n, t, True) for n, t, _ in COLUMNS]
                      + [T.StructField("part", T.LongType(), True), T.StructField("bucket", T.LongType(), True)])


@pytest.fixture(scope="module")
def diff_table(spark, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("diff_indexes"))
    spark.conf.set("spark.bloomindex.root", root)
    rng = random.Random(20261121)
    path = str(tmp_path_factory.mktemp("diff") / "t")
    (spark.createDataFrame(_rows(rng, range(KEYS)), SCHEMA)
     .repartition(12, "bucket").drop("bucket").write.partitionBy("part").parquet(path))
    spark.read.parquet(path).createOrReplaceTempView("diff_t")
    cols = ", ".join(n for n, _, _ in COLUMNS)
    spark.sql(f"CREATE BLOOM INDEX diff_idx ON parquet.`{path}` FOR COLUMNS ({cols}) OPTIONS (fpp = 0.01)")
    yield path
    spark.conf.unset("spark.bloomindex.root")


def _sql_literal(name: str, t: T.DataType, v) -> str:
    if v is None:
        return "NULL"
    if isinstance(t, T.StringType):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(t, T.DoubleType):
        return f"double('{v}')" if v != v or v in (float("inf"), float("-inf")) or (v == 0 and str(v).startswith("-")) else f"{v!r}D"
    if isinstance(t, T.FloatType):
        return f"float('{v}')"
    if isinstance(t, T.ByteType):
        return f"{v}Y"
    if isinstance(t, T.LongType):
        return f"{v}L"
    if isinstance(t, T.DateType):
        return f"DATE'{v.isoformat()}'"
    if isinstance(t, T.TimestampType):
        return f"TIMESTAMP'{v.astimezone(dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(t, T.DecimalType):
        return f"CAST('{v}' AS DECIMAL({t.precision},{t.scale}))"
    if isinstance(t, T.BinaryType):
        return "X'" + v.hex() + "'"
    return str(v)


def _random_predicate(rng: random.Random, depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.4:
        op = rng.choice(["AND", "OR"])
        return f"({_random_predicate(rng, depth + 1)} {op} {_random_predicate(rng, depth + 1)})"
    i = rng.randrange(len(COLUMNS))
    name, t, gen = COLUMNS[i]
    def lit():
        # Mostly values that exist, sometimes ones that do not, sometimes edge values.
        key = rng.randrange(KEYS) if rng.random() < 0.7 else rng.randrange(KEYS, 3 * KEYS)
        return _sql_literal(name, t, gen(key))
    kind = rng.random()
    if kind < 0.35:
        return f"{name} = {lit()}" if rng.random() < 0.5 else f"{lit()} = {name}"
    if kind < 0.6:
        return f"{name} IN ({', '.join(lit() for _ in range(rng.choice([1, 2, 3, 12, 40])))})"
    if kind < 0.7:
        return f"{name} <=> {lit() if rng.random() < 0.8 else 'NULL'}"
    if kind < 0.78:
        return f"{name} IS NULL"
    if kind < 0.84:
        return f"{name} IS NOT NULL"
    if kind < 0.9:
        return f"part = {rng.randrange(3)}"  # a partition predicate mixed in
    if kind < 0.95:
        return f"NOT ({name} = {lit()})"  # not translatable: must never prune
    return f"{name} = {lit()} OR c_int > {rng.randrange(-300, 10000)}"  # a range in an OR: no pruning


def _answer(spark, where: str, pruning: bool):
    spark.conf.set("spark.bloomindex.pruning.enabled", str(pruning).lower())
    df = spark.sql(f"SELECT count(*) AS n, sum(hash(*)) AS h FROM diff_t WHERE {where}")
    return tuple(df.collect()[0])


def test_differential_random_predicates(spark, diff_table):
    rng = random.Random(1121)
    total = len(spark.read.parquet(diff_table).inputFiles())
    pruned_queries = 0
    wheres = [_random_predicate(rng) for _ in range(N_QUERIES)]
    try:
        for b, start in enumerate(range(0, N_QUERIES, DIFF_BATCH)):
            # Every other batch with the decision held as positions (a bit per indexed file, what
            # a scan skipping more than 4,096 files gets) instead of paths.
            spark.conf.set(SKIPPED_PATHS_MAX, "0" if b % 2 else "4096")
            assert_batch_same_with_pruning_off(spark, "diff_t", wheres[start:start + DIFF_BATCH])
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        for where in wheres[::10]:
            if len(spark.sql(f"SELECT * FROM diff_t WHERE {where}").inputFiles()) < total:
                pruned_queries += 1
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
        spark.conf.unset(SKIPPED_PATHS_MAX)
    # The test must exercise pruning, not just agree without it.
    assert pruned_queries >= N_QUERIES // 10 // 4, pruned_queries


def test_point_lookups_read_only_matching_files(spark, diff_table):
    df = spark.read.parquet(diff_table)
    total = len(df.inputFiles())
    for name, t, gen in COLUMNS:
        if name in ("c_double", "c_float", "c_tiny"):  # low-cardinality or special values
            continue
        v = _sql_literal(name, t, gen(777))
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        q = spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE {name} = {v}")
        kept = len(q.inputFiles())
        assert kept <= 4, (name, kept, total)
        assert q.count() == _answer(spark, f"{name} = {v}", False)[0]
    spark.conf.unset("spark.bloomindex.pruning.enabled")
    absent = spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE c_bigint = -42")
    assert len(absent.inputFiles()) <= 1 and absent.count() == 0


def test_explain_and_report(spark, diff_table):
    q = spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE c_int = {7 * 777 - 300}")
    plan = "\n".join(r[0] for r in spark.sql(
        f"EXPLAIN SELECT * FROM parquet.`{diff_table}` WHERE c_int = {7 * 777 - 300}").collect())
    assert "BloomPrunedFileIndex" in plan and "bloomindex://diff_idx/kept-" in plan
    formatted = "\n".join(r[0] for r in spark.sql(
        f"EXPLAIN FORMATTED SELECT * FROM parquet.`{diff_table}` WHERE c_int = {7 * 777 - 300}").collect())
    assert "bloomindex://diff_idx/kept-" in formatted
    assert "BloomIndexPruned [index=diff_idx" in plan
    report = BloomIndex(spark).explain(q)
    assert "index diff_idx" in report and "kept" in report
    # The SQL metrics of the scan, as the Spark UI shows them.
    q.collect()
    store = spark._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    last = executions.apply(executions.size() - 1)
    values = store.executionMetrics(last.executionId())
    metrics = {m.name(): values.apply(m.accumulatorId())
               for m in spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(last.metrics())
               if "Bloom index" in m.name()}
    total = len(spark.read.parquet(diff_table).inputFiles())
    kept = len(q.inputFiles())
    assert metrics == {"files skipped by Bloom index": str(total - kept), "files kept by Bloom index": str(kept)}
    nothing = BloomIndex(spark).explain(
        spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE c_int > 5 OR c_str = 'x'"))
    assert "not applied: diff_idx: predicate shape" in nothing and "no index applied" in nothing
    assert diff_table.split("/")[-1] in report


def test_pruning_can_be_turned_off_and_skips_nothing_then(spark, diff_table):
    total = len(spark.read.parquet(diff_table).inputFiles())
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        assert len(spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE c_int = 1").inputFiles()) == total
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def test_new_files_are_read_until_refresh_and_deleted_files_drop_out(spark, diff_table, tmp_path):
    # A copy of the table, so the shared one stays as indexed.
    path = str(tmp_path / "copy")
    spark.read.parquet(diff_table).write.partitionBy("part").parquet(path)
    spark.sql(f"CREATE BLOOM INDEX copy_idx ON parquet.`{path}` FOR COLUMNS (c_bigint)")
    key = 123456789
    (spark.createDataFrame([Row(*([None] * len(COLUMNS)), 1)], SCHEMA.fields[:-1] and T.StructType(SCHEMA.fields[:-1]))
     .selectExpr(*[f"{n}" if n != "c_bigint" else f"{key}L AS c_bigint" for n, _, _ in COLUMNS], "part")
     .write.mode("append").partitionBy("part").parquet(path))
    q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE c_bigint = {key}")
    assert q.count() == 1  # the new, unindexed file is read
    spark.sql("REFRESH BLOOM INDEX copy_idx")
    assert spark.sql(f"SELECT * FROM parquet.`{path}` WHERE c_bigint = {key}").count() == 1
    assert len(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE c_bigint = {key}").inputFiles()) == 1


def test_v2_file_scans_are_pruned_and_stay_correct(spark, diff_table):
    spark.conf.set("spark.sql.sources.useV1SourceList", "")
    try:
        spark.read.parquet(diff_table).createOrReplaceTempView("diff_t")  # now a V2 scan
        rng = random.Random(7)
        wheres = [_random_predicate(rng) for _ in range(V2_QUERIES)]
        for start in range(0, len(wheres), DIFF_BATCH):
            assert_batch_same_with_pruning_off(spark, "diff_t", wheres[start:start + DIFF_BATCH])
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        q = spark.read.parquet(diff_table).where(f"c_int = {7 * 777 - 300}")
        report = BloomIndex(spark).explain(q)
        kept, total = report.split(" kept ")[1].split(" ")[0].split("/")
        assert "index diff_idx" in report and int(kept) <= 4 < int(total), report
        plan = q._jdf.queryExecution().executedPlan().toString()
        assert "BatchScan" in plan and "BloomPrunedV2FileIndex" in plan, plan
        assert q.count() == _answer(spark, f"c_int = {7 * 777 - 300}", False)[0]
    finally:
        spark.conf.unset("spark.sql.sources.useV1SourceList")
        spark.conf.unset("spark.bloomindex.pruning.enabled")
        spark.read.parquet(diff_table).createOrReplaceTempView("diff_t")


def test_damaged_index_means_no_pruning_not_a_failed_query(spark, tmp_path, root):
    path = str(tmp_path / "dmg")
    spark.range(100).selectExpr("id", "cast(id as string) s").repartition(4).write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX dmg_idx ON parquet.`{path}` FOR COLUMNS (id)")
    assert len(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = 5").inputFiles()) < 4
    fresh_driver(spark)  # what this driver loaded would still answer: its files are intact
    log_dir = os.path.join(root, "dmg_idx", "_log")
    for f in os.listdir(log_dir):
        with open(os.path.join(log_dir, f), "w") as out:
            out.write("{ not json")
    q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = 5")
    assert q.count() == 1 and len(q.inputFiles()) == 4


@pytest.mark.parametrize("where,max_kept", [
    ("c_bigint = {b}", 4),
    ("{b} = c_bigint", 4),
    ("c_bigint IN ({b}, {b2})", 8),
    ("c_bigint IN ({many})", 8),  # ten keys of one bucket: its files in each partition
    ("c_bigint <=> {b}", 4),
    ("c_bigint = {b} AND c_str = 's{k}'", 4),
    ("c_bigint = {b} OR c_str = 's{k2}'", 8),
    ("(c_bigint = {b} OR c_int = {i2}) AND c_str IS NOT NULL", 8),
])
def test_each_predicate_shape_prunes(spark, diff_table, where, max_kept):
    k, k2 = 777, 1111
    gen = dict((n, g) for n, _, g in COLUMNS)
    sql_where = where.format(b=f"{gen['c_bigint'](k)}L", b2=f"{gen['c_bigint'](k2)}L", k=k, k2=k2,
                             i2=gen["c_int"](k2),
                             many=", ".join(f"{gen['c_bigint'](x)}L" for x in range(100, 110)))
    spark.conf.set("spark.bloomindex.pruning.enabled", "true")
    q = spark.sql(f"SELECT * FROM parquet.`{diff_table}` WHERE {sql_where}")
    total = len(spark.read.parquet(diff_table).inputFiles())
    assert len(q.inputFiles()) <= max_kept < total
    assert q.count() == _answer(spark, sql_where, False)[0]
    spark.conf.unset("spark.bloomindex.pruning.enabled")


def test_is_null_prunes_files_without_nulls(spark, tmp_path):
    path = str(tmp_path / "nulls")
    spark.range(400).selectExpr("id", "CASE WHEN id = 3 THEN NULL ELSE id END AS v").repartition(4, "id") \
        .write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX nulls_idx ON parquet.`{path}` FOR COLUMNS (v)")
    q = spark.sql(f"SELECT id FROM parquet.`{path}` WHERE v IS NULL")
    assert [r.id for r in q.collect()] == [3] and len(q.inputFiles()) == 1
    q = spark.sql(f"SELECT id FROM parquet.`{path}` WHERE v <=> NULL")
    assert [r.id for r in q.collect()] == [3] and len(q.inputFiles()) == 1


@pytest.mark.parametrize("fmt", ["orc", "csv", "json"])
def test_other_formats_prune(spark, tmp_path, fmt):
    path = str(tmp_path / fmt)
    spark.range(400).selectExpr("cast(id as string) AS k").repartition(4, "k").write.format(fmt).save(path)
    col = "_c0" if fmt == "csv" else "k"
    spark.sql(f"CREATE BLOOM INDEX {fmt}_idx ON {fmt}.`{path}` FOR COLUMNS ({col})")
    q = spark.sql(f"SELECT * FROM {fmt}.`{path}` WHERE {col} = '123'")
    assert q.count() == 1 and len(q.inputFiles()) == 1


@pytest.mark.parametrize("fmt", ["orc", "csv", "json"])
def test_other_formats_prune_reads_inside_the_indexed_folder(spark, tmp_path, fmt):
    """A partition's folder of an indexed ORC, CSV or JSON folder, read by path: same rows as
    with pruning off, and only the files that may hold the value."""
    path = str(tmp_path / f"{fmt}_parts")
    (spark.range(600).selectExpr("cast(id as string) AS k", "id % 2 AS part").repartition(6, "k")
        .write.partitionBy("part").format(fmt).save(path))
    col = "_c0" if fmt == "csv" else "k"
    spark.sql(f"CREATE BLOOM INDEX {fmt}_in_idx ON {fmt}.`{path}` FOR COLUMNS ({col})")
    part = os.path.join(path, "part=1")
    read = lambda: spark.read.format(fmt).load(part)  # noqa: E731
    total = len(read().inputFiles())
    for value, rows in [("123", 1), ("124", 0), ("nope", 0)]:
        assert len(assert_same_with_pruning_off(spark, lambda v=value: read().where(f"{col} = '{v}'"))) == rows
        assert len(read().where(f"{col} = '{value}'").inputFiles()) <= rows + 1 < total
    spark.sql(f"DROP BLOOM INDEX {fmt}_in_idx")


@pytest.mark.parametrize("paths_max", ["4096", "0"], ids=["paths", "positions"])
def test_deleted_and_changed_files_without_refresh(spark, tmp_path, paths_max):
    spark.conf.set(SKIPPED_PATHS_MAX, paths_max)
    try:
        _deleted_and_changed_files(spark, tmp_path, f"churn_{paths_max}_idx")
    finally:
        spark.conf.unset(SKIPPED_PATHS_MAX)


def _deleted_and_changed_files(spark, tmp_path, name):
    path = str(tmp_path / "churn")
    spark.range(400).selectExpr("id").repartition(4, "id").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (id)")
    files = sorted(f for f in os.listdir(path) if f.endswith(".parquet"))
    holder = [f for f in files if spark.read.parquet(os.path.join(path, f)).where("id = 42").count()][0]
    os.remove(os.path.join(path, holder))
    os.remove(os.path.join(path, f".{holder}.crc"))
    q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = 42")
    assert q.count() == 0 and len(q.inputFiles()) <= 1  # the deleted file is simply gone
    # A file rewritten in place with new values is not vouched for by the index: it is read.
    other = [f for f in files if f != holder][0]
    spark.range(1000, 1001).coalesce(1).write.parquet(str(tmp_path / "new"))
    new = [f for f in os.listdir(tmp_path / "new") if f.endswith(".parquet")][0]
    os.replace(str(tmp_path / "new" / new), os.path.join(path, other))
    os.replace(str(tmp_path / "new" / f".{new}.crc"), os.path.join(path, f".{other}.crc"))
    q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = 1000")
    assert q.count() == 1


def test_both_sides_of_a_join_and_a_subquery_are_pruned(spark, diff_table):
    spark.conf.set("spark.bloomindex.pruning.enabled", "true")
    try:
        b = COLUMNS[1][2](777)
        join = spark.sql(f"""
            SELECT a.c_int, b.c_str FROM parquet.`{diff_table}` a JOIN diff_t b ON a.c_int = b.c_int
            WHERE a.c_bigint = {b}L AND b.c_bigint = {b}L""")
        expected_join = sorted(join.collect())
        # After execution the adaptive plan is final and shows both marked scans.
        plan = join._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
        assert plan.count("BloomIndexPruned [index=diff_idx") == 2, plan
        assert plan.count("bloomindex://diff_idx/kept-") == 2, plan
        sub = spark.sql(f"""
            SELECT count(*) FROM diff_t WHERE c_int IN
              (SELECT c_int FROM parquet.`{diff_table}` WHERE c_bigint = {b}L)""")
        expected_sub = sub.collect()
        sub_plan = sub._jdf.queryExecution().executedPlan().toString()
        assert "BloomIndexPruned [index=diff_idx" in sub_plan
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
        assert sorted(spark.sql(f"""
            SELECT a.c_int, b.c_str FROM parquet.`{diff_table}` a JOIN diff_t b ON a.c_int = b.c_int
            WHERE a.c_bigint = {b}L AND b.c_bigint = {b}L""").collect()) == expected_join
        assert spark.sql(f"""
            SELECT count(*) FROM diff_t WHERE c_int IN
              (SELECT c_int FROM parquet.`{diff_table}` WHERE c_bigint = {b}L)""").collect() == expected_sub
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def test_partitioned_catalog_table_differential(spark, diff_table):
    spark.sql("DROP TABLE IF EXISTS diff_cat")
    spark.read.parquet(diff_table).write.partitionBy("part").saveAsTable("diff_cat")
    spark.sql("CREATE BLOOM INDEX diff_cat_idx ON diff_cat FOR COLUMNS (c_bigint, c_str)")
    try:
        rng = random.Random(99)
        wheres = [_random_predicate(rng) for _ in range(100)]
        for start in range(0, len(wheres), DIFF_BATCH):
            assert_batch_same_with_pruning_off(spark, "diff_cat", wheres[start:start + DIFF_BATCH])
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        b = COLUMNS[1][2](777)
        total = len(spark.table("diff_cat").inputFiles())
        q = spark.sql(f"SELECT * FROM diff_cat WHERE c_bigint = {b}L AND part = {777 % 3}")
        assert len(q.inputFiles()) <= 2 < total
        assert "index diff_cat_idx" in BloomIndex(spark).explain(q)
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
        spark.sql("DROP BLOOM INDEX IF EXISTS diff_cat_idx")


def test_reads_inside_an_indexed_folder_are_pruned_by_its_index(spark, tmp_path):
    """An index over a folder answers for reads by path of what lies inside it: a partition's
    folder (with and without basePath), a glob, two partitions, one file, in SQL too. Same rows
    as with pruning off, fewer files read where the value is absent from most of them; a join
    on the partition's rows keeps its answer."""
    path = str(tmp_path / "t")
    (spark.range(0, 2400, numPartitions=8).selectExpr("id AS k", "cast(id * 7 AS string) AS s", "id % 3 AS part")
        .repartition(24, "k").write.partitionBy("part").parquet(path))
    spark.sql(f"CREATE BLOOM INDEX inside ON parquet.`{path}` FOR COLUMNS (k, s)")
    one_file = next(os.path.join(path, "part=1", f) for f in sorted(os.listdir(os.path.join(path, "part=1")))
                    if f.endswith(".parquet"))
    one_k = spark.read.parquet(one_file).first().k
    reads = {
        "folder": lambda: spark.read.parquet(os.path.join(path, "part=1")),
        "basePath": lambda: spark.read.option("basePath", path).parquet(os.path.join(path, "part=1")),
        "glob": lambda: spark.read.parquet(os.path.join(path, "part=*")),
        "two": lambda: spark.read.parquet(os.path.join(path, "part=1"), os.path.join(path, "part=2")),
        "file": lambda: spark.read.parquet(one_file),
        "sql": lambda: spark.sql(f"SELECT * FROM parquet.`{os.path.join(path, 'part=1')}`"),
    }
    wheres = [f"k = {one_k}", f"s = '{one_k * 7}'", "k = 1000", f"k IN ({one_k}, 2, 5, 99999)", "k = -1", "s = 'nope'"]
    pruned = set()
    for name, read in reads.items():
        total = len(read().inputFiles())
        for where in wheres:
            rows = assert_same_with_pruning_off(spark, lambda: read().where(where))
            kept = len(read().where(where).inputFiles())
            if kept < total:
                pruned.add(name)
            if where in ("k = -1", "s = 'nope'"):
                assert rows == [] and (total == 1 or kept < total), (name, where, kept, total)
        assert "index inside" in BloomIndex(spark).explain(read().where(f"k = {one_k}")) or total == 1, name
    assert pruned >= {"folder", "basePath", "glob", "two", "sql"}, pruned
    # A join whose other side is a partition's read keeps its answer.
    other = spark.range(0, 3000, 7).selectExpr("id AS k")
    assert_same_with_pruning_off(spark, lambda: read_join(spark, reads["folder"](), other))
    # SHOW ... ON a partition's folder lists the folder's index; DROP ... ON it does not drop it.
    part = os.path.join(path, "part=1")
    assert [r.name for r in spark.sql(f"SHOW BLOOM INDEXES ON parquet.`{part}`").collect()] == ["inside"]
    with pytest.raises(Exception, match="BLOOM_FILTER_INDEX_NOT_FOUND"):
        spark.sql(f"DROP BLOOMFILTER INDEX ON parquet.`{part}`")
    assert [r.name for r in spark.sql("SHOW BLOOM INDEXES").collect() if r.name == "inside"] == ["inside"]
    spark.sql("DROP BLOOM INDEX inside")


def read_join(spark, left, right):
    return left.join(right, "k").select("k", "s")


def test_a_partition_read_whose_column_type_differs_from_the_index_is_not_pruned_on_it(spark, tmp_path):
    """Files of one partition hold `k` as INT, the others as BIGINT: the index (over the whole
    folder) reads and hashes `k` as BIGINT; a read of the INT partition alone types `k` INT and
    must not be answered from the BIGINT hashes. The same rows as with pruning off."""
    path = str(tmp_path / "w")
    spark.range(0, 300, numPartitions=3).selectExpr("id AS k").write.parquet(os.path.join(path, "x=1"))
    spark.range(300, 600, numPartitions=3).selectExpr("cast(id AS int) AS k").write.parquet(os.path.join(path, "x=2"))
    assert dict(spark.read.parquet(path).dtypes)["k"] == "bigint"
    spark.sql(f"CREATE BLOOM INDEX widened ON parquet.`{path}` FOR COLUMNS (k)")
    part = os.path.join(path, "x=2")
    assert dict(spark.read.parquet(part).dtypes)["k"] == "int"
    for where in ["k = 400", "k = 5", "k IN (301, 599, 7)", "k = -1"]:
        assert_same_with_pruning_off(spark, lambda: spark.read.parquet(part).where(where))
    assert sorted(r.k for r in spark.read.parquet(part).where("k IN (301, 599)").collect()) == [301, 599]
    spark.sql("DROP BLOOM INDEX widened")
