"""The Spark session every benchmark uses (local[2], quiet, indexes under bench/out), and timing."""

from __future__ import annotations

import os
import time

from pyspark.sql import SparkSession

import bloomindex


def bench_session(app: str, out: str, kernel: str | None = None) -> SparkSession:
    spark = (bloomindex.configure(SparkSession.builder.master("local[2]").appName(app), kernel=kernel)
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "8g").config("spark.sql.shuffle.partitions", "8")
             .config("spark.bloomindex.root", os.path.join(out, "indexes"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def timings(fn, runs=3) -> tuple[list[float], object]:
    """`runs` timed calls of `fn` after one untimed warm-up call: the seconds of each, and what
    the last call returned."""
    result = fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def best(fn, runs=3) -> float:
    """The fastest of `runs` timed calls of `fn`, after one untimed warm-up call."""
    return min(timings(fn, runs)[0])


def wait_for_warmup(spark, limit_s: float = 60.0) -> float:
    """Waits for the extension's warm-up (bloomindex.catalog.Warmup: a query's per-file loops run on
    made-up files at session start, about 1 s) to end, so that no run measures it half done;
    returns the seconds waited."""
    t0 = time.perf_counter()
    while not spark._jvm.bloomindex.catalog.Warmup.finished() and time.perf_counter() - t0 < limit_s:
        time.sleep(0.05)
    return round(time.perf_counter() - t0, 2)

