"""One writer of tests/race: a SparkSession of its own (local[1]) that appends ROUNDS one-file
Parquet writes to a folder whose Bloom index follows writes (refresh = 'on_write'), so each
append refreshes the index in this process before it returns.

Started with its twin by the test; both announce they are ready (the JVM up, the write path
warmed on a scratch folder) by creating `ready-<writer>` in CONTROL, then wait for CONTROL/start,
so that their appends and refreshes overlap from the first one. After each append a line of
JSON goes to CONTROL/progress-<writer>.jsonl (the test's queries look up only values already
written); at the end one line `RACE-SUMMARY {json}` on stdout: per round the seconds the append
took (the refresh included) and what DESCRIBE's `automatic_refresh_failed` said after it (the
row is there while the last automatic refresh of this JVM failed). The refreshes' retries after
a lost race are logged at INFO by bloomindex.actions.WriteEvents ("lost a race"), which this
process logs (to stderr) for the test to count.

Usage: python writer.py WRITER ROUNDS ROWS DATA ROOT INDEX CONTROL
"""

from __future__ import annotations

import json
import os
import sys
import time

import bloomindex
from bloomindex import BloomIndex
from pyspark.sql import SparkSession

START_TIMEOUT_S = 600


def main() -> None:
    writer, rounds, rows = (int(a) for a in sys.argv[1:4])
    data, root, index, control = sys.argv[4:8]
    builder = (SparkSession.builder.master("local[1]").appName(f"bloomindex-race-writer-{writer}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.default.parallelism", "1")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", os.path.join(control, f"warehouse-{writer}"))
               .config("spark.driver.memory", "768m")
               .config("spark.bloomindex.root", root)
               # Hadoop's FileOutputCommitter, which Spark's file writes use, keeps a job's
               # pending output under <folder>/_temporary/<application attempt> and deletes the
               # whole <folder>/_temporary when a job commits: two processes appending to one
               # folder at once would delete each other's pending files (a Spark limitation,
               # not the index's). Each writer has an attempt number of its own and leaves the
               # folder's _temporary in place (hidden from readers: its name starts with _).
               .config("spark.hadoop.mapreduce.job.application.attempt.id", str(writer + 1))
               .config("spark.hadoop.mapreduce.fileoutputcommitter.cleanup.skipped", "true"))
    spark = bloomindex.configure(builder).getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    jvm = sc._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "bloomindex.actions.WriteEvents", jvm.org.apache.logging.log4j.Level.INFO)
    bi = BloomIndex(spark)

    # Warm-up (classes loaded, the write path compiled) on a folder no index covers.
    spark.createDataFrame([("warm", 0)], "k STRING, v INT").coalesce(1).write.mode("append") \
        .parquet(os.path.join(control, f"warm-{writer}"))
    bi.describe(index)
    open(os.path.join(control, f"ready-{writer}"), "w").close()
    deadline = time.time() + START_TIMEOUT_S
    while not os.path.exists(os.path.join(control, "start")):
        if time.time() > deadline:
            sys.exit(f"writer {writer}: no start signal in {START_TIMEOUT_S} s")
        time.sleep(0.01)

    results = []
    with open(os.path.join(control, f"progress-{writer}.jsonl"), "a") as progress:
        for r in range(rounds):
            values = [(f"w{writer}-r{r}-{i}", r * 1000 + i) for i in range(rows)]
            t0 = time.time()
            spark.createDataFrame(values, "k STRING, v INT").coalesce(1).write.mode("append").parquet(data)
            seconds = round(time.time() - t0, 3)
            try:
                failed = bi.describe(index).get("automatic_refresh_failed")
            except Exception as e:  # noqa: BLE001 - reported, the test decides
                failed = f"DESCRIBE failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
            result = {"writer": writer, "round": r, "value": values[0][0], "v": values[0][1],
                      "seconds": seconds, "refresh_failed": failed}
            results.append(result)
            progress.write(json.dumps(result) + "\n")
            progress.flush()
    # Nothing should be queued (the appends refresh in their own thread), but a refresh still
    # running must not be cut by the JVM's exit.
    idle = jvm.bloomindex.actions.WriteEvents.awaitIdle(120_000)
    print("RACE-SUMMARY " + json.dumps({"writer": writer, "rounds": results, "refresher_idle": bool(idle)}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
