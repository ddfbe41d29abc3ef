"""A `local-cluster[2,1,1024]` session: a standalone master and two workers in the driver's
JVM, each worker starting one executor JVM (1 core, 1024 MB) of its own.

These tests run in their own pytest process (`make test-cluster`; `make test` runs the part
not marked `slow`): a Python process holds one SparkContext, and the main suite's is
`local[2]`. tests/conftest.py leaves this folder out of the main collection.

Executors are started by the workers with the classpath of `$SPARK_HOME/jars`, so SPARK_HOME
must be a Spark distribution; here it is the pip PySpark package, which carries `jars/`
(its `bin/spark-submit` sets SPARK_HOME to itself when unset; we set it so that a
SPARK_HOME pointing elsewhere cannot mix two Sparks).
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

MASTER = "local-cluster[2,1,1024]"
EXECUTORS = 2


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left out of `make test` (run by `make test-cluster`)")


def pyspark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def executor_pids(app_id: str) -> list[int]:
    """PIDs of this application's executor JVMs, from their command lines (other Spark
    applications on the machine have other app ids)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" not in args:
            continue
        if b"--app-id" in args and args[args.index(b"--app-id") + 1].decode() == app_id:
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


def task_kernels(spark, tasks: int) -> list[dict]:
    """Per task of a small job: the executor id, PID and filter kernels of the JVM it ran in."""
    from bloomindex.session import jvm_api

    out = []
    for line in jvm_api(spark).taskKernels(spark._jsparkSession, tasks):
        executor, pid, sbbf, classic = str(line).split("\t")
        out.append({"executor": executor, "pid": int(pid), "sbbf": sbbf, "classic": classic})
    return out


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    os.environ["SPARK_HOME"] = pyspark_home()
    warehouse = tmp_path_factory.mktemp("warehouse")
    builder = (SparkSession.builder.master(MASTER)
               # Unique, so that our executors are told apart from other applications'.
               .appName(f"bloomindex-cluster-tests-{uuid.uuid4().hex[:8]}")
               .config("spark.executor.memory", "1024m")
               .config("spark.driver.memory", "1g")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse)))
    session = bloomindex.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    wait_for_executors(session)
    yield session
    session.stop()


@pytest.fixture()
def root(spark, tmp_path):
    path = str(tmp_path / "indexes")
    spark.conf.set("spark.bloomindex.root", path)
    yield path
    spark.conf.unset("spark.bloomindex.root")
