"""A fake-gcs-server on 127.0.0.1 and a `local[2]` session whose GCS connector points at it.

These tests run in their own pytest process (`make test-gcs`; tests/conftest.py leaves this
folder out of the main collection): the session needs the GCS connector on its class path.
See gcs_helpers.py.
"""

from __future__ import annotations

import os
import uuid

import pytest

from gcs_helpers import BUCKET, TEST_JAR, FakeGcsServer, gcs_conf, gcs_jars


@pytest.fixture(scope="session")
def gcs(tmp_path_factory):
    server = FakeGcsServer(tmp_path_factory.mktemp("fake-gcs"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(gcs, tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    if not TEST_JAR.is_file():
        pytest.fail(f"{TEST_JAR} is missing: run `make test-gcs` (it stages the JVM test classes)")
    builder = (SparkSession.builder.master("local[2]")
               .appName(f"bloomindex-gcs-tests-{uuid.uuid4().hex[:8]}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
               # local[2]: the driver's class path is the executors' too.
               .config("spark.driver.extraClassPath", os.pathsep.join([str(TEST_JAR)] + gcs_jars()))
               .config("spark.driver.memory", "1g"))
    for k, v in gcs_conf(gcs.endpoint).items():
        builder = builder.config(f"spark.hadoop.{k}", v)
    session = bloomindex.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture()
def gs_root(spark, gcs):
    """A fresh index root and data folder on gs:// for one test."""
    base = f"gs://{BUCKET}/{uuid.uuid4().hex[:12]}"
    spark.conf.set("spark.bloomindex.root", f"{base}/indexes")
    yield base
    spark.conf.unset("spark.bloomindex.root")
