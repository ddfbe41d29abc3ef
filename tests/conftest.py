"""One SparkSession for the whole test run, configured by bloomindex.configure()."""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARQUET_TESTING = ROOT.parent / "shared" / "testdata" / "parquet-testing"
CLUSTER_TESTS = ROOT / "tests" / "cluster"
# The same API tests on a Spark Connect session: a process of their own (PySpark runs a local
# Connect server on a classic SparkContext of the process, so the two kinds cannot share one).
CONNECT_TESTS = ROOT / "tests" / "connect"
# A Connect server process and a client environment (`make test-connect-server`).
CONNECT_SERVER_TESTS = ROOT / "tests" / "connect_server"
# Indexes on s3a:// against a moto S3 server (`make test-s3`).
S3_TESTS = ROOT / "tests" / "s3"
# The JVM test classes (the encryption tests' in-memory KMS): `make test` stages them here.
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"


def pytest_ignore_collect(collection_path, config):
    """tests/cluster, tests/connect and tests/s3 need their own process (one SparkContext per
    process, see their conftest), tests/connect_server a client environment: collected only
    when named on the command line (`make test-cluster`, `make test-connect`,
    `make test-connect-server`, `make test-s3`)."""
    own = pathlib.Path(collection_path).resolve()
    if own not in (CLUSTER_TESTS, CONNECT_TESTS, CONNECT_SERVER_TESTS, S3_TESTS):
        return None
    base = pathlib.Path(config.invocation_params.dir)
    for arg in config.args:
        p = (base / arg.split("::")[0]).resolve()
        if p == own or own in p.parents:
            return None
    return True


@pytest.fixture(scope="session")
def parquet_testing() -> pathlib.Path:
    if not PARQUET_TESTING.is_dir():
        pytest.fail(f"interop files missing: expected {PARQUET_TESTING}")
    return PARQUET_TESTING


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    if not TEST_JAR.is_file():
        pytest.fail(f"{TEST_JAR} is missing: run `make test-python` (it stages the JVM test classes)")
    warehouse = tmp_path_factory.mktemp("warehouse")
    builder = (SparkSession.builder.master("local[2]")
               .appName("bloomindex-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse))
               # local[2]: the driver's class path is the executors' too.
               .config("spark.driver.extraClassPath", str(TEST_JAR))
               .config("spark.driver.memory", "2g")
               # Delta reads its log with 50 partitions by default: a tiny table's log needs 2.
               .config("spark.databricks.delta.snapshotPartitions", "2"))
    # Delta Lake's extension and catalog in the one session of the run (tests/test_delta.py).
    session = bloomindex.configure(builder, delta=True).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def jvm_api(spark):
    from bloomindex.session import jvm_api

    return jvm_api(spark)


@pytest.fixture()
def root(spark, tmp_path):
    """A fresh `spark.bloomindex.root` for one test, so indexes never leak between tests."""
    path = str(tmp_path / "indexes")
    spark.conf.set("spark.bloomindex.root", path)
    yield path
    spark.conf.unset("spark.bloomindex.root")
