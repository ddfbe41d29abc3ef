"""Index build, file pruning and the join filter on `local-cluster[2,1,1024]`: executors are
separate JVMs that get bloomindex's jar through `spark.jars` and the Vector API module
through `spark.executor.extraJavaOptions`, both as `bloomindex.configure()` sets them."""

from __future__ import annotations

import os

import pytest

from bloomindex import BloomIndex
from bloomindex.session import task_kernels
from cluster_helpers import EXECUTORS, executor_cmdline, executor_pids
from index_helpers import assert_filters_hold_values, log_entries, native_kernel

FILES = 8
ROWS = 2000
KEYS = 250


def test_executors_are_separate_jvms_with_the_vector_kernel(spark, vector_bits):
    driver_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    tasks = task_kernels(spark, 8)
    pids = executor_pids(spark)
    assert len(pids) == EXECUTORS
    assert {t["pid"] for t in tasks} == set(pids)  # both executors ran tasks
    assert driver_pid not in pids and all(t["executor"] != "driver" for t in tasks)
    print(f"FIGURE driver pid {driver_pid}, tasks {tasks}")
    # The executors run on this machine's CPU: the vector kernel wherever it has 256-bit vectors.
    assert {t["sbbf"] for t in tasks} == {native_kernel(vector_bits)}
    for pid in pids:
        args = executor_cmdline(pid)
        i = args.index("--add-modules")
        assert args[i + 1] == "jdk.incubator.vector"


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    from pyspark.sql import functions as F

    spark.conf.set("spark.bloomindex.root", str(tmp_path_factory.mktemp("cluster_indexes")))
    (spark.range(0, ROWS, 1, FILES)
     .select(F.col("id"), (F.col("id") * 7919 % KEYS).cast("int").alias("k"),
             F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"))
     .write.format("parquet").saveAsTable("events"))
    (spark.range(0, 10).select((F.col("id") * 23 + 3).cast("int").alias("k"),
                               F.lit("gold").alias("tier"))
     .coalesce(1).write.format("parquet").saveAsTable("vip"))
    spark.sql("CREATE BLOOM INDEX events_idx ON events FOR COLUMNS (id, s)")
    spark.sql("CREATE BLOOM INDEX vip_idx ON vip FOR COLUMNS (k) OPTIONS (global = true)")
    yield spark.conf.get("spark.bloomindex.root")
    for t in ("events", "vip"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.conf.unset("spark.bloomindex.root")


def _rows(spark, q: str, **conf) -> list:
    for k, v in conf.items():
        spark.conf.set(f"spark.bloomindex.{k}", v)
    try:
        return sorted(spark.sql(q).collect())
    finally:
        for k in conf:
            spark.conf.unset(f"spark.bloomindex.{k}")


def test_build_on_executors(spark, tables):
    assert [e["state"] for e in log_entries(tables, "events_idx")] == ["CREATING", "ACTIVE"]
    d = BloomIndex(spark).describe("events_idx")
    assert d["files_indexed"] == str(FILES)
    checked = assert_filters_hold_values(spark, tables, "events_idx", spark.table("events"),
                                         {"id": "bigint", "s": "string"})
    assert checked == 2 * ROWS


@pytest.mark.parametrize("where", [
    "id = 1234", "s = 's17'", "id IN (5, 999, 1998)", "id = 123456789",
    "s IN ('s1', 'nope') OR id = 1600", "id <=> 77 AND s = 's77'",
])
def test_pruning_differential(spark, tables, where):
    q = f"SELECT * FROM events WHERE {where}"
    on, off = _rows(spark, q), _rows(spark, q, **{"pruning.enabled": "false"})
    assert on == off
    kept = len(spark.sql(q).inputFiles())
    print(f"FIGURE files read for {where}: {kept}/{FILES}")
    assert kept < FILES  # files were skipped
    assert kept >= len({r.id * FILES // ROWS for r in on})  # every file holding a match was read
    assert "index events_idx" in BloomIndex(spark).explain(spark.sql(q))


def test_join_filter_differential(spark, tables):
    q = "SELECT e.id, e.k, v.tier FROM events e JOIN vip v ON e.k = v.k"
    on, off = _rows(spark, q), _rows(spark, q, **{"joinFilter.enabled": "false"})
    assert on == off and len(on) == 80  # 10 keys, each in ROWS / KEYS rows
    df = spark.sql(q)
    df.collect()
    [m] = BloomIndex(spark).join_filter_metrics(df)
    print(f"FIGURE join filter: {m}, {len(on)} joined rows")
    assert m["numInputRows"] == ROWS
    assert len(on) <= m["numOutputRows"] < ROWS / 10  # rows dropped on the executors
