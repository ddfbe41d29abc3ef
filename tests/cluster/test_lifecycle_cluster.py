"""An index's life on executors of their own, under Kryo (the session's `spark.serializer`): text
filters, a write that refreshes its `on_write` index in Spark's write tasks, an incremental
REFRESH, OPTIMIZE, the `columns` layout loaded by Spark jobs, and the advisor; every query the
same with pruning on and off. What these run on executors (closures, broadcasts, task results,
accumulators) is serialized between JVMs here, which the `local[2]` suite never does."""

from __future__ import annotations

import pytest

from index_helpers import assert_filters_hold_values, assert_same_with_pruning_off, fresh_driver

FILES = 8
ROWS = 2000


def _rows(spark, start: int, n: int, parts: int):
    from pyspark.sql import functions as F

    return (spark.range(start, start + n, 1, parts)
            .select("id",
                    F.concat(F.lit("user-"), (F.col("id") % 300).cast("string")).alias("s"),
                    # Tokens and pages of 100 consecutive ids each: in one or two files.
                    F.concat(F.lit("GET took "), (F.col("id") % 50).cast("string"), F.lit(" ms token"),
                             F.floor(F.col("id") / 100).cast("string"), F.lit(" end")).alias("msg"),
                    F.concat(F.lit("https://x.io/p"), F.floor(F.col("id") / 100).cast("string"),
                             F.lit("/view")).alias("url")))


@pytest.fixture()
def life(spark, root):
    _rows(spark, 0, ROWS, FILES).write.format("parquet").saveAsTable("life")
    yield "life"
    spark.sql("DROP TABLE IF EXISTS life")


QUERIES = ["id = 1234", "s IN ('user-7', 'nobody')", "msg LIKE '% token17 end%'", "url LIKE '%/p7/%'",
           "id = 999999 OR s = 'user-299'", "contains(msg, 'took 49 ms')"]


def _differential(spark, table: str) -> dict:
    """Per query, the number of files read with pruning on (the rows are the same as off)."""
    read = {}
    for where in QUERIES:
        q = f"SELECT * FROM {table} WHERE {where}"
        rows = assert_same_with_pruning_off(spark, lambda: spark.sql(q))
        assert rows, q  # every query matches rows
        read[where] = len(spark.sql(q).inputFiles())
    return read


def _describe(spark, name: str) -> dict:
    return dict(tuple(r) for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect())


def test_an_index_lives_on_executors_under_kryo(spark, root, life):
    assert spark.sparkContext.getConf().get("spark.serializer").endswith("KryoSerializer")
    assert spark.sparkContext.getConf().get("spark.kryo.registrationRequired") == "true"
    # Rows from more tasks than maxProbeFiles: the build sizes its probe files in a job of its own,
    # whose task results went through Kryo as an array Spark had not registered before.
    spark.conf.set("spark.bloomindex.refresh.maxProbeFiles", "2")
    try:
        spark.sql("CREATE BLOOM INDEX life_idx ON life FOR COLUMNS (id, s, msg USING TOKENS, url USING NGRAMS (3)) "
                  "OPTIONS (global = true, refresh = 'on_write')")  # the cluster session's default: manual
    finally:
        spark.conf.unset("spark.bloomindex.refresh.maxProbeFiles")
    assert _describe(spark, "life_idx")["files_indexed"] == str(FILES)
    before = _differential(spark, "life")
    # ids 700 to 799 (the page and the token) are in 2 of the 8 files.
    assert before["id = 1234"] == 1 and before["url LIKE '%/p7/%'"] == 2, before
    assert before["msg LIKE '% token17 end%'"] == 2, before

    # A write to the table refreshes its on_write index (filters built in Spark's write tasks).
    _rows(spark, ROWS, 500, 2).write.mode("append").format("parquet").saveAsTable("life")
    files = len(spark.table("life").inputFiles())
    assert files > FILES
    assert _describe(spark, "life_idx")["files_indexed"] == str(files)
    after_write = _differential(spark, "life")
    assert after_write["id = 1234"] == 1, after_write

    # Files written behind the catalog's back (not a Spark write of this table): an incremental REFRESH.
    location = spark.sql("DESCRIBE FORMATTED life").where("col_name = 'Location'").first()[1]
    _rows(spark, ROWS + 500, 300, 1).write.mode("append").parquet(location)
    spark.sql("REFRESH TABLE life")
    spark.sql("REFRESH BLOOM INDEX life_idx")
    files = len(spark.table("life").inputFiles())
    assert _describe(spark, "life_idx")["files_indexed"] == str(files)
    spark.sql("OPTIMIZE BLOOM INDEX life_idx")
    d = _describe(spark, "life_idx")
    assert d["files_indexed"] == str(files) and d["damage"] == "none", d
    assert _differential(spark, "life")["id = 1234"] == 1
    checked = assert_filters_hold_values(spark, root, "life_idx", spark.table("life"), {"id": "bigint", "s": "string"})
    assert checked == 2 * (ROWS + 800)

    # The advisor samples the files on executors.
    spark.sql("RECOMMEND BLOOM INDEXES").collect()


def test_the_columns_layout_loaded_by_spark_jobs_on_executors(spark, root, life):
    """`blockMajor = false` (the layout of encrypted indexes) with every column past
    `load.driverMaxFiles`: the index data is read by Spark jobs on the executors."""
    spark.conf.set("spark.bloomindex.build.blockMajor", "false")
    try:
        spark.sql("CREATE BLOOM INDEX life_cols ON life FOR COLUMNS (id, s)")
    finally:
        spark.conf.unset("spark.bloomindex.build.blockMajor")
    spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
    try:
        fresh_driver(spark)
        jobs = spark._jvm.bloomindex.layout.IndexStore.loadJobsRun()
        for where in ["id = 1234", "s IN ('user-7', 'nobody')", "id = 5 OR s = 'user-299'"]:
            q = f"SELECT * FROM life WHERE {where}"
            assert assert_same_with_pruning_off(spark, lambda: spark.sql(q)), q
        assert len(spark.sql("SELECT * FROM life WHERE id = 1234").inputFiles()) == 1
        assert spark._jvm.bloomindex.layout.IndexStore.loadJobsRun() > jobs, "no load ran as a Spark job"
        assert _describe(spark, "life_cols")["damage"] == "none"
    finally:
        spark.conf.unset("spark.bloomindex.load.driverMaxFiles")
