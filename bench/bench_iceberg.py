"""`make bench-iceberg`: point lookups on an Apache Iceberg table of 2,000 data files and 20
million rows with a high-cardinality string key (24 hex characters, spread over every file so
min/max metrics cannot narrow a lookup), three ways:

  (a) Iceberg alone: a table written without Parquet Bloom filters (its planning: partitions
      and min/max metrics);
  (b) Iceberg + Parquet row-group Bloom filters Iceberg wrote
      (`write.parquet.bloom-filter-enabled.column.k`): the same rows in a second table, whose
      reader skips row groups by their footer filters but still opens every file;
  (c) table (b) with a bloomindex index on k (built from those footer filters where they
      qualify), pruning the scan's files after Iceberg's planning.

Runs on PySpark 4.1 (.venvs/iceberg: Iceberg publishes no runtime for Spark 4.2). Each query best
of 3 after a warm-up; files read from the plan's BloomIndexPruned node. The tables are written
once under bench/out/iceberg and reused. BENCH_ICEBERG_FILES / BENCH_ICEBERG_ROWS scale it.
"""

from __future__ import annotations

import os
import re
import sys
import time

from pyspark.sql import SparkSession, functions as F

import bloomindex
from common import best

ROWS = int(os.environ.get("BENCH_ICEBERG_ROWS", 20_000_000))
FILES = int(os.environ.get("BENCH_ICEBERG_FILES", 2000))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "iceberg")


def write(spark, table: str, props: str) -> None:
    if spark.catalog.tableExists(table) and spark.sql(f"SELECT count(*) FROM {table}.files").head()[0] >= FILES:
        return
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"CREATE TABLE {table} (id BIGINT, k STRING, v BIGINT) USING iceberg "
              f"TBLPROPERTIES ('write.distribution-mode'='none', {props})")
    t0 = time.perf_counter()
    (spark.range(ROWS, numPartitions=FILES)
     .select("id", F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias("k"), (F.col("id") % 1000).alias("v"))
     .writeTo(table).append())
    files = spark.sql(f"SELECT count(*) FROM {table}.files").head()[0]
    print(f"wrote {table}: {ROWS:,} rows in {files} data files, {time.perf_counter() - t0:.0f}s", flush=True)


def files_read(spark, sql: str) -> tuple[int, int] | None:
    plan = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
    m = re.search(r"files kept (\d+) of (\d+)", plan)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main() -> int:
    builder = (SparkSession.builder.master("local[2]").appName("bench-iceberg")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", "8")
               .config("spark.bloomindex.root", os.path.join(OUT, "indexes")))
    spark = bloomindex.configure(builder, iceberg=True, iceberg_catalogs={
        "bench": {"type": "hadoop", "warehouse": os.path.join(OUT, "warehouse")}}).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS bench.db")
    plain, with_bf = f"bench.db.t_{ROWS}_{FILES}", f"bench.db.t_{ROWS}_{FILES}_bf"
    write(spark, plain, "'write.parquet.bloom-filter-enabled.column.k'='false'")
    write(spark, with_bf, "'write.parquet.bloom-filter-enabled.column.k'='true', "
                          "'write.parquet.bloom-filter-fpp.column.k'='0.01'")
    spark.sql("DROP BLOOM INDEX IF EXISTS bench_iceberg")
    t0 = time.perf_counter()
    spark.sql(f"CREATE BLOOM INDEX bench_iceberg ON {with_bf} FOR COLUMNS (k)")
    desc = dict((r[0], r[1]) for r in spark.sql("DESCRIBE BLOOM INDEX bench_iceberg").collect())
    print(f"index build: {time.perf_counter() - t0:.0f}s; "
          f"{ {k: v for k, v in desc.items() if 'ooter' in k or 'files' in k.lower()} }", flush=True)

    keys = [r.k for r in spark.sql(f"SELECT k FROM {plain} WHERE v = 7 LIMIT 2").collect()]
    print(f"\n{'key':<26} {'setup':<40} {'wall s':>8} {'files read':>11}")
    for key in keys:
        answers = {}
        walls = {}
        for setup, table, pruning in (("(a) Iceberg alone", plain, "false"),
                                       ("(b) Iceberg + Parquet Bloom filters", with_bf, "false"),
                                       ("(c) Iceberg + bloomindex", with_bf, "true")):
            spark.conf.set("spark.bloomindex.pruning.enabled", pruning)
            sql = f"SELECT * FROM {table} WHERE k = '{key}'"
            df = spark.sql(sql)
            wall = best(lambda: df.collect())
            answers[setup[:3]] = sorted(map(tuple, spark.sql(sql).collect()))
            walls[setup[:3]] = wall
            kept = files_read(spark, sql) if pruning == "true" else None
            shown = f"{kept[0]} of {kept[1]}" if kept else "all planned"
            print(f"{key:<26} {setup:<40} {wall:>8.2f} {shown:>11}", flush=True)
        assert answers["(a)"] == answers["(b)"] == answers["(c)"], f"{key}: different answers"
        print(f"  same {len(answers['(a)'])} rows; (c) is {walls['(a)'] / walls['(c)']:.1f}x faster than (a), "
              f"{walls['(b)'] / walls['(c)']:.1f}x faster than (b)", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
