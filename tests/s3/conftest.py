"""A moto S3 server on 127.0.0.1 and a `local[2]` session whose S3A client points at it.

These tests run in their own pytest process (`make test-s3`; tests/conftest.py leaves this
folder out of the main collection): the session needs hadoop-aws and the AWS SDK on its class
path. See s3_helpers.py.
"""

from __future__ import annotations

import os
import uuid

import pytest

from s3_helpers import BUCKET, TEST_JAR, MotoServer, s3_jars, s3a_conf


@pytest.fixture(scope="session")
def moto(tmp_path_factory):
    server = MotoServer(tmp_path_factory.mktemp("moto"))
    server.client().create_bucket(Bucket=BUCKET)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def spark(moto, tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    if not TEST_JAR.is_file():
        pytest.fail(f"{TEST_JAR} is missing: run `make test-s3` (it stages the JVM test classes)")
    builder = (SparkSession.builder.master("local[2]")
               .appName(f"bloomindex-s3-tests-{uuid.uuid4().hex[:8]}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
               # local[2]: the driver's class path is the executors' too.
               .config("spark.driver.extraClassPath", os.pathsep.join([str(TEST_JAR)] + s3_jars()))
               .config("spark.driver.memory", "1g"))
    for k, v in s3a_conf(moto.endpoint).items():
        builder = builder.config(f"spark.hadoop.{k}", v)
    session = bloomindex.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture()
def s3_root(spark, moto):
    """A fresh index root and data folder on s3a:// for one test."""
    base = f"s3a://{BUCKET}/{uuid.uuid4().hex[:12]}"
    spark.conf.set("spark.bloomindex.root", f"{base}/indexes")
    yield base
    spark.conf.unset("spark.bloomindex.root")
