"""`make bench-s3-latency`: the first query on a fresh driver against an index on S3 with a
fixed delay per request (issue 26).

A moto S3 server on 127.0.0.1, and between it and Spark's S3A client the latency proxy of the
tests (tests/s3/latency_proxy.py: BENCH_LAT_DELAY_MS per HTTP request, default 20). For each
size N of BENCH_LAT_SIZES (default 10000,100000):

  setup (straight to moto, no delay; once per run, moto keeps objects in memory):
    s3a://<bucket>/lat_N/table: 4 real Parquet files (the sample, keys < 0), CREATE BLOOM INDEX
    on column k (index root s3a://<bucket>/lat_N/indexes); then N - 4 more files
    part-<n>.parquet, each an empty Parquet file (no row), and their index entries written by
    the JVM harness bloomindex.bench.SyntheticIndex (real probe files and summary, through the
    index's own writers, BENCH_LAT_PROBE_FILES per column (default 1: what a build writes for
    these rows since 2026-12-01, one probe file per spark.bloomindex.optimize.targetFileBytes of a
    column's rows; 64 is what a local[2] build wrote before, one per task); each claims the keys n*20 .. n*20+19, so a lookup keeps about 1% of the files).
    Not built from data: see SyntheticIndex's doc.

  measured, each in a new Python process and JVM (a fresh driver), through the proxy:
    the table is read (`spark.read.parquet`: the listing and the schema, not timed), the proxy's
    counters reset, then the planning of a point lookup `k = <key>` (`executedPlan`, the index
    loaded in it) is timed, and the requests it made counted by kind (probe, summary, log, ...).
    Cases: `on` (the index, the read path of this version), `before` (the index, reads as
    before issue 26: load.coalesceGapBytes=-1, load.footerReadBytes=0), `off` (pruning off).
    `on` checks the files to skip against storage (spark.bloomindex.pruning.checkFiles, the
    default: a DataFrame keeps its listing for its life, so a read by path is checked too; on S3
    one listing of the table's folder, 1,000 names a page); `unchecked` is `on` without that
    check; `rowsapart` is `unchecked` with no probe file read whole (its block rows read after
    its footer, as before 2026-12-01). Case `table` (BENCH_LAT_CASES) measures a catalog table over the same folder, checked.

BENCH_LAT_STREAM: S3A's input stream type in the measured drivers (unset: S3A's default, which
for hadoop-aws 3.5.0 is `analytics`; `classic`). BENCH_LAT_REPEATS (default 2) runs of each case; BENCH_LAT_THREADS sets
spark.bloomindex.load.threads in the children (default: unset, 8). BENCH_LAT_DEBUG=1 prints each
request (time, method, kind, key) and the load's INFO timings; BENCH_LAT_JFR=<path prefix>
records each child driver with Java Flight Recorder (<prefix>-<case>.jfr); BENCH_LAT_JAVA_OPTIONS
adds JVM options to each child driver (the JIT's share: `-XX:TieredStopAtLevel=1`).
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "s3"))
sys.path.insert(0, str(ROOT / "bench"))

OUT = ROOT / "bench" / "out"
SIZES = [int(x) for x in os.environ.get("BENCH_LAT_SIZES", "10000,100000").split(",") if x]
DELAY_MS = float(os.environ.get("BENCH_LAT_DELAY_MS", "20"))
PROBE_FILES = int(os.environ.get("BENCH_LAT_PROBE_FILES", "1"))
REPEATS = int(os.environ.get("BENCH_LAT_REPEATS", "2"))
CASES = [c for c in os.environ.get("BENCH_LAT_CASES", "on,before,off").split(",") if c]
THREADS = os.environ.get("BENCH_LAT_THREADS", "")
# S3A's input stream: unset, S3A's default (hadoop-aws 3.5.0: `analytics`, the Analytics
# Accelerator Library: a HEAD per open, small objects read whole); `classic`: the ranges asked for.
STREAM = os.environ.get("BENCH_LAT_STREAM", "")
ROWS = 20
SAMPLE = 4
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"

CASE_CONF = {
    "on": {},
    "before": {"spark.bloomindex.load.coalesceGapBytes": "-1", "spark.bloomindex.load.footerReadBytes": "0"},
    "off": {"spark.bloomindex.pruning.enabled": "false"},
    # `on` with the check's S3 listing pages read by the AWS SDK's own reader (before S3ListPage).
    "sdkpages": {"spark.internal.bloomindex.test.s3ReadPages": "false"},
    # The index without checking the files to skip against storage (see FreshFiles).
    "unchecked": {"spark.bloomindex.pruning.checkFiles": "false"},
    # `unchecked` with the probe files' block rows read after their footers, not with them (a
    # gap smaller than what lies before a footer's read: no file read whole), as before 2026-12-01.
    "rowsapart": {"spark.bloomindex.pruning.checkFiles": "false", "spark.bloomindex.load.coalesceGapBytes": "4k"},
    "table": {},
}


def session(extra_jars: list[str], hadoop: dict[str, str], conf: dict[str, str], root: str):
    import bloomindex
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master("local[2]").appName("bench-s3-latency")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", "4")
         .config("spark.bloomindex.refresh.default", "manual")
         .config("spark.bloomindex.root", root)
         .config("spark.driver.extraClassPath", os.pathsep.join(
             [str(TEST_JAR)] + [str(j) for j in bloomindex.jar_paths()] + extra_jars)))
    for k, v in hadoop.items():
        b = b.config(f"spark.hadoop.{k}", v)
    for k, v in conf.items():
        b = b.config(k, v)
    spark = bloomindex.configure(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def empty_parquet() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"k": pa.array([], pa.int64())}), buf)
    return buf.getvalue()


def setup(moto, jars: list[str], n: int) -> dict:
    """The table and index of size n on moto (no delay): sample, CREATE, empty files, synthetic entries."""
    import s3_helpers

    base = f"s3a://{s3_helpers.BUCKET}/lat_{n}"
    source, root = f"{base}/table", f"{base}/indexes"
    spark = session(jars, s3_helpers.s3a_conf(moto.endpoint), {}, root)
    t0 = time.perf_counter()
    spark.range(1, SAMPLE * 1000 + 1, 1, SAMPLE).selectExpr("-id AS k").write.mode("overwrite").parquet(source)
    spark.sql(f"CREATE BLOOM INDEX lat_{n} ON parquet.`{source}` FOR COLUMNS (k)")
    # The empty files, stored straight into moto's backend (MotoServer.seed).
    moto.seed(s3_helpers.BUCKET, f"lat_{n}/table", [f"part-{i:07d}.parquet" for i in range(n - SAMPLE)], empty_parquet())
    t_files = time.perf_counter() - t0
    r = json.loads(spark._jvm.bloomindex.bench.SyntheticIndex.extend(
        spark._jsparkSession, f"lat_{n}", source, "k", PROBE_FILES, ROWS))
    r.update(files=n, setup_s=round(time.perf_counter() - t0, 1), files_s=round(t_files, 1))
    spark.stop()
    return r


def process_cpu_s(pid: int) -> float:
    """CPU time (user + system, every thread) of process `pid` so far, from /proc."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(moto_port: int, jars: list[str], n: int, case: str, moto_pid: int) -> dict:
    """One fresh driver: the table listed, then the first point lookup's planning through the proxy."""
    import s3_helpers
    from latency_proxy import LatencyProxy

    proxy = LatencyProxy(moto_port, delay_ms=DELAY_MS, max_connections=256).start()
    base = f"s3a://{s3_helpers.BUCKET}/lat_{n}"
    conf = dict(CASE_CONF[case])
    if THREADS:
        conf["spark.bloomindex.load.threads"] = THREADS
    hadoop = s3_helpers.s3a_conf(proxy.endpoint)
    if STREAM:
        hadoop["fs.s3a.input.stream.type"] = STREAM
    # The driver JVM's own options (the JIT's share of a fresh driver's first query: e.g.
    # `-XX:TieredStopAtLevel=1`), and a flight recording of it (where its CPU goes).
    jfr = os.environ.get("BENCH_LAT_JFR")
    options = " ".join(filter(None, [os.environ.get("BENCH_LAT_JAVA_OPTIONS", "").strip(),
                                     jfr and f"-XX:StartFlightRecording=filename={jfr}-{case}.jfr,settings=profile"]))
    if options:
        conf["spark.driver.extraJavaOptions"] = options
    spark = session(jars, hadoop, conf, f"{base}/indexes")
    key = (n // 2) * ROWS + 3
    t0 = time.perf_counter()
    if case == "table":
        spark.sql(f"CREATE TABLE IF NOT EXISTS lat_t_{n} USING parquet LOCATION '{base}/table'")
        df = spark.table(f"lat_t_{n}")
    else:
        df = spark.read.parquet(f"{base}/table")
    list_s = time.perf_counter() - t0
    from common import wait_for_warmup
    warmup_wait_s = wait_for_warmup(spark)
    q = df.where(f"k = {key}")
    proxy.keep_log = bool(os.environ.get("BENCH_LAT_DEBUG"))
    if proxy.keep_log:  # the load's own timings (INFO: summary, footers, build) on stderr
        for logger in ("bloomindex.layout.IndexLayout", "bloomindex.catalog.IndexCache", "bloomindex.catalog.FreshFiles"):
            spark._jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
                logger, spark._jvm.org.apache.logging.log4j.Level.INFO)
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    proxy.reset()
    w0 = time.time()
    cpu0 = process_cpu_s(jvm_pid)
    # The test rig's own CPU in the same window, on the same two cores: the moto server (Python,
    # it renders every listing page's XML) and this process (the latency proxy's thread copies
    # every byte). A real object store's work is not on the driver's machine.
    server0 = process_cpu_s(moto_pid)
    proxy0 = time.process_time()
    t0 = time.perf_counter()
    plan = q._jdf.queryExecution().executedPlan()
    plan_s = time.perf_counter() - t0
    proxy_cpu_s = time.process_time() - proxy0
    server_cpu_s = process_cpu_s(moto_pid) - server0
    rig_cpu_s = proxy_cpu_s + server_cpu_s
    # The driver JVM's CPU time (all its threads) during the planning: the part of the wall time
    # that is work, not waiting for requests (or for a core, on a loaded machine).
    plan_cpu_s = process_cpu_s(jvm_pid) - cpu0
    counts = proxy.counts()
    if proxy.keep_log:
        for t, m, k, target in proxy.log():
            print(f"REQ {t - w0:8.3f} {m} {k} {target[:140]}", file=sys.stderr)
    nbytes = proxy.requested_bytes()
    files = len(q.inputFiles())
    read = {k: int(v) for k, v in dict(spark._jvm.bloomindex.layout.IndexStore.loadedBytes()).items()}
    # The same JVM, its code warm, the index dropped (as a new driver would have it): what the
    # index's reads cost without the JVM's first-query costs, best of 3.
    warm = []
    for _ in range(3):
        spark._jvm.bloomindex.catalog.IndexCache.clear()
        proxy.reset()
        t1 = time.perf_counter()
        df.where(f"k = {key + len(warm) + 1}")._jdf.queryExecution().executedPlan()
        warm.append((time.perf_counter() - t1, proxy.total()))
    spark.stop()
    proxy.stop()
    index_kinds = ("probe", "summary", "log", "index", "global")
    return {"files": n, "case": case, "stream": STREAM or "default", "plan_s": round(plan_s, 3), "plan_start": round(w0, 3), "plan_cpu_s": round(plan_cpu_s, 3), "rig_cpu_s": round(rig_cpu_s, 3), "server_cpu_s": round(server_cpu_s, 3), "proxy_cpu_s": round(proxy_cpu_s, 3), "list_s": round(list_s, 1), "warmup_wait_s": warmup_wait_s,
            "files_read": files, "requests": sum(counts.values()),
            "index_requests": sum(v for k, v in counts.items() if k.split(" ")[1] in index_kinds),
            "probe_gets": counts.get("GET probe", 0), "counts": counts, "ranged_bytes": nbytes,
            "index_bytes_read": sum(read.values()), "plan_nodes": len(str(plan)) > 0,
            "warm_cold_index_plan_s": round(min(w[0] for w in warm), 3), "warm_requests": min(w[1] for w in warm)}


