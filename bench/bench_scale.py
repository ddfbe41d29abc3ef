"""`make bench-scale`: driver memory and planning time at scale.

  (1) a table of BENCH_SCALE_FILES small Parquet files (default 100,000; BENCH_SCALE_ROWS rows
      each, default 20, distinct bigint keys across the table);
  (2) one Parquet file of BENCH_SCALE_BIG distinct bigints (default 100,000,000).

For each: index build, DESCRIBE and query planning, with the driver's heap measured through
the JVM's MemoryMXBean (used after a full GC before and after each step: "retained"; the sum
of the heap pools' peaks during the step minus the level before it: "peak"; local mode, so the
peak includes the tasks' memory), and planning time: a point lookup's plan with pruning on and, and the probe alone (`BloomIndexPruning.decide` called through py4j on the
listed files, as the optimizer rule calls it, the index loaded), median of 5 after a warm-up.

Data are generated with pyarrow once and cached under bench/out/. BENCH_SCALE_CLASSIC=0 skips
these two; then (3) 1,000,000 files whose index entries a harness writes (scale_million.py,
BENCH_SCALE_SYNTH_FILES; 0 skips it).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from common import bench_session, timings

FILES = int(os.environ.get("BENCH_SCALE_FILES", 100_000))
ROWS = int(os.environ.get("BENCH_SCALE_ROWS", 20))
BIG = int(os.environ.get("BENCH_SCALE_BIG", 100_000_000))
# 1: keep indexes a previous run built (no build figures), to re-measure DESCRIBE and planning.
REUSE = os.environ.get("BENCH_SCALE_REUSE") == "1"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
MB = 1 << 20


def small_files(path: str) -> None:
    if os.path.exists(os.path.join(path, "_DONE")):
        return
    os.makedirs(path, exist_ok=True)
    t0 = time.perf_counter()
    for i in range(FILES):
        k = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)
        t = pa.table({"k": k, "s": pa.array([f"v{x}" for x in k.tolist()])})
        pq.write_table(t, os.path.join(path, f"part-{i:06d}.parquet"), compression="none")
    open(os.path.join(path, "_DONE"), "w").close()
    print(f"wrote {FILES:,} files of {ROWS} rows: {time.perf_counter() - t0:.0f}s")


def big_file(path: str) -> None:
    if os.path.exists(os.path.join(path, "_DONE")):
        return
    os.makedirs(path, exist_ok=True)
    t0 = time.perf_counter()
    schema = pa.schema([("k", pa.int64())])
    chunk = 10_000_000
    with pq.ParquetWriter(os.path.join(path, "part-0.parquet"), schema, use_dictionary=False) as w:
        for lo in range(0, BIG, chunk):
            # Distinct values, spread over the range (a multiplicative permutation of 0..2^40).
            ids = np.arange(lo, min(BIG, lo + chunk), dtype=np.int64)
            w.write_table(pa.table({"k": (ids * 2654435761) % (1 << 40)}, schema=schema), row_group_size=chunk)
    open(os.path.join(path, "_DONE"), "w").close()
    print(f"wrote one file of {BIG:,} distinct bigints: {time.perf_counter() - t0:.0f}s")


class Heap:
    """The driver JVM's heap through py4j."""

    def __init__(self, spark):
        mf = spark._jvm.java.lang.management.ManagementFactory
        self.mem = mf.getMemoryMXBean()
        self.pools = [p for p in mf.getMemoryPoolMXBeans() if str(p.getType()) == "Heap memory"]
        self.jvm = spark._jvm

    def used_after_gc(self) -> int:
        for _ in range(2):
            self.jvm.java.lang.System.gc()
            time.sleep(0.2)
        return self.mem.getHeapMemoryUsage().getUsed()

    def measure(self, fn):
        """(result, seconds, retained MB after - before, peak MB above the before-level)."""
        before = self.used_after_gc()
        for p in self.pools:
            p.resetPeakUsage()
        t0 = time.perf_counter()
        result = fn()
        secs = time.perf_counter() - t0
        peak = sum(p.getPeakUsage().getUsed() for p in self.pools)
        after = self.used_after_gc()
        return result, secs, (after - before) / MB, (peak - before) / MB


