"""Helpers of the cluster tests: the local cluster's shape, its executor JVMs."""

from __future__ import annotations

import os
import time

import pytest

MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2


def pyspark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def executor_pids(spark) -> list[int]:
    """PIDs of this application's executor JVMs, from their command lines: app id and
    driver URL both ours (another engineer's local cluster may have the same app id, which
    is a timestamp and a per-master counter, but not the same driver port)."""
    app_id = spark.sparkContext.applicationId
    driver_port = spark.sparkContext.getConf().get("spark.driver.port")
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = [a.decode(errors="replace") for a in f.read().split(b"\0")]
        except OSError:
            continue
        if "org.apache.spark.executor.CoarseGrainedExecutorBackend" not in args:
            continue
        opts = dict(zip(args, args[1:]))
        if opts.get("--app-id") == app_id and opts.get("--driver-url", "").endswith(f":{driver_port}"):
            pids.append(int(entry))
    return sorted(pids)


def executor_cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def wait_for_executors(spark, n: int = EXECUTORS, timeout: float = 120.0) -> None:
    """Until `n` executors are registered (the driver's block manager counts as one more)."""
    deadline = time.monotonic() + timeout
    status = spark.sparkContext._jsc.sc()
    while status.getExecutorMemoryStatus().size() < n + 1:
        if time.monotonic() > deadline:
            pytest.fail(f"{n} executors did not register within {timeout:.0f} s")
        time.sleep(0.5)
