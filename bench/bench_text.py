"""`make bench-text`: text search (issue 25) on generated log lines, with and without the index.

A table of ``BLOOMINDEX_TEXT_ROWS`` log lines (default 20,000,000) in ``BLOOMINDEX_TEXT_FILES``
Parquet files (default 1,000), generated with Spark SQL expressions only (no Python UDFs) and
cached under bench/out: a timestamp, a level, a service, a URL, a user agent and a message
holding a W3C-style trace id (32 hex digits, one per line), a span id, a user, durations and,
on ERROR lines, an error code ``E<aa><bb>`` whose ``aa`` is the file number modulo 100 (so a
code is held by 1% of the files).

For each of two indexes on ``message``, built in turn (``USING TOKENS``, then ``USING NGRAMS
(3)``): the build time against a scan of the column (``select(message).write.format("noop")``),
the index's size against the data's (the whole table, and the ``message`` column chunks
alone), and per query ``SELECT count(*) FROM logs WHERE <predicate>`` with the index and
without it (``spark.bloomindex.pruning.enabled=false``) in the same session, alternating,
best of ``BLOOMINDEX_TEXT_RUNS`` (default 3) after one warm-up of each:

- ``trace``: the trace id of one line (held by one file), as each filter can answer it: a
  bounded token for the token filter (``contains(message, 'trace_id=<id> ')``), a 16-digit
  piece for the n-gram filter (``LIKE '%<piece>%'``);
- ``error code``: ``LIKE '%code=E4217 %'`` (tokens) / ``LIKE '%code=E4217%'`` (3-grams);
- ``common word``: a word on every file's lines (``LIKE '% completed %'`` / ``'%completed%'``).

Writes bench/out/bench_text.json (and prints the figures). Goals: trace and error code >= 20x
faster with the index; the common word no more than 5% slower; the token index at most 10% of
the data.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import platform
import random
import subprocess
import sys
import time

from common import bench_session

ROWS = int(os.environ.get("BLOOMINDEX_TEXT_ROWS", 20_000_000))
FILES = int(os.environ.get("BLOOMINDEX_TEXT_FILES", 1000))
RUNS = int(os.environ.get("BLOOMINDEX_TEXT_RUNS", 3))
FPP_PROBES = 200
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
DATA = os.path.join(OUT, f"text_logs_{ROWS}_{FILES}")
EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z

SERVICES = ["checkout", "cart", "payments", "search", "catalog", "users", "auth", "orders", "inventory",
            "shipping", "billing", "notifications", "gateway", "recommendations", "reviews", "media"]
RESOURCES = ["orders", "users", "carts", "payments", "search", "items", "sessions", "invoices", "reviews", "images"]
AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
    "curl/8.5.0", "python-requests/2.32.3", "okhttp/4.12.0", "Go-http-client/2.0",
]
ERRORS = ["connection reset by peer", "upstream timed out", "deadline exceeded", "invalid token",
          "null pointer in handler", "disk quota exceeded", "too many open files", "lock wait timeout"]
TABLES = ["orders", "line_items", "customers", "events", "sessions"]


def _arr(xs: list[str]) -> str:
    return "array(" + ", ".join("'" + x.replace("'", "\\'") + "'" for x in xs) + ")"


def _pick(xs: list[str], h: str) -> str:
    return f"element_at({_arr(xs)}, CAST(pmod({h}, {len(xs)}) AS INT) + 1)"


TRACE = "lower(concat(lpad(hex(xxhash64(id, 7)), 16, '0'), lpad(hex(xxhash64(id, 11)), 16, '0')))"


def generate(spark) -> float:
    """The log table, by Spark SQL expressions: spark.range's partitions are contiguous id
    ranges, one file each, so `f` (id DIV rows per file) is the file's number."""
    rpf = ROWS // FILES
    t0 = time.perf_counter()
    base = spark.range(0, ROWS, 1, FILES).selectExpr(
        "id", f"CAST(id DIV {rpf} AS INT) AS f", "xxhash64(id) AS h", f"{TRACE} AS trace")
    lines = base.selectExpr(
        f"timestamp_seconds({EPOCH} + id DIV 20) AS ts",
        "CASE WHEN pmod(h, 100) < 55 THEN 'INFO' WHEN pmod(h, 100) < 80 THEN 'DEBUG' "
        "WHEN pmod(h, 100) < 95 THEN 'WARN' ELSE 'ERROR' END AS level",
        f"{_pick(SERVICES, 'h DIV 100')} AS service",
        f"concat('/api/v', pmod(h DIV 7, 3) + 1, '/', {_pick(RESOURCES, 'h DIV 21')}, '/', pmod(h DIV 210, 1000000),"
        " CASE WHEN pmod(h DIV 11, 4) = 0 THEN concat('?page=', pmod(h DIV 44, 50)) ELSE '' END) AS url",
        f"{_pick(AGENTS, 'h DIV 1000')} AS user_agent",
        "f", "h", "trace")
    message = (
        "CASE "
        "WHEN level = 'ERROR' THEN concat('request failed with code=E', lpad(CAST(pmod(f, 100) AS STRING), 2, '0'), "
        f"lpad(CAST(pmod(h DIV 17, 100) AS STRING), 2, '0'), ' error: ', {_pick(ERRORS, 'h DIV 1700')}, "
        "' trace_id=', trace, ' span_id=', substr(trace, 17, 16), ' user=u', pmod(h DIV 3, 100000)) "
        "WHEN level = 'WARN' THEN concat('slow query took ', 200 + pmod(h DIV 5, 5000), ' ms on table ', "
        f"{_pick(TABLES, 'h DIV 13')}, ' trace_id=', trace, ' span_id=', substr(trace, 17, 16), ' rows=', pmod(h DIV 19, 10000)) "
        "WHEN level = 'DEBUG' THEN concat('cache miss for key ', service, ':', pmod(h DIV 23, 1000000), "
        "' trace_id=', trace, ' span_id=', substr(trace, 17, 16), ' ttl=', pmod(h DIV 29, 3600), 's') "
        "ELSE concat('request GET ', url, ' completed in ', pmod(h DIV 31, 900) + 1, ' ms status=200 trace_id=', "
        "trace, ' span_id=', substr(trace, 17, 16), ' user=u', pmod(h DIV 3, 100000)) END")
    (lines.selectExpr("ts", "level", "service", "url", "user_agent", f"{message} AS message")
     .write.mode("overwrite").parquet(DATA))
    return time.perf_counter() - t0


