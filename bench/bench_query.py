"""`make bench-query`: point lookup and 10-value IN-list on a table of 2,000 files and
50 million rows, in one run:

  (a) no index, no Parquet Bloom filters;
  (b) the same data written with Parquet's own Bloom filters, so Spark prunes row groups;
  (c) a bloomindex index on the data of (a).

Reports wall time (best of 3 after a warm-up), planning time and files read.
"""

from __future__ import annotations

import os
import sys
import time

from pyspark.sql import functions as F

from common import bench_session, best

ROWS = int(os.environ.get("BENCH_ROWS", 50_000_000))
FILES = int(os.environ.get("BENCH_FILES", 2000))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def main() -> int:
    spark = bench_session("bench-query", OUT)
    plain = os.path.join(OUT, f"query_plain_{ROWS}_{FILES}")
    parquet_bf = os.path.join(OUT, f"query_bf_{ROWS}_{FILES}")
    data = (spark.range(ROWS, numPartitions=FILES)
            .select((F.col("id") * 2654435761 % (1 << 40)).alias("k_bigint"),
                    F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias("k_string"),
                    (F.col("id") % 1000).alias("v")))
    if not os.path.exists(plain):
        t0 = time.perf_counter()
        data.write.parquet(plain)
        print(f"(a) wrote {ROWS:,} rows in {FILES} files: {time.perf_counter() - t0:.0f}s")
    if not os.path.exists(parquet_bf):
        t0 = time.perf_counter()
        (data.write.option("parquet.bloom.filter.enabled#k_bigint", "true")
         .option("parquet.bloom.filter.enabled#k_string", "true")
         .option("parquet.bloom.filter.expected.ndv#k_bigint", str(ROWS // FILES))
         .option("parquet.bloom.filter.expected.ndv#k_string", str(ROWS // FILES))
         .parquet(parquet_bf))
        print(f"(b) wrote the same with Parquet Bloom filters: {time.perf_counter() - t0:.0f}s")
    spark.sql("DROP BLOOM INDEX IF EXISTS bench_query")
    t0 = time.perf_counter()
    spark.sql(f"CREATE BLOOM INDEX bench_query ON parquet.`{plain}` FOR COLUMNS (k_bigint, k_string)")
    print(f"(c) index build: {time.perf_counter() - t0:.0f}s")

    sample = spark.read.parquet(plain).where("v = 7").limit(10).collect()
    point = f"k_string = '{sample[0].k_string}'"
    in_list = "k_bigint IN (" + ", ".join(str(r.k_bigint) for r in sample) + ")"
    print(f"\n{'query':<12} {'setup':<28} {'wall s':>8} {'plan ms':>8} {'files read':>11}")
    results = {}
    for qname, where in (("point", point), ("IN-10", in_list)):
        for setup, path, pruning in (("(a) no index", plain, "false"),
                                     ("(b) Parquet Bloom filters", parquet_bf, "false"),
                                     ("(c) bloomindex", plain, "true")):
            spark.conf.set("spark.bloomindex.pruning.enabled", pruning)
            df = spark.read.parquet(path).where(where)

            def plan():
                # A fresh DataFrame: listing (cached by Spark), optimization (our probe), planning.
                spark.read.parquet(path).where(where)._jdf.queryExecution().executedPlan()

            plan_s = best(plan)
            wall = best(lambda: df.collect())
            nfiles = len(df.inputFiles())
            results[(qname, setup[:3])] = wall
            print(f"{qname:<12} {setup:<28} {wall:>8.2f} {plan_s * 1000:>8.0f} {nfiles:>11}")
    for qname in ("point", "IN-10"):
        a, b, c = (results[(qname, s)] for s in ("(a)", "(b)", "(c)"))
        print(f"{qname}: (c) is {a / c:.1f}x faster than (a) (target 20x), {b / c:.1f}x faster than (b) (target 3x)")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
