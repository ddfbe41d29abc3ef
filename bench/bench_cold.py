"""`make bench-cold`: the first query on a fresh driver, and the first after a REFRESH.

Two tables, each with an index on a bigint and a string column:
  (1) BENCH_COLD_FILES Parquet files (default 1,000) of BENCH_COLD_ROWS rows (default 20,000):
      `k_bigint`, `k_string` (24 hex characters), unique per row;
  (2) bench-scale's table of BENCH_SCALE_FILES files (default 100,000) of BENCH_SCALE_ROWS rows
      (default 20), columns `k` and `s` (BENCH_COLD_SCALE=0 skips it; BENCH_COLD_SMALL=0 skips (1)).

Each figure of a "fresh driver" comes from a new Python process with its own Spark driver
(local[2]): the first point lookup's planning time (`executedPlan` of a fresh DataFrame, the
index loaded in it) and wall time (reading the folder, planning and collecting), with the index
on and off; the warm time (best of 5 of the same, then); the driver heap the index holds after
the first query (used heap after a full GC, before and after it, and `IndexCache.heldBytes`);
DESCRIBE's time (reading the index alone) and DESCRIBE EXTENDED's (listing the source too). A
long-lived session measures the first query after an incremental REFRESH (one file appended).

BENCH_COLD_CASES: a subset of on,unchecked,off,describe,extended,refresh (unchecked: the index
on, `spark.bloomindex.pruning.checkFiles` off). BENCH_COLD_PYTHON: another interpreter for the
child processes (a checkout of an earlier version, with its own index root under
bench/out/indexes-<tag>, BENCH_COLD_TAG), for before/after figures.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
FILES = int(os.environ.get("BENCH_COLD_FILES", 1000))
ROWS = int(os.environ.get("BENCH_COLD_ROWS", 20000))
SCALE = os.environ.get("BENCH_COLD_SCALE", "1") != "0"
SMALL = os.environ.get("BENCH_COLD_SMALL", "1") != "0"
SCALE_FILES = int(os.environ.get("BENCH_SCALE_FILES", 100_000))
SCALE_ROWS = int(os.environ.get("BENCH_SCALE_ROWS", 20))
TAG = os.environ.get("BENCH_COLD_TAG", "")
PYTHON = os.environ.get("BENCH_COLD_PYTHON", sys.executable)
MB = 1 << 20


def session(root_tag: str = TAG):
    from common import bench_session
    out = OUT if not root_tag else os.path.join(OUT, f"cold-{root_tag}")
    os.makedirs(out, exist_ok=True)
    return bench_session("bench-cold", out)


def tables():
    t = [("cold", os.path.join(OUT, f"cold_{FILES}_{ROWS}"), "k_bigint", "k_string")] if SMALL else []
    if SCALE:
        t.append(("cold_scale", os.path.join(OUT, f"scale_small_{SCALE_FILES}_{SCALE_ROWS}"), "k", "s"))
    return t


def prepare() -> None:
    """Writes the tables (once, cached in bench/out) and builds their indexes (once per tag)."""
    from pyspark.sql import functions as F
    spark = session()
    for name, path, kb, ks in tables():
        if name == "cold" and not os.path.exists(os.path.join(path, "_SUCCESS")):
            t0 = time.perf_counter()
            (spark.range(FILES * ROWS, numPartitions=FILES)
             .select((F.col("id") * 2654435761 % (1 << 40)).alias(kb),
                     F.sha2(F.col("id").cast("string"), 256).substr(1, 24).alias(ks))
             .write.mode("overwrite").parquet(path))
            print(f"wrote {FILES:,} files of {ROWS:,} rows: {time.perf_counter() - t0:.0f}s", flush=True)
        if name == "cold_scale":
            os.environ["BENCH_SCALE_FILES"], os.environ["BENCH_SCALE_ROWS"] = str(SCALE_FILES), str(SCALE_ROWS)
            import bench_scale
            bench_scale.small_files(path)
        exists = [r for r in spark.sql("SHOW BLOOM INDEXES").collect() if name in tuple(r)]
        if not exists:
            t0 = time.perf_counter()
            spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS ({kb}, {ks})")
            print(f"{name}: index built in {time.perf_counter() - t0:.0f}s", flush=True)
        elif PYTHON == sys.executable and layout(spark, name) != CURRENT_LAYOUT:
            # Built by an earlier version of this checkout: rebuilt in the current layout.
            t0 = time.perf_counter()
            spark.sql(f"REFRESH BLOOM INDEX {name} FULL")
            print(f"{name}: index rebuilt in the {CURRENT_LAYOUT} layout in {time.perf_counter() - t0:.0f}s", flush=True)
    spark.stop()


CURRENT_LAYOUT = "probes"


def layout(spark, name):
    """The data layout of the index's newest log entry (None before log format 3)."""
    root = spark.conf.get("spark.bloomindex.root")
    logs = sorted(glob.glob(os.path.join(root.replace("file:", ""), name, "_log", "*.json")))
    return json.load(open(logs[-1])).get("data", {}).get("layout") if logs else None