def plan_ms(spark, df, where: str, pruning: bool, runs: int = 5) -> float:
    """Planning a point lookup on `df` (listed once, so no listing in the time), median ms."""
    spark.conf.set("spark.bloomindex.pruning.enabled", str(pruning).lower())
    try:
        times, _ = timings(lambda: df.where(where)._jdf.queryExecution().executedPlan(), runs)
        return statistics.median(times) * 1000
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def probe_ms(spark, path: str, where: str, runs: int = 5) -> tuple[float, int]:
    """The pruning decision alone, as the optimizer rule makes it (warm index): median ms, files kept."""
    jvm = spark._jvm
    # The condition as the rule sees it (optimized: literals folded), from a plan it did not touch.
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        cond = spark.read.parquet(path).where(where)._jdf.queryExecution().optimizedPlan().condition()
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    root = jvm.org.apache.hadoop.fs.Path(path)
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    conv = jvm.scala.jdk.javaapi.CollectionConverters
    statuses = [s for s in fs.listStatus(root) if s.getPath().getName().endswith(".parquet")]
    files = conv.asScala(jvm.java.util.ArrayList(statuses)).toSeq()
    scan = jvm.bloomindex.source.SourceProviders.describe(
        spark.read.parquet(path)._jdf.queryExecution().analyzed()).get()
    catalog = jvm.bloomindex.catalog.IndexCatalog(spark._jsparkSession)
    times, d = timings(lambda: catalog.decide(cond, scan, files), runs)
    info = d.get().info()
    assert info.index() != "none", info.notApplied().mkString("; ")
    return statistics.median(times) * 1000, len(statuses) - d.get().skipped().size()


def run_case(spark, heap: Heap, name: str, path: str, key: int) -> dict:
    res = {"index": name}
    exists = name in [r.name for r in spark.sql("SHOW BLOOM INDEXES").collect()]
    if not (REUSE and exists):
        spark.sql(f"DROP BLOOM INDEX IF EXISTS {name}")
        _, res["build_s"], res["build_retained_mb"], res["build_peak_mb"] = heap.measure(
            lambda: spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k)"))
    d, res["describe_s"], res["describe_retained_mb"], res["describe_peak_mb"] = heap.measure(
        lambda: dict(spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()))
    res["files_indexed"] = int(d["files_indexed"])
    res["filter_bytes"] = int(d["filter_bytes"])
    where = f"k = {key}"
    # First planning: loads the index into the driver's cache (what it keeps is "retained").
    _, res["first_plan_s"], res["plan_retained_mb"], res["plan_peak_mb"] = heap.measure(
        lambda: spark.read.parquet(path).where(where)._jdf.queryExecution().executedPlan())
    base = spark.read.parquet(path)
    on, off = plan_ms(spark, base, where, True), plan_ms(spark, base, where, False)
    res["plan_on_ms"], res["plan_off_ms"] = on, off
    res["probe_ms"], res["probe_kept"] = probe_ms(spark, path, where)
    df = spark.read.parquet(path).where(where)
    t0 = time.perf_counter()
    res["rows"] = df.count()
    res["query_s"] = time.perf_counter() - t0
    res["files_read"] = len(df.inputFiles())
    return res


def main() -> int:
    if os.environ.get("BENCH_SCALE_CLASSIC", "1") != "0":
        classic()
    # 1,000,000 files (issue 26): a harness writes the index entries; see scale_million.py.
    import scale_million
    scale_million.run()
    return 0


def classic() -> None:
    small = os.path.join(OUT, f"scale_small_{FILES}_{ROWS}")
    big = os.path.join(OUT, f"scale_big_{BIG}")
    small_files(small)
    big_file(big)
    spark = bench_session("bench-scale", OUT)
    heap = Heap(spark)
    print(f"driver heap max {heap.mem.getHeapMemoryUsage().getMax() / MB:.0f} MB, "
          f"used at start {heap.used_after_gc() / MB:.0f} MB")
    results = []
    for name, path, key in (("scale_small", small, (FILES // 2) * ROWS + 3),
                            ("scale_big", big, (12345 * 2654435761) % (1 << 40))):
        r = run_case(spark, heap, name, path, key)
        results.append(r)
        print(json.dumps(r, indent=None, default=lambda x: round(x, 3)))
    print(f"\n{'index':<12} {'files':>7} {'filter MB':>9} {'build s':>8} {'build peak/ret MB':>18} "
          f"{'describe s':>10} {'desc peak/ret MB':>17} {'plan peak/ret MB':>17} {'probe ms':>9} {'files read':>10}")
    for r in results:
        r = {"build_s": float("nan"), "build_peak_mb": float("nan"), "build_retained_mb": float("nan"), **r}
        print(f"{r['index']:<12} {r['files_indexed']:>7} {r['filter_bytes'] / MB:>9.1f} {r['build_s']:>8.1f} "
              f"{r['build_peak_mb']:>9.0f}/{r['build_retained_mb']:<8.0f} {r['describe_s']:>10.2f} "
              f"{r['describe_peak_mb']:>8.0f}/{r['describe_retained_mb']:<8.0f} "
              f"{r['plan_peak_mb']:>8.0f}/{r['plan_retained_mb']:<8.0f} {r['probe_ms']:>9.1f} {r['files_read']:>10}")
    with open(os.path.join(OUT, f"scale_{FILES}_{BIG}.json"), "w") as f:
        json.dump(results, f, indent=1)
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
