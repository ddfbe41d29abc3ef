"""`make bench-build`: index build time against a plain scan of the same columns.

A Parquet table of 200 files and 20 million rows with a high-cardinality string key and a
bigint key; in one run: `df.select(cols).write.format("noop")` (best of 3), then CREATE BLOOM
INDEX on both columns (best of 2, dropping between runs). Prints both and their ratio.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

from pyspark.sql import functions as F

from common import bench_session

ROWS = int(os.environ.get("BENCH_ROWS", 20_000_000))
FILES = int(os.environ.get("BENCH_FILES", 200))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def main() -> int:
    spark = bench_session("bench-build", OUT)
    table = os.path.join(OUT, f"build_{ROWS}_{FILES}")
    if not os.path.exists(table):
        t0 = time.perf_counter()
        (spark.range(ROWS, numPartitions=FILES)
         .select((F.col("id") * 2654435761 % (1 << 40)).alias("k_bigint"),
                 F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias("k_string"),
                 (F.col("id") % 1000).alias("v"))
         .write.parquet(table))
        print(f"generated {ROWS:,} rows in {FILES} files in {time.perf_counter() - t0:.1f}s")
    df = spark.read.parquet(table)
    nfiles = len(df.inputFiles())

    def scan():
        df.select("k_bigint", "k_string").write.format("noop").mode("overwrite").save()

    def build():
        spark.sql("DROP BLOOM INDEX IF EXISTS bench_build")
        t0 = time.perf_counter()
        spark.sql(f"CREATE BLOOM INDEX bench_build ON parquet.`{table}` FOR COLUMNS (k_bigint, k_string)")
        return time.perf_counter() - t0

    scan()  # warm the JVM and the OS cache
    scans = []
    for _ in range(3):
        t0 = time.perf_counter()
        scan()
        scans.append(time.perf_counter() - t0)
    builds = [build() for _ in range(2)]
    s, b = min(scans), min(builds)
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX bench_build").collect()}
    print(f"table: {ROWS:,} rows, {nfiles} files; index: {d['files_indexed']} files, "
          f"{int(d['filter_bytes']) / 1e6:.1f} MB of filters")
    print(f"plain scan (noop write), best of 3: {s:.2f}s")
    print(f"CREATE BLOOM INDEX, best of 2:      {b:.2f}s")
    print(f"ratio build / scan: {b / s:.2f}x (target <= 1.5x)")
    spark.stop()
    if os.environ.get("BENCH_CLEAN"):
        shutil.rmtree(OUT, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