class Heap:
    def __init__(self, spark):
        mf = spark._jvm.java.lang.management.ManagementFactory
        self.mem = mf.getMemoryMXBean()
        self.jvm = spark._jvm

    def used(self) -> int:
        for _ in range(3):
            self.jvm.java.lang.System.gc()
            time.sleep(0.2)
        return self.mem.getHeapMemoryUsage().getUsed()


def held_bytes(spark):
    try:
        return int(spark._jvm.bloomindex.catalog.IndexCache.heldBytes())
    except Exception:  # an earlier version: no such method
        return None


def index_read_bytes(spark) -> int:
    """Index data bytes the queries of this process read (every column)."""
    try:
        return sum(int(v) for v in dict(spark._jvm.bloomindex.layout.IndexStore.loadedBytes()).values())
    except Exception:  # an earlier version: no such method
        return 0


def point(spark, path, kb):
    """A key in the middle of the table, found without the index."""
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        files = sorted(spark.read.parquet(path).inputFiles())
        return spark.read.parquet(files[len(files) // 2]).select(kb).limit(1).collect()[0][0]
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def first_and_warm(spark, path, where, heap=None) -> dict:
    """The first query (fresh DataFrame: read, plan, collect), then the warm best of 5."""
    r = {}
    before = heap.used() if heap else 0
    t0 = time.perf_counter()
    df = spark.read.parquet(path).where(where)
    t1 = time.perf_counter()
    df._jdf.queryExecution().executedPlan()
    t2 = time.perf_counter()
    rows = df.collect()
    t3 = time.perf_counter()
    r.update(first_wall_s=t3 - t0, first_plan_s=t2 - t1, rows=len(rows), files_read=len(df.inputFiles()))
    if heap:
        r["retained_mb"] = (heap.used() - before) / MB
        held = held_bytes(spark)
        r["held_mb"] = None if held is None else held / MB
        r["index_read_mb"] = index_read_bytes(spark) / MB
    walls, plans = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        df = spark.read.parquet(path).where(where)
        t1 = time.perf_counter()
        df._jdf.queryExecution().executedPlan()
        t2 = time.perf_counter()
        df.collect()
        walls.append(time.perf_counter() - t0)
        plans.append(t2 - t1)
    r.update(warm_wall_s=min(walls), warm_plan_s=min(plans))
    return r


def child(case: str, name: str, path: str, kb: str) -> dict:
    spark = session()
    key = point(spark, path, kb)
    where = f"{kb} = {key}"
    heap = Heap(spark)
    # The source listed once, as the first query would (its cost is in neither index figure).
    spark.read.parquet(path).inputFiles()
    out = {"case": case, "table": name}
    if case == "on":
        out.update(first_and_warm(spark, path, where, heap))
    elif case == "unchecked":
        # The index on, the files to skip not checked against storage (what FreshFiles costs).
        spark.conf.set("spark.bloomindex.pruning.checkFiles", "false")
        out.update(first_and_warm(spark, path, where, heap))
    elif case == "off":
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
        out.update(first_and_warm(spark, path, where, heap))
    elif case in ("describe", "extended"):
        # DESCRIBE reads the index alone; EXTENDED also lists the source (freshness rows).
        t0 = time.perf_counter()
        sql = f"DESCRIBE BLOOM INDEX {'EXTENDED ' if case == 'extended' else ''}{name}"
        d = dict(tuple(r) for r in spark.sql(sql).collect())
        out.update(describe_s=time.perf_counter() - t0, damage=d.get("damage"), files_indexed=d.get("files_indexed"),
                   files_new_or_changed=d.get("files_new_or_changed"))
    elif case == "refresh":
        first_and_warm(spark, path, where)
        import pyarrow as pa
        import pyarrow.parquet as pq
        extra = os.path.join(path, "part-zz-extra.parquet")
        schema = pq.read_schema(sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".parquet"))[0])
        pq.write_table(pa.table({schema.names[0]: pa.array([-1], schema.field(0).type),
                                 schema.names[1]: pa.array(["extra"], pa.string())}), extra)
        try:
            t0 = time.perf_counter()
            spark.sql(f"REFRESH BLOOM INDEX {name}")
            out["refresh_s"] = time.perf_counter() - t0
            r = first_and_warm(spark, path, where)
            out.update({f"after_refresh_{k}": v for k, v in r.items()})
        finally:
            os.remove(extra)
            spark.sql(f"REFRESH BLOOM INDEX {name}")
    spark.stop()
    return out


