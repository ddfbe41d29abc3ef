"""The Python API's tests on a Spark Connect session: ``remote("local[2]")``, a Connect server
that PySpark starts in this process, set up by ``bloomindex.configure()``.

Run in a pytest process of their own (`make test-connect`): PySpark's local Connect server
runs on a classic SparkContext of the process, which the classic tests' session would be.
The test modules here import the classic suite's tests, so each runs on both kinds of session
with this directory's ``spark`` fixture."""

from __future__ import annotations

import os
import shlex
import warnings

import pytest
from jvm_options import java_options

# What the classic fixture sets as static settings goes to the local server's JVM (a Connect
# session can set run-time settings only).
WARNINGS: list[str] = []


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    warehouse = tmp_path_factory.mktemp("warehouse")
    os.environ["PYSPARK_SUBMIT_ARGS"] = shlex.join([
        "--driver-memory", "2g", "--conf", "spark.ui.enabled=false",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.sql.warehouse.dir={warehouse}", "pyspark-shell"])
    # As PySpark's own tests: the local server on a free port (not 15002, which another server
    # of the machine may hold), which the client then asks the JVM for.
    os.environ["SPARK_TESTING"] = "1"
    # The local server's JVM gets the options of the classic suite's drivers (tests/jvm_options.py)
    # from spark-submit's launcher, which puts SPARK_SUBMIT_OPTS on a client-mode driver's command
    # line: a builder's spark.driver.extraJavaOptions would be set again on the running session
    # (a warning the tests refuse), a --conf of it would replace configure()'s.
    os.environ["SPARK_SUBMIT_OPTS"] = java_options()
    builder = (SparkSession.builder.remote("local[2]")
               .appName("bloomindex-connect-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.bloomindex.refresh.default", "manual")
               # The rate the tests were written for; tests/test_fpp_auto.py names `auto`.
               .config("spark.bloomindex.fpp.default", "0.01"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = bloomindex.configure(builder).getOrCreate()
    WARNINGS.extend(str(w.message) for w in caught)
    yield session
    session.stop()
