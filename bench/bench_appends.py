"""`make bench-write`, second part: many small appends under an on-write index (issue 29).

A Parquet folder with an index on two columns (`refresh = 'on_write'`) takes APPENDS appends of
one small file each (every write refreshes the index, with the automatic housekeeping:
`spark.bloomindex.refresh.maxProbeFiles` and the clean-up each refresh does). Then:
  - the probe files per column of the live version (target: at most 10), and the data folders left;
  - first-query planning of a point lookup on a fresh driver (a new Python process and JVM each,
    the source listed first, then `executedPlan` timed), against an index built fresh (one CREATE)
    over a copy of the same files: RUNS drivers each, medians (target: within 10%).

BENCH_APPENDS (200), BENCH_APPENDS_ROWS (500), BENCH_APPENDS_RUNS (5) scale it. Writes
bench/out/appends.json.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out", "appends")
INDEXES = os.path.join(OUT, "indexes")
APPENDS = int(os.environ.get("BENCH_APPENDS", "200"))
ROWS = int(os.environ.get("BENCH_APPENDS_ROWS", "500"))
RUNS = int(os.environ.get("BENCH_APPENDS_RUNS", "5"))


def session(app: str):
    from pyspark.sql import SparkSession
    import bloomindex

    builder = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", "4")
               .config("spark.bloomindex.root", INDEXES))
    spark = bloomindex.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def live(name: str) -> dict:
    entries = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(INDEXES, name, "_log", "*.json")))]
    return [e for e in entries if e["state"] == "ACTIVE"][-1]


def probe_files(name: str) -> dict[str, int]:
    with open(os.path.join(INDEXES, name, live(name)["data"]["dir"], "_summary.json")) as f:
        columns = json.load(f)["columns"]
    return {c: len(s.get("probeFiles", {})) + len(s.get("reusedProbeFiles", {})) for c, s in columns.items()}


def child(path: str, key: int) -> None:
    """One fresh driver: the folder listed, then the first point lookup's planning timed."""
    spark = session("bench-appends-child")
    spark.read.parquet(path).inputFiles()
    df = spark.read.parquet(path).where(f"k = {key}")
    t0 = time.perf_counter()
    df._jdf.queryExecution().executedPlan()
    plan_s = time.perf_counter() - t0
    files = len(df.inputFiles())
    print("RESULT " + json.dumps({"plan_s": plan_s, "files_read": files, "rows": df.count()}), flush=True)
    spark.stop()


def first_query(path: str, key: int) -> list[dict]:
    out = []
    for _ in range(RUNS):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "child", path, str(key)],
                           capture_output=True, text=True)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if p.returncode != 0 or not lines:
            raise RuntimeError(f"child failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
        out.append(json.loads(lines[-1][len("RESULT "):]))
    return out


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    appended, fresh = os.path.join(OUT, "appended"), os.path.join(OUT, "fresh")
    spark = session("bench-appends")

    def batch(i: int):
        return (spark.range(i * ROWS, (i + 1) * ROWS, numPartitions=1)
                .selectExpr("id AS k", "concat('key-', id) AS s"))

    batch(0).write.parquet(appended)
    spark.sql(f"CREATE BLOOM INDEX ap ON parquet.`{appended}` FOR COLUMNS (k, s) OPTIONS (refresh = 'on_write')")
    times = []
    most = {"k": 0, "s": 0}
    for i in range(1, APPENDS + 1):
        t0 = time.perf_counter()
        batch(i).write.mode("append").parquet(appended)
        times.append(time.perf_counter() - t0)
        counts = probe_files("ap")
        most = {c: max(most[c], n) for c, n in counts.items()}
        if i % 20 == 0:
            print(f"append {i}: {times[-1]:.2f} s, probe files per column {counts}", flush=True)
    entry = live("ap")
    assert entry["data"]["indexedFiles"] == APPENDS + 1, entry["data"]
    shutil.copytree(appended, fresh)
    spark.sql(f"CREATE BLOOM INDEX fr ON parquet.`{fresh}` FOR COLUMNS (k, s) OPTIONS (refresh = 'manual')")
    spark.stop()

    key = (APPENDS // 2) * ROWS + ROWS // 2
    after_appends, built_fresh = first_query(appended, key), first_query(fresh, key)
    result = {
        "machine": os.uname().nodename, "cpus": os.cpu_count(), "appends": APPENDS, "rows_per_file": ROWS,
        "append_s_median": statistics.median(times), "append_s_max": max(times),
        "probe_files_per_column": probe_files("ap"), "probe_files_per_column_max_seen": most,
        "probe_files_per_column_fresh": probe_files("fr"),
        "data_folders_left": len(os.listdir(os.path.join(INDEXES, "ap", "data"))),
        "log_versions": len(glob.glob(os.path.join(INDEXES, "ap", "_log", "*.json"))),
        "first_plan_s_after_appends": [r["plan_s"] for r in after_appends],
        "first_plan_s_fresh_index": [r["plan_s"] for r in built_fresh],
        "files_read": [after_appends[0]["files_read"], built_fresh[0]["files_read"]],
    }
    a, f = statistics.median(result["first_plan_s_after_appends"]), statistics.median(result["first_plan_s_fresh_index"])
    result.update(first_plan_s_median_after_appends=a, first_plan_s_median_fresh=f, planning_ratio=a / f)
    with open(os.path.join(ROOT, "bench", "out", "appends.json"), "w") as out:
        json.dump(result, out, indent=2)
    print(json.dumps(result, indent=2))
    print(f"\n{APPENDS} appends: probe files per column now {result['probe_files_per_column']} (most seen "
          f"{most}; target at most 10); first-query planning on a fresh driver {a * 1000:.0f} ms after the appends "
          f"vs {f * 1000:.0f} ms for a fresh index ({a / f:.2f}x; target at most 1.10x); files read "
          f"{result['files_read']}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(main())
