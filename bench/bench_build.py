"""`make bench-build`: index build time against a plain scan of the same columns.

Two Parquet tables of 200 files and 20 million rows each, with a high-cardinality string key
and a bigint key: (a) written plainly, (b) the same rows written with parquet-java's Bloom
filters on both keys. In one run: `df.select(cols).write.format("noop")` (best of 3) against
CREATE BLOOM INDEX on both columns (best of 3, dropping between runs) for each table, each
after one untimed run of both; on (b) the index takes every filter from the files' footers.
Prints the times and their ratios.
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
COLS = ("k_bigint", "k_string")


def generate(spark, path: str, bloom: bool) -> None:
    t0 = time.perf_counter()
    w = (spark.range(ROWS, numPartitions=FILES)
         .select((F.col("id") * 2654435761 % (1 << 40)).alias("k_bigint"),
                 F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias("k_string"),
                 (F.col("id") % 1000).alias("v"))
         .write)
    if bloom:
        # Sized for the rows of a file at 0.5%, so that the merged filter meets the index's
        # default fpp (1%) even after parquet-java's rounding; no dictionary, so that
        # parquet-java writes the filters for every row group.
        w = w.option("parquet.enable.dictionary", "false")
        for c in COLS:
            w = (w.option(f"parquet.bloom.filter.enabled#{c}", "true")
                 .option(f"parquet.bloom.filter.expected.ndv#{c}", str(ROWS // FILES))
                 .option(f"parquet.bloom.filter.fpp#{c}", "0.005"))
    w.parquet(path)
    print(f"generated {path}: {ROWS:,} rows in {FILES} files in {time.perf_counter() - t0:.1f}s")


def measure(spark, path: str, name: str) -> tuple[float, float, dict]:
    df = spark.read.parquet(path)

    def scan():
        t0 = time.perf_counter()
        df.select(*COLS).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - t0

    def build():
        spark.sql(f"DROP BLOOM INDEX IF EXISTS {name}")
        t0 = time.perf_counter()
        spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS ({', '.join(COLS)})")
        return time.perf_counter() - t0

    scan()  # warm the JVM (and its JIT) and the OS cache, for both
    build()
    scans = [scan() for _ in range(3)]
    builds = [build() for _ in range(3)]
    d = {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}
    print(f"{name}: scans {', '.join(f'{s:.2f}' for s in scans)}; builds {', '.join(f'{b:.2f}' for b in builds)}")
    return min(scans), min(builds), d


def main() -> int:
    spark = bench_session("bench-build", OUT)
    plain = os.path.join(OUT, f"build_{ROWS}_{FILES}")
    bloom = os.path.join(OUT, f"build_bf_{ROWS}_{FILES}")
    for path, with_bloom in ((plain, False), (bloom, True)):
        if not os.path.exists(path):
            generate(spark, path, with_bloom)

    s, b, d = measure(spark, plain, "bench_build")
    print(f"(a) plain files: {ROWS:,} rows, {d['files_indexed']} files indexed "
          f"({d['files_from_data']} from data), {int(d['filter_bytes']) / 1e6:.1f} MB of filters")
    print(f"    plain scan (noop write), best of 3: {s:.2f}s")
    print(f"    CREATE BLOOM INDEX, best of 3:      {b:.2f}s")
    print(f"    ratio build / scan: {b / s:.2f}x (target <= 1.5x)")

    s, b, d = measure(spark, bloom, "bench_build_footer")
    print(f"(b) files with Parquet Bloom filters: {d['files_indexed']} files indexed "
          f"({d['files_from_footer']} from footers), {int(d['filter_bytes']) / 1e6:.1f} MB of filters")
    print(f"    plain scan (noop write), best of 3: {s:.2f}s")
    print(f"    CREATE BLOOM INDEX, best of 3:      {b:.2f}s")
    print(f"    ratio build / scan: {b / s:.2f}x (target <= 0.2x)")
    spark.stop()
    if os.environ.get("BENCH_CLEAN"):
        shutil.rmtree(OUT, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
