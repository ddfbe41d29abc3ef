"""The first lookup's planning on a fresh driver when an index's column is stored as Parquet rows
(the `columns` layout: encrypted indexes, `spark.bloomindex.build.blockMajor=false`), read by the
driver itself or, past `spark.bloomindex.load.driverMaxFiles`, by Spark jobs.

    BENCH_JOB_FILES=20000 BENCH_JOB_CASES=driver,job,driver,job .venv/bin/python bench/bench_column_job.py

The table (`bench/out/column_job_<n>/table`: n Parquet files of 5 int64 keys, written by pyarrow)
and its index (columns layout, one column) are made once. Each case runs in a driver of its own
(local[2]): the table listed, then the planning of `k = <key>` timed (wall, and the driver
process's CPU from /proc), with `load.driverMaxFiles` at its default (`driver`) or 0 (`job`).
Prints one JSON line per case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROWS = 5
OUT = Path(__file__).resolve().parent / "out"


def table_of(n: int) -> Path:
    return OUT / f"column_job_{n}" / "table"


def prepare(n: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = table_of(n)
    if not (table / "_DONE").exists():
        table.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            pq.write_table(pa.table({"k": np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)}),
                           table / f"part-{i:06d}.parquet")
        (table / "_DONE").write_text("")
    from common import bench_session
    spark = bench_session("column-job-prepare", str(table.parent))
    name = f"column_job_{n}"
    if not any(r[0] == name for r in spark.sql("SHOW BLOOM INDEXES").collect()):
        spark.conf.set("spark.bloomindex.build.blockMajor", "false")
        spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{table}` FOR COLUMNS (k)")
    spark.stop()


def jvm_cpu(spark) -> float:
    """CPU seconds of the driver process so far (every thread; utime + stime from /proc)."""
    stat = Path(f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(n: int, case: str) -> dict:
    from common import bench_session, wait_for_warmup
    spark = bench_session("column-job", str(table_of(n).parent))
    if case == "job":
        spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
    df = spark.read.parquet(str(table_of(n)))
    wait_for_warmup(spark)
    key = (n // 2) * ROWS + 3
    q = df.where(f"k = {key}")
    c0, t0 = jvm_cpu(spark), time.perf_counter()
    q._jdf.queryExecution().executedPlan()
    out = {"files": n, "case": case, "first_plan_s": round(time.perf_counter() - t0, 2),
           "first_plan_cpu_s": round(jvm_cpu(spark) - c0, 2), "files_read": len(q.inputFiles())}
    spark.stop()
    return out


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(child(int(sys.argv[1]), sys.argv[2])))
        return
    n = int(os.environ.get("BENCH_JOB_FILES", "20000"))
    prepare(n)
    for case in os.environ.get("BENCH_JOB_CASES", "driver,job,driver,job").split(","):
        r = subprocess.run([sys.executable, __file__, str(n), case], capture_output=True, text=True)
        line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-2000:]
        print(line, flush=True)


if __name__ == "__main__":
    main()
