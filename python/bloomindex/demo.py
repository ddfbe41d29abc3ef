"""`make demo` / `python -m bloomindex.demo`: the main job on a local Spark session.

Writes a sample `orders` table of a few hundred Parquet files, builds a Bloom index on its
`user_id` (bigint) and `email` (string) columns, and runs a point lookup and an IN-list with
and without the index: EXPLAIN, files kept/total, and times. Then a join of `orders` with a
small `premium_users` table whose index has a global filter, with the join filter off and on:
the final plans, the rows the filter let through before the shuffle, and times.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

import bloomindex

ROWS = int(os.environ.get("DEMO_ROWS", 3_000_000))
FILES = int(os.environ.get("DEMO_FILES", 300))


def _timed(df) -> tuple[int, float]:
    t0 = time.perf_counter()
    n = df.count()
    return n, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    from pyspark.sql import SparkSession, functions as F

    tmp = tempfile.mkdtemp(prefix="bloomindex-demo-")
    spark = (bloomindex.configure(SparkSession.builder.master("local[2]").appName("bloomindex-demo"))
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "8")
             .config("spark.sql.warehouse.dir", os.path.join(tmp, "warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(f"bloomindex {bloomindex.__version__} on Spark {spark.version}")

    t0 = time.perf_counter()
    (spark.range(ROWS, numPartitions=FILES)
     .select(F.col("id").alias("order_id"),
             (F.col("id") * 2654435761 % 1_000_000_007).alias("user_id"),
             F.concat(F.lit("user"), (F.col("id") * 40503 % 1_000_003).cast("string"),
                      F.lit("@example.com")).alias("email"),
             (F.col("id") % 997 / 10).cast("decimal(9,1)").alias("amount"))
     .write.saveAsTable("orders"))
    files = len(spark.table("orders").inputFiles())
    print(f"orders: {ROWS:,} rows in {files} Parquet files, written in {time.perf_counter() - t0:.1f}s")

    t0 = time.perf_counter()
    spark.sql("CREATE BLOOM INDEX orders_idx ON orders FOR COLUMNS (user_id, email)")
    print(f"CREATE BLOOM INDEX orders_idx ON orders FOR COLUMNS (user_id, email): "
          f"{time.perf_counter() - t0:.1f}s")
    spark.sql("SHOW BLOOM INDEXES").show(truncate=False)

    probe = spark.table("orders").where("order_id IN (4242, 171717, 2500000)").select("user_id", "email").collect()
    uid, email = probe[0].user_id, probe[0].email
    emails = ", ".join(f"'{r.email}'" for r in probe) + ", 'nobody@example.com'"
    queries = [("point lookup", f"SELECT * FROM orders WHERE user_id = {uid}"),
               ("IN-list", f"SELECT * FROM orders WHERE email IN ({emails})")]
    for label, sql in queries:
        print(f"\n== {label}: {sql}")
        for enabled in ("false", "true"):
            spark.conf.set("spark.bloomindex.pruning.enabled", enabled)
            df = spark.sql(sql)
            _timed(df)  # warm
            n, secs = _timed(df)
            print(f"  index {'on ' if enabled == 'true' else 'off'}: {n} rows, "
                  f"files read {len(df.inputFiles())}/{files}, {secs * 1000:.0f} ms")
        plan = "\n".join(r[0] for r in spark.sql(f"EXPLAIN {sql}").collect())
        scan = [line.strip()[:300] for line in plan.splitlines() if "BloomIndexPruned" in line or "FileScan" in line]
        print("  EXPLAIN (index on):\n    " + "\n    ".join(scan) if scan else plan)
        print("  " + bloomindex.BloomIndex(spark).explain(spark.sql(sql)).replace("\n", "\n  "))
    _join(spark, bloomindex)
    spark.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _join(spark, bloomindex) -> None:
    """A join of orders with 1% of their users, before and after the join filter."""
    spark.sql("CREATE TABLE premium_users AS SELECT DISTINCT user_id, 'gold' AS tier "
              "FROM orders WHERE order_id % 100 = 0")
    spark.sql("CREATE BLOOM INDEX premium_idx ON premium_users FOR COLUMNS (user_id) OPTIONS (global = true)")
    print("\nCREATE BLOOM INDEX premium_idx ON premium_users FOR COLUMNS (user_id) OPTIONS (global = true)")
    sql = ("SELECT o.order_id, o.amount, p.tier FROM orders o "
           "JOIN premium_users p ON o.user_id = p.user_id")
    print(f"\n== join: {sql}  (sort-merge: broadcast joins off for the demo)")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    bi = bloomindex.BloomIndex(spark)
    for enabled in ("false", "true"):
        spark.conf.set("spark.bloomindex.joinFilter.enabled", enabled)
        df = spark.sql(sql)
        df.write.format("noop").mode("overwrite").save()  # warm
        t0 = time.perf_counter()
        rows = df.collect()
        secs = time.perf_counter() - t0
        print(f"  join filter {'on ' if enabled == 'true' else 'off'}: {len(rows)} rows, {secs * 1000:.0f} ms")
        plan = df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
        keep = ("Join", "Exchange", "BloomFilter", "ColumnarToRow", "FileScan", "Filter")
        for line in plan.splitlines():
            if any(k in line for k in keep) and "premium_users" not in line:
                print("    " + line.rstrip()[:150])
        for m in bi.join_filter_metrics(df):
            print(f"    BloomFilter: {m['numInputRows']:,} orders rows in, {m['numOutputRows']:,} out "
                  "(the rest never reached the shuffle)")
    print("  " + bi.explain(spark.sql(sql)).replace("\n", "\n  "))
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