def main() -> None:
    import s3_helpers

    if not TEST_JAR.is_file():
        sys.exit(f"{TEST_JAR} is missing: `make bench-s3-latency` stages it")
    jars = sorted(str(p) for p in (ROOT / ".tools" / "s3").glob("*.jar"))
    if not jars:
        sys.exit("no S3 client jars in .tools/s3: `make bench-s3-latency` copies them")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-s3-latency-"))
    os.environ["BLOOMINDEX_MOTO_SEED"] = "1"  # the setup's bulk route (moto_server.py)
    moto = s3_helpers.MotoServer(tmp)
    results = []
    try:
        moto.client().create_bucket(Bucket=s3_helpers.BUCKET)
        for n in SIZES:
            s = setup(moto, jars, n)
            print("setup", json.dumps(s), flush=True)
            for rep in range(REPEATS):
                for case in CASES:
                    code = ("import json, sys; sys.path[:0] = %r; import bench_s3_latency as b; "
                            "print('RESULT ' + json.dumps(b.child(%d, %r, %d, %r, %d)))"
                            % ([str(ROOT / "bench")], moto.port, jars, n, case, moto.proc.pid))
                    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
                    if os.environ.get("BENCH_LAT_DEBUG"):
                        print("\n".join(ln for ln in p.stderr.splitlines() if ln.startswith("REQ ") or "bloomindex: " in ln), file=sys.stderr)
                    if line is None:
                        print(p.stderr[-3000:], file=sys.stderr)
                        raise SystemExit(f"case {case} at {n} failed")
                    r = json.loads(line[7:])
                    r["run"] = rep + 1
                    results.append(r)
                    print(json.dumps(r), flush=True)
    finally:
        moto.stop()
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_s3_latency.json").write_text(json.dumps(results, indent=1))
    print(f"\ndelay {DELAY_MS:g} ms per request, stream {STREAM or 'default'}, {PROBE_FILES} probe files per column, load average "
          f"{os.getloadavg()[0]:.1f}")
    print("| files | case | first planning s (runs) | driver CPU s | rig CPU s (server + proxy) | warm JVM, index dropped: planning s | requests (index) | probe GETs | files read |\n|---|---|---|---|---|---|---|---|---|")
    for n in SIZES:
        for case in CASES:
            rs = [r for r in results if r["files"] == n and r["case"] == case]
            if rs:
                print(f"| {n:,} | {case} | {statistics.median(r['plan_s'] for r in rs):.2f} "
                      f"({', '.join(str(r['plan_s']) for r in rs)}) | {statistics.median(r['plan_cpu_s'] for r in rs):.2f} "
                      f"| {statistics.median(r['rig_cpu_s'] for r in rs):.2f} | {min(r.get('warm_cold_index_plan_s', 0) for r in rs):.3f} "
                      f"| {rs[0]['requests']} ({rs[0]['index_requests']}) "
                      f"| {rs[0]['probe_gets']} | {rs[0]['files_read']} |")


if __name__ == "__main__":
    main()
