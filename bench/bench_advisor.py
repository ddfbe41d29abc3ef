"""`make bench-advisor`: RECOMMEND BLOOM INDEXES and EXPLAIN BLOOM INDEX WHATIF on a generated
workload (issue 31).

Five Parquet tables of BENCH_ADVISOR_FILES files each (default 32; `products` half as many),
with columns of different distinct counts and spreads over the files:

  users     user_id clustered (unique, ranges per file), email unique strings (one file each),
            country 20 values in every file
  orders    order_id sorted, user_id random (a foreign key: ~1.7 rows a value, 1-2 files),
            status 5 values in every file
  events    session_id clustered groups of 50 rows, device 2,000 values spread at random (each
            in ~70% of the files), event_type 10 values
  products  sku unique, category clustered (200 rows each, sorted), brand 8 values everywhere
  logs      trace_id unique strings, host 50 values everywhere, level 4 values

and BENCH_ADVISOR_QUERIES queries (default 200, seed 31) mixing point lookups, IN lists, an
AND of two columns and joins (orders JOIN users on user_id, with a filter on users: the email,
or an IN list of user ids, which Spark carries over to orders.user_id).

1. The workload runs without any index: the workload history records its scans.
2. RECOMMEND BLOOM INDEXES FROM HISTORY without a budget, then with a budget of
   BENCH_ADVISOR_BUDGET_SHARE (default 0.4) of the unbounded recommendation's bytes.
3. The ground truth, from the data: for every column the workload looks up, the files holding
   each value looked up (a Spark job) and each file's distinct count. Files an index on a set
   of columns keeps, per query: the files where each indexed lookup's values are held, plus the
   others at the false positive rate (expected); its size: each file's filter at the column's
   fpp (bloomindex.sbbf.optimal_num_bytes). An exhaustive search over every subset of the
   candidate columns (every column the workload looks up, at the fpp the advisor gave it;
   per table every subset, across tables an exact multiple-choice knapsack over the Pareto
   fronts) finds the set that skips the most files within the budget. Reported: files the
   recommended set skips over the workload / files the best set skips (goal >= 0.85).
4. The recommended indexes are built (their CREATE statements) and every query is planned with
   them (EXPLAIN BLOOM INDEX): files each index skipped over the workload (goal: none skips nothing).
5. What-if: those dropped, one index per table on every candidate column (fpp 0.005) is
   compared, query by query, with EXPLAIN BLOOM INDEX WHATIF (the same columns and fpp) run
   before it is built: the share of queries whose every scan's estimate is within +-25% of the
   files the built index keeps (goal >= 0.9), and within the estimate's range.

Prints JSON (also written to bench/out/advisor/results.json).
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import random
import re
import shutil
import sys
import time
from urllib.parse import unquote, urlparse

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
OUT = ROOT / "bench" / "out" / "advisor"
FILES = int(os.environ.get("BENCH_ADVISOR_FILES", "32"))
QUERIES = int(os.environ.get("BENCH_ADVISOR_QUERIES", "200"))
BUDGET_SHARE = float(os.environ.get("BENCH_ADVISOR_BUDGET_SHARE", "0.4"))
WHATIF_FPP = 0.005
SEED = 31


def tables(files: int) -> dict[str, dict]:
    """name -> files, rows, the columns as SQL over `id` (rows 0..n-1, contiguous per file)."""
    users = files * 1500
    return {
        "users": dict(files=files, rows=users, cols={
            "user_id": "id", "email": "concat('user', CAST(id AS STRING), '@example.org')",
            "country": "concat('c', CAST(pmod(id * 7919, 20) AS STRING))"}),
        "orders": dict(files=files, rows=files * 2500, cols={
            "order_id": "id", "user_id": f"pmod(hash(id, 1), {users})",
            "status": "concat('s', CAST(pmod(hash(id, 2), 5) AS STRING))"}),
        "events": dict(files=files, rows=files * 2500, cols={
            "session_id": "id DIV 50", "device": "pmod(hash(id, 4), 2000)",
            "event_type": "CAST(pmod(hash(id, 3), 10) AS INT)"}),
        "products": dict(files=max(2, files // 2), rows=max(2, files // 2) * 500, cols={
            "sku": "concat('sku-', CAST(id * 7 AS STRING))", "category": "concat('cat', CAST(id DIV 200 AS STRING))",
            "brand": "concat('b', CAST(pmod(hash(id, 5), 8) AS STRING))"}),
        "logs": dict(files=files, rows=files * 2000, cols={
            "trace_id": "concat('tr-', CAST(id * 7919 AS STRING))", "host": "concat('h', CAST(pmod(hash(id, 7), 50) AS STRING))",
            "level": "concat('l', CAST(pmod(hash(id, 8), 4) AS STRING))"}),
    }


def lit(v) -> str:
    return f"'{v}'" if isinstance(v, str) else str(v)


def workload(spec: dict, n: int, seed: int) -> list[dict]:
    """Queries: the SQL, and per scanned table its lookups [(column, values)] (ANDed)."""
    rnd = random.Random(seed)
    u, o, e, p, g = (spec[t]["rows"] for t in ("users", "orders", "events", "products", "logs"))

    def some(f, k):
        return sorted({f() for _ in range(k)}, key=str)
    gens = {
        "user_id": lambda: rnd.randrange(u), "email": lambda: f"user{rnd.randrange(u)}@example.org",
        "country": lambda: f"c{rnd.randrange(20)}", "order_id": lambda: rnd.randrange(o),
        "o_user_id": lambda: rnd.randrange(u), "status": lambda: f"s{rnd.randrange(5)}",
        "session_id": lambda: rnd.randrange(e // 50), "device": lambda: rnd.randrange(2000),
        "sku": lambda: f"sku-{rnd.randrange(p) * 7}", "category": lambda: f"cat{rnd.randrange(max(1, p // 200))}",
        "brand": lambda: f"b{rnd.randrange(8)}", "trace_id": lambda: f"tr-{rnd.randrange(g) * 7919}",
        "host": lambda: f"h{rnd.randrange(50)}", "level": lambda: f"l{rnd.randrange(4)}",
    }

    def point(table, col, gen=None, k=1):
        vals = some(gens[gen or col], k)
        cond = f"{col} = {lit(vals[0])}" if len(vals) == 1 else f"{col} IN ({', '.join(map(lit, vals))})"
        return dict(sql=f"SELECT * FROM {table} WHERE {cond}", scans={table: [(col, vals)]}, kind="in" if k > 1 else "point")

    def and_two():
        a, b = some(gens["o_user_id"], 1), some(gens["status"], 1)
        return dict(sql=f"SELECT * FROM orders WHERE user_id = {a[0]} AND status = '{b[0]}'",
                    scans={"orders": [("user_id", a), ("status", b)]}, kind="and")

    def join_email():
        v = some(gens["email"], 1)
        return dict(sql="SELECT o.order_id, u.email FROM orders o JOIN users u ON o.user_id = u.user_id "
                        f"WHERE u.email = '{v[0]}'", scans={"users": [("email", v)]}, kind="join")

    def join_ids():
        vs = some(gens["user_id"], rnd.randint(2, 4))
        return dict(sql="SELECT o.order_id, u.country FROM orders o JOIN users u ON o.user_id = u.user_id "
                        f"WHERE u.user_id IN ({', '.join(map(str, vs))})",
                    scans={"users": [("user_id", vs)], "orders": [("user_id", vs)]}, kind="join")
    templates = [
        (22, lambda: point("users", "user_id")), (12, lambda: point("users", "email", k=rnd.randint(3, 6))),
        (14, lambda: point("users", "country")), (14, lambda: point("orders", "order_id")),
        (18, lambda: point("orders", "user_id", "o_user_id", k=rnd.randint(2, 5))), (10, and_two),
        (8, lambda: point("orders", "status")), (14, lambda: point("events", "session_id")),
        (8, lambda: point("events", "session_id", k=rnd.randint(2, 4))), (12, lambda: point("events", "device")),
        (12, lambda: point("products", "sku")), (8, lambda: point("products", "category", k=rnd.randint(2, 3))),
        (5, lambda: point("products", "brand")), (14, lambda: point("logs", "trace_id")),
        (10, lambda: point("logs", "host")), (5, lambda: point("logs", "level")),
        (12, join_email), (10, join_ids),
    ]
    weights = [w for w, _ in templates]
    return [rnd.choices(templates, weights)[0][1]() for _ in range(n)]


def path_of(uri: str) -> str:
    return os.path.normpath(unquote(urlparse(uri).path))


def pareto(options: list[tuple[int, float, tuple]]) -> list[tuple[int, float, tuple]]:
    """The (cost, gain, choice) options no other beats on both cost and gain."""
    out, best = [], -1.0
    for c, g, ch in sorted(options, key=lambda x: (x[0], -x[1])):
        if g > best:
            out.append((c, g, ch))
            best = g
    return out


def main() -> None:
    import numpy as np

    from common import bench_session
    from bloomindex import BloomIndex
    from bloomindex.sbbf import optimal_num_bytes

    t_start = time.time()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    spark = bench_session("bench-advisor", str(OUT))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # joins plan alike whatever the sizes
    bi = BloomIndex(spark)
    spec = tables(FILES)
    paths = {}
    for name, t in spec.items():
        path = str(OUT / "data" / name)
        cols = [f"{sql} AS {c}" for c, sql in t["cols"].items()]
        spark.range(0, t["rows"], numPartitions=t["files"]).selectExpr(*cols).write.parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(name)
        paths[name] = path
    queries = workload(spec, QUERIES, SEED)
    kinds = {k: sum(1 for q in queries if q["kind"] == k) for k in ("point", "in", "and", "join")}

    # 1. The workload, no index: the history records each filtered scan.
    t0 = time.time()
    for q in queries:
        spark.sql(q["sql"]).collect()
    workload_s = time.time() - t0
    history = bi.history().count()

    # 2. Recommendations.
    t0 = time.time()
    free = [r.asDict(recursive=True) for r in bi.recommend().collect()]
    recommend_free_s = time.time() - t0
    free_bytes = sum(r["index_bytes"] for r in free if r["kind"] == "create")
    budget = max(1, int(free_bytes * BUDGET_SHARE))
    t0 = time.time()
    capped = [r.asDict(recursive=True) for r in bi.recommend(budget=budget).collect()]
    recommend_budget_s = time.time() - t0

    def table_of(source: str) -> str:
        return next(n for n, p in paths.items() if source.rstrip("`").endswith("/" + n))
    fpp = {}
    for r in free + capped:  # the budgeted run's rate where it gave one
        if r["kind"] in ("create", "candidate"):
            for c, f in r["fpp"].items():
                fpp[(table_of(r["source"]), c)] = f
    recommended = [(table_of(r["source"]), c) for r in capped if r["kind"] == "create" for c in r["columns"]]
    candidates = sorted(fpp)

    # 3. The ground truth.
    files = {n: sorted(path_of(f) for f in spark.read.parquet(p).inputFiles()) for n, p in paths.items()}
    index_of = {n: {f: i for i, f in enumerate(fs)} for n, fs in files.items()}
    holders: dict[tuple, dict] = {}
    true_bytes: dict[tuple, int] = {}
    for (t, c) in candidates:
        values = sorted({v for q in queries for (col, vs) in q["scans"].get(t, []) if col == c for v in vs}, key=str)
        df = spark.read.parquet(paths[t]).selectExpr(c, "input_file_name() AS f")
        rows = df.where(df[c].isin(values)).distinct().collect()
        h: dict = {}
        for r in rows:
            h.setdefault(r[0], set()).add(index_of[t][path_of(r[1])])
        holders[(t, c)] = h
        ndvs = spark.read.parquet(paths[t]).selectExpr(c, "input_file_name() AS f").groupBy("f").agg(
            {c: "approx_count_distinct"}).collect()
        true_bytes[(t, c)] = sum(optimal_num_bytes(max(1, int(r[1])), fpp[(t, c)]) for r in ndvs)

    def skipped(t: str, cols: set) -> float:
        """Files an index on `cols` of `t` skips over the workload (expected false positives)."""
        n = len(files[t])
        total = 0.0
        for q in queries:
            looks = [(c, vs) for (c, vs) in q["scans"].get(t, []) if c in cols]
            if not looks:
                continue
            keep = np.ones(n)
            for c, vs in looks:
                hold = np.zeros(n, dtype=bool)
                for v in vs:
                    for i in holders[(t, c)].get(v, ()):
                        hold[i] = True
                fp = 1 - (1 - fpp[(t, c)]) ** len(vs)
                keep *= np.where(hold, 1.0, fp)
            total += n - keep.sum()
        return total

    by_table: dict[str, list] = {}
    for t, c in candidates:
        by_table.setdefault(t, []).append(c)
    fronts = []
    for t, cols in by_table.items():
        opts = []
        for mask in range(1 << len(cols)):
            chosen = tuple(c for i, c in enumerate(cols) if mask >> i & 1)
            opts.append((sum(true_bytes[(t, c)] for c in chosen), skipped(t, set(chosen)), tuple((t, c) for c in chosen)))
        fronts.append(pareto(opts))
    combined = [(0, 0.0, ())]
    for front in fronts:
        combined = pareto([(c1 + c2, g1 + g2, ch1 + ch2) for c1, g1, ch1 in combined for c2, g2, ch2 in front
                           if c1 + c2 <= budget])
    best_cost, best_skip, best_set = max(combined, key=lambda x: x[1])
    rec_skip = sum(skipped(t, {c for (tt, c) in recommended if tt == t}) for t in {t for t, _ in recommended})
    rec_cost = sum(true_bytes[k] for k in recommended)
    subsets = 1
    for t, cols in by_table.items():
        subsets *= 1 << len(cols)

    # 4. The recommended indexes, built: what each skips over the workload.
    t0 = time.time()
    for r in capped:
        if r["kind"] == "create":
            spark.sql(r["statement"])
    build_s = time.time() - t0
    per_index: dict[str, int] = {r["index_name"]: 0 for r in capped if r["kind"] == "create"}
    line = re.compile(r"index (\S+) \(log version \d+\) kept (\d+)/(\d+) files")
    measured_skip = 0
    for q in queries:
        for m in line.finditer(bi.explain(spark.sql(q["sql"]))):
            if m.group(1) in per_index:
                per_index[m.group(1)] += int(m.group(3)) - int(m.group(2))
                measured_skip += int(m.group(3)) - int(m.group(2))
    for name in per_index:
        bi.drop(name)

    # 5. What-if against the built index.
    cols_of = {t: [c for (tt, c) in candidates if tt == t] for t in spec}
    estimates = []
    whatif_errors: list[str] = []
    t0 = time.time()
    for q in queries:
        cols = sorted({c for t in q["scans"] for c in cols_of[t]} | {c for t in sql_tables(q["sql"]) for c in cols_of[t]})
        try:
            rows = bi.what_if(cols, q["sql"], fpp=WHATIF_FPP).collect()
        except Exception as e:  # counted: a query the what-if cannot estimate
            whatif_errors.append(f"{q['sql']}: {str(e)[:200]}")
            rows = []
        estimates.append({table_of(r["source"]): r.asDict(recursive=True) for r in rows})
    whatif_s = time.time() - t0
    for t in spec:
        cols = ", ".join(f"{c} OPTIONS (fpp = {WHATIF_FPP})" for c in cols_of[t])
        spark.sql(f"CREATE BLOOM INDEX whatif_{t} ON parquet.`{paths[t]}` FOR COLUMNS ({cols})")
    within = in_range = compared = 0
    misses = []
    for q, est in zip(queries, estimates):
        actual = {}
        for m in line.finditer(bi.explain(spark.sql(q["sql"]))):
            actual[m.group(1).replace("whatif_", "")] = int(m.group(2))
        scans = [t for t in est if t in actual]
        if not scans:
            continue
        compared += 1
        ok = all(abs(est[t]["files_kept"] - actual[t]) <= 0.25 * actual[t] for t in scans)
        inr = all(est[t]["files_kept_low"] - 1e-9 <= actual[t] <= est[t]["files_kept_high"] + 1e-9 for t in scans)
        within += ok
        in_range += inr
        if not ok and len(misses) < 5:
            misses.append({"sql": q["sql"], "estimate": {t: round(est[t]["files_kept"], 2) for t in scans},
                           "actual": {t: actual[t] for t in scans}})

    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version(),
        "load_average": os.getloadavg(), "files_per_table": FILES, "queries": QUERIES, "query_kinds": kinds,
        "history_scans": history, "workload_s": round(workload_s, 1),
        "recommend_s": {"no_budget": round(recommend_free_s, 1), "budget": round(recommend_budget_s, 1)},
        "recommended_no_budget": sorted((table_of(r["source"]), r["columns"], r["index_bytes"]) for r in free if r["kind"] == "create"),
        "not_recommended": sorted((table_of(r["source"]), r["columns"][0]) for r in free if r["kind"] == "candidate"),
        "budget_bytes": budget,
        "recommended": sorted(recommended), "recommended_true_bytes": rec_cost,
        "recommended_files_skipped": round(rec_skip, 1),
        "exhaustive": {"candidates": len(candidates), "subsets": subsets, "best_set": sorted(best_set),
                       "best_true_bytes": best_cost, "best_files_skipped": round(best_skip, 1)},
        "recommended_vs_best": round(rec_skip / best_skip, 4) if best_skip else None,
        "estimated_files_skipped_recommended": round(sum(r["files_skipped_total"] for r in capped if r["kind"] == "create"), 1),
        "built": {"build_s": round(build_s, 1), "files_skipped_per_index": per_index, "files_skipped": measured_skip},
        "whatif": {"queries_compared": compared, "within_25pct": within,
                   "share_within_25pct": round(within / compared, 4) if compared else None,
                   "share_in_range": round(in_range / compared, 4) if compared else None, "fpp": WHATIF_FPP,
                   "seconds": round(whatif_s, 1), "errors": whatif_errors, "misses": misses},
        "total_s": round(time.time() - t_start, 1),
    }
    (OUT / "results.json").write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    goals = [out["recommended_vs_best"] is not None and out["recommended_vs_best"] >= 0.85,
             all(v > 0 for v in per_index.values()),
             out["whatif"]["share_within_25pct"] is not None and out["whatif"]["share_within_25pct"] >= 0.9]
    print("goals:", "met" if all(goals) else f"NOT met {goals}")
    spark.stop()


def sql_tables(sql: str) -> list[str]:
    return [t for t in ("users", "orders", "events", "products", "logs") if re.search(rf"\b{t}\b", sql)]


if __name__ == "__main__":
    main()
