"""Python filter speed: int64 values hashed and inserted per second, and checks per second.

Run by `make bench-sbbf` after the JVM benchmark. The target for the Python side is at least
5 million int64 values per second hashed and inserted.
"""

from __future__ import annotations

import platform
import time

import numpy as np

import bloomindex


def best_of(runs: int, fn) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    n = 5_000_000
    values = np.random.default_rng(7).integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    print(f"# Python SBBF benchmark: {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.processor() or platform.machine()}; {n:,} int64 values, best of 3")
    print(f"{'filter':<24} {'hash':>10} {'hash+insert':>12} {'check':>10}   (million values/s)")
    hash_rate = n / best_of(3, lambda: bloomindex.hash_values(values, "bigint")) / 1e6
    sizes = [("for_ndv(5M, 1%) pow2", bloomindex.optimal_num_bytes(n, 0.01, power_of_two=True)),
             ("for_ndv(5M, 1%) exact", bloomindex.optimal_num_bytes(n, 0.01, power_of_two=False)),
             ("1 MiB", 1 << 20), ("64 MiB", 64 << 20)]
    for label, num_bytes in sizes:
        def insert():
            bloomindex.Sbbf(num_bytes).insert(values, "bigint")
        f = bloomindex.Sbbf(num_bytes)
        f.insert(values, "bigint")
        insert_rate = n / best_of(3, insert) / 1e6
        check_rate = n / best_of(3, lambda: f.check(values, "bigint")) / 1e6
        print(f"{label + f' ({num_bytes >> 10} KiB)':<24} {hash_rate:>10.1f} {insert_rate:>12.1f} {check_rate:>10.1f}")


if __name__ == "__main__":
    main()
