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
import uuid

import pytest

from cluster_helpers import MASTER, pyspark_home, wait_for_executors


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: left out of `make test` (run by `make test-cluster`, which `make test-nightly` runs)")


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
               # Kryo, as many production clusters: every broadcast (the Hadoop configuration a
               # build's tasks read with, the join filters) and task result goes through it; with
               # registration required, as the strictest (configure() adds bloomindex's registrator).
               .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
               .config("spark.kryo.registrationRequired", "true")
               .config("spark.sql.warehouse.dir", str(warehouse))
               .config("spark.bloomindex.refresh.default", "manual")
               # The rate the tests were written for (the default, `auto`, is tests/test_fpp_auto.py's).
               .config("spark.bloomindex.fpp.default", "0.01"))
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