def du(path: str) -> int:
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(path, "**", "*"), recursive=True) if os.path.isfile(p))


def message_bytes(path: str) -> int:
    import pyarrow.parquet as pq

    total = 0
    for p in glob.glob(os.path.join(path, "*.parquet")):
        md = pq.ParquetFile(p).metadata
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for c in range(rg.num_columns):
                if rg.column(c).path_in_schema == "message":
                    total += rg.column(c).total_compressed_size
    return total


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    spark = bench_session("bench-text", OUT)
    result = {"load_average_start": os.getloadavg(), "rows": ROWS, "files": FILES, "runs": RUNS, "date": dt.date.today().isoformat(),
              "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
                         f"Python {platform.python_version()}, Spark {spark.version}",
              "command": "make bench-text" + (f" (BLOOMINDEX_TEXT_ROWS={ROWS} BLOOMINDEX_TEXT_FILES={FILES})"
                                               if (ROWS, FILES) != (20_000_000, 1000) else "")}
    if not os.path.exists(os.path.join(DATA, "_SUCCESS")):
        secs = generate(spark)
        print(f"generated {ROWS:,} log lines in {FILES} files: {secs:.0f}s")
        result["generate_s"] = round(secs, 1)
    df = spark.read.parquet(DATA)
    df.createOrReplaceTempView("logs")
    nfiles = len(df.inputFiles())
    data_bytes, msg_bytes = du(DATA), message_bytes(DATA)
    result.update(files_listed=nfiles, data_bytes=data_bytes, message_bytes=msg_bytes)
    print(f"data: {nfiles} files, {data_bytes / 1e6:.0f} MB, message column {msg_bytes / 1e6:.0f} MB")

    mid = ROWS // 2 + 12_345
    trace = spark.range(mid, mid + 1).selectExpr(f"{TRACE} AS t").collect()[0].t
    code = "E42" + "17"

    def scan():
        df.select("message").write.format("noop").mode("overwrite").save()

    scan()
    scan_s = min(timed(scan) for _ in range(RUNS))
    result["scan_message_s"] = round(scan_s, 2)
    print(f"scan of message (noop write): {scan_s:.2f}s")

    kinds = {
        "tokens": ("message USING TOKENS", {
            # contains(), not LIKE '%trace_id=...%': the `_` of trace_id would be a wildcard and make
            # Spark match a regular expression, 4x slower than the substring search without the index.
            "trace": f"contains(message, 'trace_id={trace} ')",
            "error code": f"message LIKE '%code={code} %'",
            "common word": "message LIKE '% completed %'"}),
        "ngrams3": ("message USING NGRAMS (3)", {
            "trace": f"message LIKE '%{trace[4:20]}%'",
            "error code": f"message LIKE '%code={code}%'",
            "common word": "message LIKE '%completed%'"}),
    }
    result["indexes"] = {}
    root = os.path.join(OUT, "indexes")
    for kind, (cols, queries) in kinds.items():
        name = f"bench_text_{kind}"
        spark.sql("DROP BLOOM INDEX IF EXISTS bench_text_tokens")
        spark.sql("DROP BLOOM INDEX IF EXISTS bench_text_ngrams3")
        build_s = timed(lambda: spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{DATA}` FOR COLUMNS ({cols})"))
        index_bytes = du(os.path.join(root, name))
        described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}
        entry = {"columns": cols, "build_s": round(build_s, 2), "build_vs_scan": round(build_s / scan_s, 2),
                 "index_bytes": index_bytes, "share_of_data": round(index_bytes / data_bytes, 4),
                 "share_of_message_column": round(index_bytes / msg_bytes, 4),
                 "describe": {k: str(v) for k, v in described.items()}, "queries": {}}
        print(f"\n{kind}: build {build_s:.1f}s ({build_s / scan_s:.2f}x the scan), index {index_bytes / 1e6:.1f} MB = "
              f"{100 * index_bytes / data_bytes:.2f}% of the data, {100 * index_bytes / msg_bytes:.2f}% of the message column")
        print(f"  {'query':<12} {'off s':>7} {'on s':>7} {'speed-up':>9} {'files':>11} {'count':>8}")
        for qname, where in queries.items():
            sql = f"SELECT count(*) FROM logs WHERE {where}"
            on_times, off_times = [], []
            for run in range(RUNS + 1):  # alternating, the first of each a warm-up
                spark.conf.set("spark.bloomindex.pruning.enabled", "false")
                t_off = timed(lambda: spark.sql(sql).collect())
                spark.conf.set("spark.bloomindex.pruning.enabled", "true")
                t_on = timed(lambda: spark.sql(sql).collect())
                if run:
                    off_times.append(t_off)
                    on_times.append(t_on)
            plan_ms = {}
            for on in (False, True):  # planning a fresh query: listing (cached), our probe, physical planning
                spark.conf.set("spark.bloomindex.pruning.enabled", str(on).lower())
                plan_ms[on] = 1000 * min(timed(lambda: spark._jsparkSession.sql(sql).queryExecution().executedPlan())
                                         for _ in range(5))
            spark.conf.set("spark.bloomindex.pruning.enabled", "true")
            kept = len(spark.sql(f"SELECT * FROM logs WHERE {where}").inputFiles())
            n_on = spark.sql(sql).collect()[0][0]
            spark.conf.set("spark.bloomindex.pruning.enabled", "false")
            n_off = spark.sql(sql).collect()[0][0]
            spark.conf.unset("spark.bloomindex.pruning.enabled")
            assert n_on == n_off, (kind, qname, n_on, n_off)
            holders = spark.sql(f"SELECT count(*) FROM (SELECT DISTINCT input_file_name() FROM logs WHERE {where})").collect()[0][0]
            off, on = min(off_times), min(on_times)
            entry["queries"][qname] = {"where": where, "off_s": round(off, 3), "on_s": round(on, 3),
                                       "off_runs": [round(x, 3) for x in off_times], "on_runs": [round(x, 3) for x in on_times],
                                       "speedup": round(off / on, 2), "plan_off_ms": round(plan_ms[False], 1),
                                       "plan_on_ms": round(plan_ms[True], 1), "files_kept": kept, "files_holding": holders,
                                       "files": nfiles, "count": n_on}
            print(f"  {qname:<12} {off:>7.2f} {on:>7.2f} {off / on:>8.1f}x {kept:>5}/{nfiles:<5} {n_on:>8}  "
                  f"(held by {holders} files; planning {plan_ms[False]:.0f} / {plan_ms[True]:.0f} ms off / on)")
        # The filters' false positive rate as the planner sees it: files kept for a unit no line
        # holds (planning only), averaged over random units.
        rng = random.Random(25)
        probes = []
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        for _ in range(FPP_PROBES if os.environ.get("BLOOMINDEX_TEXT_FPP", "1") == "1" else 0):
            if kind == "tokens":  # letters g-z: never in a hex id, a digit run or the fixed words
                unit = "".join(rng.choice("ghijklmnopqrsuvwxyz") for _ in range(9))
                where = f"message LIKE '% {unit} %'"
            else:  # upper-case letters other than the G, E and T of 'GET' and the codes' E
                unit = "".join(rng.choice("ABCDFHIJKLMNOPQRSUVWXYZ") for _ in range(3))
                where = f"message LIKE '%{unit}%'"
            probes.append(len(spark._jsparkSession.sql(f"SELECT * FROM logs WHERE {where}").inputFiles()))
        spark.conf.unset("spark.bloomindex.pruning.enabled")
        entry["measured_fpp"] = round(sum(probes) / (max(1, len(probes)) * nfiles), 4)
        print(f"  measured false positive rate: {100 * entry['measured_fpp']:.2f}% of files kept for an absent unit "
              f"({FPP_PROBES} units)")
        result["indexes"][kind] = entry
    spark.sql("DROP BLOOM INDEX IF EXISTS bench_text_tokens")
    spark.sql("DROP BLOOM INDEX IF EXISTS bench_text_ngrams3")
    try:
        result["load_average_end"] = os.getloadavg()
        result["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        pass
    out = os.path.join(OUT, "bench_text.json" if (ROWS, FILES) == (20_000_000, 1000) else f"bench_text_{ROWS}_{FILES}.json")
    with open(out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(f"\nwrote {out}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
