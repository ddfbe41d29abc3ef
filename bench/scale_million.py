"""`make bench-scale`, the million-file part (issue 26): first-query planning, driver memory held
by the loaded index and REFRESH of 1% new files, at BENCH_SCALE_SYNTH_FILES (default 1,000,000).

The harness does not write a million data files with rows nor build their index from the data:
  - bench/out/scale_synth_<N>/table holds 4 real Parquet files (the sample, keys < 0), indexed by
    CREATE BLOOM INDEX synth_<N> ON parquet.`...` FOR COLUMNS (k) (a real log entry);
  - then N - 4 files part-<n>.parquet, each a copy of one empty Parquet file (no row), and
    their index entries written by bloomindex.bench.SyntheticIndex (test jar): BENCH_SCALE_PROBE_FILES
    probe files (default 1: what a build writes for these rows since 2026-12-01, one per
    spark.bloomindex.optimize.targetFileBytes of a column's rows; 64 is what a local[2] build wrote
    before, one per task), a split block filter per file claiming the keys
    n*20 .. n*20+19 (a lookup keeps ~1% of the files: the filters' false positives), and the
    summary, through the index's own writers. Paths, sizes and times are the listing's.
Measured, each case in a new Python process and JVM (a fresh driver, local[2], -Xmx8g):
  - `on` / `unchecked` / `off`: the table listed (not timed), then the first point lookup's planning
    (`executedPlan`, the index loaded in it), with pruning on (`unchecked`: on, without checking the
    files to skip against storage, spark.bloomindex.pruning.checkFiles=false) and off; warm planning
    (best of 3). Wall time, and CPU time (of the planning thread, and of the driver process: every
    thread, GC included): on a loaded machine the wall time is mostly waiting for a core.
    Memory: used heap after a full GC (System.gc() twice) after the first planning, less the same
    with the loaded index dropped from the cache ("retained"; no full GC before the first planning,
    which would shrink the heap and make the planning start a concurrent cycle a driver does not
    run then), and `IndexCache.heldBytes` (what the loaded index data holds, by its own count).
  - `refresh`: 1% new files (N / 100 real Parquet files of 20 rows, new keys) written, then an
    incremental REFRESH timed (and its heap: retained, and the heap pools' peak above the level
    before, which counts garbage and the tasks' memory: an upper bound), then the first planning
    after it in that session. It changes the index: the next run builds the table again.
BENCH_SCALE_SYNTH_CASES: a subset of on,unchecked,off,refresh, and `rowsapart` (`unchecked` with no
probe file read whole by its footer's read: the block rows read after the footers, as before
2026-12-01).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
N = int(os.environ.get("BENCH_SCALE_SYNTH_FILES", "1000000"))
CASES = [c for c in os.environ.get("BENCH_SCALE_SYNTH_CASES", "on,unchecked,off,refresh").split(",") if c]
TEST_JAR = pathlib.Path(os.environ.get("BENCH_TEST_JAR", str(ROOT / "target" / "bloomindex-tests.jar")))
ROWS = 20
SAMPLE = 4
PROBE_FILES = int(os.environ.get("BENCH_SCALE_PROBE_FILES", "1"))
MB = 1 << 20


def paths(n: int):
    base = OUT / f"scale_synth_{n}"
    return base, base / "table", base / "indexes"


def session(n: int):
    import bloomindex
    from pyspark.sql import SparkSession

    _, _, root = paths(n)
    spark = (bloomindex.configure(SparkSession.builder.master("local[2]").appName("bench-scale-million"))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "8g").config("spark.sql.shuffle.partitions", "8")
             .config("spark.bloomindex.refresh.default", "manual")
             .config("spark.bloomindex.root", str(root))
             .config("spark.driver.extraClassPath", os.pathsep.join([str(TEST_JAR)] + [str(j) for j in bloomindex.jar_paths()]))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def prepare(n: int) -> dict | None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    base, table, root = paths(n)
    if (base / "_DONE").exists():
        if json.loads((base / "_DONE").read_text()).get("probe_files") == PROBE_FILES:
            return None
        (base / "_FILES").unlink(missing_ok=True)  # another count of probe files: everything is written again
    spark = session(n)
    t0 = time.perf_counter()
    if not (base / "_FILES").exists():  # the sample, its index and the empty files (once)
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        spark.range(1, SAMPLE * 1000 + 1, 1, SAMPLE).selectExpr("-id AS k").write.parquet(str(table))
        spark.sql(f"CREATE BLOOM INDEX synth_{n} ON parquet.`{table}` FOR COLUMNS (k)")
        buf = io.BytesIO()
        pq.write_table(pa.table({"k": pa.array([], pa.int64())}), buf)
        body = buf.getvalue()
        for i in range(n - SAMPLE):
            with open(table / f"part-{i:07d}.parquet", "wb") as f:
                f.write(body)
        (base / "_FILES").write_text("")
    files_s = time.perf_counter() - t0
    r = json.loads(spark._jvm.bloomindex.bench.SyntheticIndex.extend(
        spark._jsparkSession, f"synth_{n}", str(table), "k", PROBE_FILES, ROWS))
    r.update(files=n, files_s=round(files_s, 1), setup_s=round(time.perf_counter() - t0, 1))
    spark.stop()
    (base / "_DONE").write_text(json.dumps(r))
    return r


class Heap:
    def __init__(self, spark):
        mf = spark._jvm.java.lang.management.ManagementFactory
        self.mem = mf.getMemoryMXBean()
        self.pools = [p for p in mf.getMemoryPoolMXBeans() if str(p.getType()) == "Heap memory"]
        self.jvm = spark._jvm

    def used(self) -> int:
        for _ in range(2):
            self.jvm.java.lang.System.gc()
            time.sleep(0.3)
        return self.mem.getHeapMemoryUsage().getUsed()


class Cpu:
    """CPU seconds: of the thread that plans (py4j runs this Python thread's calls on one JVM thread)
    and of the whole driver process (every thread: the probe's and the checks' threads, GC; from
    /proc, in clock ticks)."""

    def __init__(self, spark):
        self.thread = spark._jvm.java.lang.management.ManagementFactory.getThreadMXBean()
        self.stat = pathlib.Path(f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/stat")
        self.tick = os.sysconf("SC_CLK_TCK")

    def process(self) -> float:
        fields = self.stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime

    def now(self):
        return (self.thread.getCurrentThreadCpuTime(), self.process())

    def threads(self) -> dict:
        """CPU seconds so far per kind of thread (its name without digits: `C2 CompilerThre`,
        `G1 Conc#`, `bloomindex-load-`, ...), from /proc/<pid>/task."""
        out: dict = {}
        for t in self.stat.parent.joinpath("task").iterdir():
            try:
                text = (t / "stat").read_text()
            except OSError:
                continue
            name = "".join(ch for ch in text[text.index("(") + 1:text.rindex(")")] if not ch.isdigit()).strip()
            fields = text.rsplit(")", 1)[1].split()
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / self.tick
        return out

    @staticmethod
    def spent(before: dict, after: dict) -> dict:
        """The kinds of threads that used at least 0.05 s between two `threads()`, most first."""
        d = {k: round(v - before.get(k, 0.0), 2) for k, v in after.items()}
        return dict(sorted(((k, v) for k, v in d.items() if v >= 0.05), key=lambda kv: -kv[1]))

    def since(self, c0) -> dict:
        t, p = self.now()
        return {"thread": round((t - c0[0]) / 1e9, 3), "process": round(p - c0[1], 2)}


def child(n: int, case: str) -> dict:
    _, table, _ = paths(n)
    spark = session(n)
    heap = Heap(spark)
    out = {"files": n, "case": case}
    if case == "off":
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    if case in ("unchecked", "rowsapart"):
        spark.conf.set("spark.bloomindex.pruning.checkFiles", "false")
    if case == "rowsapart":  # no probe file read whole with its footer: the reads before 2026-12-01
        spark.conf.set("spark.bloomindex.load.coalesceGapBytes", "4k")
    cpu = Cpu(spark)
    t0 = time.perf_counter()
    df = spark.read.parquet(str(table))
    out["list_s"] = round(time.perf_counter() - t0, 1)
    from common import wait_for_warmup
    out["warmup_wait_s"] = wait_for_warmup(spark)
    key = (n // 2) * ROWS + 3
    if case == "refresh":
        import numpy as np
        import pyarrow as pa
        import pyarrow.parquet as pq

        new = n // 100
        t0 = time.perf_counter()
        for i in range(new):
            k = np.arange((n + i) * ROWS, (n + i + 1) * ROWS, dtype=np.int64)
            pq.write_table(pa.table({"k": k}), table / f"part-new-{i:06d}.parquet")
        out["new_files"], out["write_new_s"] = new, round(time.perf_counter() - t0, 1)
        before = heap.used()
        for p in heap.pools:
            p.resetPeakUsage()
        t0 = time.perf_counter()
        spark.sql(f"REFRESH BLOOM INDEX synth_{n}")
        out["refresh_s"] = round(time.perf_counter() - t0, 1)
        peak = sum(p.getPeakUsage().getUsed() for p in heap.pools)
        out["refresh_peak_mb"] = round((peak - before) / MB)
        out["refresh_retained_mb"] = round((heap.used() - before) / MB, 1)
        d = dict(tuple(r) for r in spark.sql(f"DESCRIBE BLOOM INDEX synth_{n}").collect())
        out["files_indexed_after"] = d.get("files_indexed")
        df = spark.read.parquet(str(table))
        key = (n + 7) * ROWS + 3  # a key of a new file
    # No full collection before the first planning, as in a driver: a full collection shrinks the
    # heap to its live data, after which the planning's first large arrays start a concurrent
    # cycle (about a second of CPU at a million files) that a driver whose heap grew with its
    # listing does not run at that moment. What the index retains is measured after (below).
    q = df.where(f"k = {key}")
    out["load_avg_1m"] = round(os.getloadavg()[0], 1)
    c0, th0 = cpu.now(), cpu.threads()
    t0 = time.perf_counter()
    q._jdf.queryExecution().executedPlan()
    out["first_plan_s"] = round(time.perf_counter() - t0, 2)
    out["first_plan_cpu_s"] = cpu.since(c0)
    out["first_plan_cpu_by_thread_s"] = Cpu.spent(th0, cpu.threads())
    # The scan's files selected and split into tasks (what `execute()` does before a job runs:
    # the pruned file index's listing): the rest of the first query's driver work before tasks run.
    c0 = cpu.now()
    t0 = time.perf_counter()
    q._jdf.queryExecution().executedPlan().execute()
    out["first_rdd_s"] = round(time.perf_counter() - t0, 2)
    out["first_rdd_cpu_s"] = cpu.since(c0)
    after = heap.used()
    out["held_mb"] = round(int(spark._jvm.bloomindex.catalog.IndexCache.heldBytes()) / MB, 1)
    out["index_read_mb"] = round(sum(int(v) for v in dict(spark._jvm.bloomindex.layout.IndexStore.loadedBytes()).values()) / MB, 1)
    warm = []
    for _ in range(3):
        c0, th0 = cpu.now(), cpu.threads()
        t0 = time.perf_counter()
        df.where(f"k = {key}")._jdf.queryExecution().executedPlan()
        warm.append((time.perf_counter() - t0, cpu.since(c0), Cpu.spent(th0, cpu.threads())))
    best = min(warm, key=lambda w: w[0])
    out["warm_plan_s"] = round(best[0], 3)
    out["warm_plan_cpu_s"] = best[1]  # of the fastest
    out["warm_plan_cpu_by_thread_s"] = best[2]
    q2 = df.where(f"k = {key}")
    out["files_read"] = len(q2.inputFiles())
    # Retained: the heap after full collections with the loaded index, less the same once the
    # queries' plans (which hold the pruned file index) are let go and the index dropped from the
    # cache (the listing, held by `df`, stays).
    del q, q2
    import gc
    gc.collect()  # py4j then releases the JVM objects the Python ones held
    spark._jvm.bloomindex.catalog.IndexCache.clear()
    out["retained_mb"] = round((after - heap.used()) / MB, 1)
    if case == "refresh":
        base, _, _ = paths(n)
        (base / "_DONE").unlink()  # the index and table changed: the next run writes them again
        (base / "_FILES").unlink()
    spark.stop()
    return out


def run() -> list[dict]:
    if not TEST_JAR.is_file():
        sys.exit(f"{TEST_JAR} is missing: `make bench-scale` stages it")
    if N <= 0:
        return []
    code = "import json, sys; sys.path[:0] = %r; import scale_million as m; print('RESULT ' + json.dumps(m.%s))"
    env = {**os.environ}
    results = []
    p = subprocess.run([sys.executable, "-c", code % ([str(ROOT / "bench")], f"prepare({N})")], capture_output=True,
                       text=True, env=env)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        sys.exit(f"prepare failed:\n{p.stderr[-4000:]}")
    print("prepare", line[7:], flush=True)
    for case in CASES:
        p = subprocess.run([sys.executable, "-c", code % ([str(ROOT / "bench")], f"child({N}, {case!r})")],
                           capture_output=True, text=True, env=env)
        line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"case {case} failed:\n{p.stderr[-4000:]}")
        results.append(json.loads(line[7:]))
        print(json.dumps(results[-1]), flush=True)
    (OUT / f"scale_million_{N}.json").write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    run()
