"""`make bench-history`: what recording the workload history costs a point lookup's planning
(issue 31: at most 2%).

One session; a catalog table of BENCH_HISTORY_FILES Parquet files (default 200, 10,000 rows
each) with an index on `id`, and the same table without one. For each, `SELECT * FROM <t> WHERE
id = 4242` is planned (parsed, analysed, optimized, planned: `executedPlan`, inside an SQL
execution id as a query's planning is) BENCH_HISTORY_PER_ROUND times per round (default 50), in
BENCH_HISTORY_ROUNDS rounds (default 20) alternating history on and off in ABBA order
(bloomindex.bench.HistoryBench, in the JVM: no py4j call in the timed loop). Prints JSON, the
median ms per planning with the history on and off and their ratio.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "history"
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"
FILES = int(os.environ.get("BENCH_HISTORY_FILES", "200"))
ROUNDS = int(os.environ.get("BENCH_HISTORY_ROUNDS", "20"))
PER_ROUND = int(os.environ.get("BENCH_HISTORY_PER_ROUND", "50"))
ROWS_PER_FILE = 10_000


def main() -> None:
    import bloomindex
    from pyspark.sql import SparkSession

    if not TEST_JAR.is_file():
        sys.exit(f"{TEST_JAR} is missing: `make bench-history` stages it")
    shutil.rmtree(OUT, ignore_errors=True)   # the session catalog is in memory: tables made again
    OUT.mkdir(parents=True)
    builder = (SparkSession.builder.master("local[2]").appName("bench-history")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "4g")
               .config("spark.sql.warehouse.dir", str(OUT / "warehouse"))
               .config("spark.bloomindex.root", str(OUT / "indexes"))
               # The bench class calls bloomindex's: both on the driver's own class path.
               .config("spark.driver.extraClassPath", os.pathsep.join(
                   [str(TEST_JAR)] + [str(j) for j in bloomindex.jar_paths()])))
    spark = bloomindex.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for t in ("hist_indexed", "hist_plain"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
        (spark.range(0, FILES * ROWS_PER_FILE, 1, FILES).selectExpr("id", "id % 97 AS amount")
         .write.mode("overwrite").saveAsTable(t))
    spark.sql("DROP BLOOM INDEX IF EXISTS hist_idx")
    spark.sql("CREATE BLOOM INDEX hist_idx ON hist_indexed FOR COLUMNS (id)")
    bench = spark._jvm.bloomindex.bench.HistoryBench
    results = {}
    for t in ("hist_indexed", "hist_plain"):
        q = f"SELECT * FROM {t} WHERE id = 4242"
        assert spark.sql(q).count() == 1
        results[t] = json.loads(bench.run(spark._jsparkSession, q, ROUNDS, PER_ROUND))
    spark.stop()
    print(json.dumps({"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                      "files": FILES, "results": results}, indent=2))


if __name__ == "__main__":
    main()