def run_child(case, name, path, kb) -> dict:
    p = subprocess.run([PYTHON, os.path.abspath(__file__), "child", case, name, path, kb],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)})
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"child {case} {name} failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        print("RESULT " + json.dumps(child(*sys.argv[2:6])), flush=True)
        return 0
    if PYTHON == sys.executable:
        prepare()
    else:
        subprocess.run([PYTHON, os.path.abspath(__file__), "prepare"], check=True,
                       env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)})
    results = []
    for name, path, kb, _ in tables():
        for case in os.environ.get("BENCH_COLD_CASES", "on,unchecked,off,describe,extended,refresh").split(","):
            r = run_child(case, name, path, kb)
            results.append(r)
            print(json.dumps(r, default=lambda x: round(x, 3)), flush=True)
    tag = TAG or "current"
    with open(os.path.join(OUT, f"cold_{tag}_{FILES if SMALL else 0}_{SCALE_FILES if SCALE else 0}.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\n{'table':<11} {'case':<9} {'first plan s':>12} {'first wall s':>12} {'warm plan s':>11} "
          f"{'warm wall s':>11} {'retained MB':>11} {'held MB':>8} {'read MB':>8} {'other':>20}")
    for r in results:
        def f(k, fmt="{:.2f}"):
            v = r.get(k)
            return "-" if v is None else fmt.format(v)
        other = ""
        if r["case"] in ("describe", "extended"):
            other = f"DESCRIBE{' EXTENDED' if r['case'] == 'extended' else ''} {r['describe_s']:.2f}s"
        if r["case"] == "refresh":
            other = (f"REFRESH {r['refresh_s']:.1f}s, then plan {r['after_refresh_first_plan_s']:.2f}s "
                     f"wall {r['after_refresh_first_wall_s']:.2f}s")
        print(f"{r['table']:<11} {r['case']:<9} {f('first_plan_s'):>12} {f('first_wall_s'):>12} "
              f"{f('warm_plan_s'):>11} {f('warm_wall_s'):>11} {f('retained_mb', '{:.1f}'):>11} "
              f"{f('held_mb', '{:.1f}'):>8} {f('index_read_mb', '{:.2f}'):>8} {other:>20}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "prepare":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        prepare()
        sys.exit(0)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
