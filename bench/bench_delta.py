"""`make bench-delta`: point lookups on a Delta Lake table of 2,000 files and 20 million rows,
in one run:

  (a) Delta's own data skipping alone (min/max statistics from its log);
  (b) the same scans with a bloomindex index (Delta's skipping still applies first).

The keys are spread over every file (no clustering), the case min/max statistics cannot help
with. Reports wall time (best of 3 after a warm-up), planning time and files read (the scan's
files kept by the index from the plan). The table is cached under bench/out/.
"""

from __future__ import annotations

import os
import re
import sys
import time

from pyspark.sql import SparkSession, functions as F

import bloomindex
from common import best

ROWS = int(os.environ.get("BENCH_ROWS", 20_000_000))
FILES = int(os.environ.get("BENCH_FILES", 2000))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def files_kept(spark, sql: str) -> tuple[int, int]:
    """(files the Bloom index keeps, files Delta's skipping keeps) for `sql`, from the
    executed plan's `bloomindex://<index>/kept-K-of-N` location (pruning on)."""
    df = spark.sql(sql)
    df.collect()
    plan = df._jdf.queryExecution().executedPlan().toString()
    m = re.search(r"kept-(\d+)-of-(\d+)", plan)
    if not m:
        raise RuntimeError(f"the index did not prune: {plan}")
    return int(m.group(1)), int(m.group(2))


def main() -> int:
    builder = (SparkSession.builder.master("local[2]").appName("bench-delta")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", "8")
               .config("spark.bloomindex.root", os.path.join(OUT, "indexes")))
    spark = bloomindex.configure(builder, delta=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    path = os.path.join(OUT, f"delta_{ROWS}_{FILES}")
    if not os.path.exists(os.path.join(path, "_delta_log")):
        t0 = time.perf_counter()
        (spark.range(ROWS, numPartitions=FILES)
         .select((F.col("id") * 2654435761 % (1 << 40)).alias("k_bigint"),
                 F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias("k_string"),
                 (F.col("id") % 1000).alias("v"))
         .write.format("delta").save(path))
        print(f"wrote {ROWS:,} rows in {FILES} files as a Delta table: {time.perf_counter() - t0:.0f}s")
    table = f"delta.`{path}`"
    spark.sql("DROP BLOOM INDEX IF EXISTS bench_delta")
    t0 = time.perf_counter()
    spark.sql(f"CREATE BLOOM INDEX bench_delta ON {table} FOR COLUMNS (k_bigint, k_string)")
    print(f"index build: {time.perf_counter() - t0:.0f}s")

    sample = spark.sql(f"SELECT * FROM {table} WHERE v = 7 LIMIT 10").collect()
    queries = (("point k_string", f"k_string = '{sample[0].k_string}'"),
               ("point k_bigint", f"k_bigint = {sample[1].k_bigint}"),
               ("IN-10 k_bigint", "k_bigint IN (" + ", ".join(str(r.k_bigint) for r in sample) + ")"))
    print(f"\n{'query':<16} {'setup':<34} {'wall s':>8} {'plan ms':>8} {'files read':>11}")
    results = {}
    for qname, where in queries:
        for setup, pruning in (("(a) Delta data skipping alone", "false"),
                               ("(b) + bloomindex", "true")):
            spark.conf.set("spark.bloomindex.pruning.enabled", pruning)
            sql = f"SELECT * FROM {table} WHERE {where}"
            df = spark.sql(sql)

            def plan():
                spark.sql(sql)._jdf.queryExecution().executedPlan()

            plan_s = best(plan)
            wall = best(lambda: df.collect())
            rows = df.collect()
            results[(qname, setup[:3])] = (wall, sorted(map(repr, rows)))
            kept, delta_kept = files_kept(spark, sql) if pruning == "true" else (None, None)
            files = kept if kept is not None else "see (b)"
            print(f"{qname:<16} {setup:<34} {wall:>8.2f} {plan_s * 1000:>8.0f} {files:>11}"
                  + (f"  (of the {delta_kept} Delta's skipping keeps)" if kept is not None else ""))
    for qname, _ in queries:
        (a, rows_a), (b, rows_b) = results[(qname, "(a)")], results[(qname, "(b)")]
        assert rows_a == rows_b, f"{qname}: different answers"
        print(f"{qname}: (b) is {a / b:.1f}x faster than (a); same {len(rows_a)} rows")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
