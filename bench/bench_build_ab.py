"""What the probe files (log format 4) cost the build: bench-build's two tables (written by
`make bench-build` first, cached in bench/out), the same index built alternately with
`spark.bloomindex.build.blockMajor` on and off in one session, the order swapped every round,
8 timed rounds after one untimed. Prints best and median of each.

Run: `.venv/bin/python bench/bench_build_ab.py` (BENCH_ROWS / BENCH_FILES as for bench-build).
Another setting alternated instead: BENCH_AB_KEY and BENCH_AB_VALUES (two, comma-separated), e.g.
`BENCH_AB_KEY=spark.bloomindex.refresh.maxProbeFiles BENCH_AB_VALUES=8,1000` (the build's rows
written by their bytes, or one probe file per task as before 2026-12-01).
"""

from __future__ import annotations

import os
import time

from common import bench_session

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
ROWS = int(os.environ.get("BENCH_ROWS", 20_000_000))
FILES = int(os.environ.get("BENCH_FILES", 200))
KEY = os.environ.get("BENCH_AB_KEY", "spark.bloomindex.build.blockMajor")
VALUES = os.environ.get("BENCH_AB_VALUES", "true,false").split(",")


def main() -> None:
    spark = bench_session("bench-build-ab", os.path.join(OUT, "ab"))
    times: dict[tuple[str, str], list[float]] = {}
    for table in (f"build_{ROWS}_{FILES}", f"build_bf_{ROWS}_{FILES}"):
        path = os.path.join(OUT, table)
        if not os.path.exists(path):
            raise SystemExit(f"{path} missing: run `make bench-build` first")
        for rnd in range(9):
            for on in (VALUES if rnd % 2 else VALUES[::-1]):
                spark.conf.set(KEY, on)
                spark.sql("DROP BLOOM INDEX IF EXISTS ab")
                t0 = time.perf_counter()
                spark.sql(f"CREATE BLOOM INDEX ab ON parquet.`{path}` FOR COLUMNS (k_bigint, k_string)")
                if rnd > 0:
                    times.setdefault((table, on), []).append(time.perf_counter() - t0)
        spark.sql("DROP BLOOM INDEX IF EXISTS ab")
    for (table, on), ts in times.items():
        ts = sorted(ts)
        print(f"{table:<28} {KEY.rsplit('.', 1)[-1]}={on:<5} best {ts[0]:.2f}s median {ts[len(ts) // 2]:.2f}s")


if __name__ == "__main__":
    main()
