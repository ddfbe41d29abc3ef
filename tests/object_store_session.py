"""The Spark session and per-test index roots of the object-store tests (tests/s3, tests/gcs):
one `local[2]` session whose Hadoop file system client points at a local API server."""

from __future__ import annotations

import os
import pathlib
import uuid
from typing import Iterator

import pytest


def object_store_session(store: str, test_jar: pathlib.Path, jars: list[str], hadoop_conf: dict[str, str],
                         warehouse: pathlib.Path) -> Iterator:
    """Yields the session of `make test-<store>`: bloomindex configured, the JVM test classes and
    the store client's `jars` on the class path, `hadoop_conf` as `spark.hadoop.*`; stopped after."""
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    if not test_jar.is_file():
        pytest.fail(f"{test_jar} is missing: run `make test-{store}` (it stages the JVM test classes)")
    builder = (SparkSession.builder.master("local[2]")
               .appName(f"bloomindex-{store}-tests-{uuid.uuid4().hex[:8]}")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse))
               # local[2]: the driver's class path is the executors' too.
               .config("spark.driver.extraClassPath", os.pathsep.join([str(test_jar)] + jars))
               .config("spark.driver.memory", "1g"))
    for k, v in hadoop_conf.items():
        builder = builder.config(f"spark.hadoop.{k}", v)
    session = bloomindex.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def index_root(spark, bucket_url: str) -> Iterator[str]:
    """Yields a fresh folder under `bucket_url` for one test, its `indexes/` the session's index root."""
    base = f"{bucket_url}/{uuid.uuid4().hex[:12]}"
    spark.conf.set("spark.bloomindex.root", f"{base}/indexes")
    yield base
    spark.conf.unset("spark.bloomindex.root")
