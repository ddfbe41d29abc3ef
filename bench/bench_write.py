"""`make bench-write`: what keeping an index current on write costs the write (issue 29).

Per format (a Parquet folder, a Delta table), ROUNDS rounds; each appends FILES_PER_ROUND files
(ROWS_PER_FILE rows each: a bigint key and a string key, both unique) to two copies of the same
source, one with an index on both columns created with `refresh = 'manual'`, the other with
`refresh = 'on_write'`, in alternating order. It records each write's wall time, and after the
on-write write, the files the first point lookup of a key of the new files reads (with the index
it should be 1: the new files are pruned without a REFRESH). Delta writes are refreshed by the
background refresher after they commit (docs/freshness.md): their time is the write's, and the
lookup waits for the refresher first.

For the Parquet folder a third copy, `on_write_read`, has its on-write refresh read the new files
again (`spark.bloomindex.refresh.writeTaskFilters` = 0 around its writes): the path before the
write's tasks built the filters, measured in the same run.

Writes bench/out/write.json and prints a summary. BENCH_WRITE_ROUNDS (10), BENCH_WRITE_FILES (100),
BENCH_WRITE_ROWS (2000) scale it; BENCH_WRITE_FORMATS (parquet,delta) picks the formats;
BENCH_WRITE_STEPS=1 logs each on-write refresh's steps and their times (stderr).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out", "write")
ROUNDS = int(os.environ.get("BENCH_WRITE_ROUNDS", "10"))
FILES = int(os.environ.get("BENCH_WRITE_FILES", "100"))
ROWS = int(os.environ.get("BENCH_WRITE_ROWS", "2000"))
FORMATS = [f for f in os.environ.get("BENCH_WRITE_FORMATS", "parquet,delta").split(",") if f]
READ_CONF = "spark.bloomindex.refresh.writeTaskFilters"


def main() -> None:
    from pyspark.sql import SparkSession
    import bloomindex

    shutil.rmtree(OUT, ignore_errors=True)
    builder = (SparkSession.builder.master("local[2]").appName("bench-write")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", "8")
               .config("spark.bloomindex.root", os.path.join(OUT, "indexes")))
    spark = bloomindex.configure(builder, delta=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if os.environ.get("BENCH_WRITE_STEPS"):
        # Each on-write refresh's steps and their times (bloomindex.actions.StepClock), on stderr.
        spark._jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "bloomindex.actions.StepClock", spark._jvm.org.apache.logging.log4j.Level.INFO)
    jvm = spark._jvm
    results = {"machine": os.uname().nodename, "cpus": os.cpu_count(), "rounds": ROUNDS,
               "files_per_round": FILES, "rows_per_file": ROWS, "formats": {}}

    def batch(r: int):
        start = r * FILES * ROWS
        return (spark.range(start, start + FILES * ROWS, numPartitions=FILES)
                .selectExpr("id AS k", "concat('key-', id) AS s", "id % 97 AS v"))

    def await_refresher():
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(600_000)
        jvm.bloomindex.actions.WriteEvents.awaitIdle(600_000)

    for fmt in FORMATS:
        modes = ("manual", "on_write", "on_write_read") if fmt == "parquet" else ("manual", "on_write")
        paths = {mode: os.path.join(OUT, f"{fmt}_{mode}") for mode in modes}
        for mode, path in paths.items():
            batch(0).write.format(fmt).save(path)
            spark.sql(f"CREATE BLOOM INDEX w_{fmt}_{mode} ON {fmt}.`{path}` FOR COLUMNS (k, s) "
                      f"OPTIONS (refresh = '{'manual' if mode == 'manual' else 'on_write'}')")
        times = {mode: [] for mode in modes}
        read_after = []
        for r in range(1, ROUNDS + 1):
            # Each round starts with another copy.
            order = modes[r % len(modes):] + modes[:r % len(modes)]
            for mode in order:
                df = batch(r)
                if mode == "on_write_read":
                    spark.conf.set(READ_CONF, "0")
                t0 = time.perf_counter()
                df.write.format(fmt).mode("append").save(paths[mode])
                times[mode].append(time.perf_counter() - t0)
                spark.conf.unset(READ_CONF)
            await_refresher()
            key = r * FILES * ROWS + ROWS // 2
            q = spark.read.format(fmt).load(paths["on_write"]).where(f"k = {key}")
            assert q.count() == 1
            read_after.append(len(q.inputFiles()))
            print(f"{fmt} round {r}: " + ", ".join(f"{m} {times[m][-1]:.2f} s" for m in modes) +
                  f", first lookup reads {read_after[-1]} of {(r + 1) * FILES} files", flush=True)
        ratios = [o / m for o, m in zip(times["on_write"], times["manual"])]
        results["formats"][fmt] = {
            "write_s_manual": times["manual"], "write_s_on_write": times["on_write"],
            "median_manual_s": statistics.median(times["manual"]),
            "median_on_write_s": statistics.median(times["on_write"]),
            "median_ratio": statistics.median(ratios),
            "files_read_by_first_lookup": read_after,
        }
        if "on_write_read" in times:
            results["formats"][fmt].update({
                "write_s_on_write_read": times["on_write_read"],
                "median_on_write_read_s": statistics.median(times["on_write_read"]),
                "median_ratio_read": statistics.median(o / m for o, m in zip(times["on_write_read"], times["manual"])),
            })
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "write.json"), "w") as f:
        json.dump(results, f, indent=2)
    for fmt, r in results["formats"].items():
        print(f"{fmt}: median write {r['median_manual_s']:.2f} s manual, {r['median_on_write_s']:.2f} s on_write "
              f"(median ratio {r['median_ratio']:.2f}x); first lookups read {r['files_read_by_first_lookup']} files")
        if "median_ratio_read" in r:
            print(f"{fmt}: on_write reading the new files again: median {r['median_on_write_read_s']:.2f} s "
                  f"(median ratio {r['median_ratio_read']:.2f}x)")
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
