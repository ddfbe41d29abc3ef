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
               .config("spark.driver.memory", "1g")
               .config("spark.bloomindex.refresh.default", "manual")
               # The rate the tests were written for (the default, `auto`, is tests/test_fpp_auto.py's).
               .config("spark.bloomindex.fpp.default", "0.01"))
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


def commit_race(index_dir: str, test_jar: pathlib.Path, jars: list[str], hadoop_conf: dict[str, str],
                tmp_path: pathlib.Path, rounds: int) -> dict[int, dict[str, tuple[str, str]]]:
    """Two JVM processes (`bloomindex.log.CommitRace`) committing versions 2 .. rounds + 1 of the
    index in `index_dir`, each round both at once (a barrier of local files), with `hadoop_conf`:
    {version: {process: (operation id, outcome)}}. Each process's log is in tmp_path/race-<me>.log."""
    import subprocess

    import bloomindex

    pyspark_jars = os.path.join(os.path.dirname(__import__("pyspark").__file__), "jars", "*")
    cp = os.pathsep.join([pyspark_jars, *bloomindex.jar_paths(), str(test_jar), *jars])
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    conf = [f"{k}={v}" for k, v in hadoop_conf.items()]
    procs = {}
    for me, other in (("a", "b"), ("b", "a")):
        procs[me] = subprocess.Popen(
            ["java", "-Xmx384m", "-cp", cp, "bloomindex.log.CommitRace", index_dir, str(barrier), me, other,
             "2", str(rounds), *conf],
            stdout=subprocess.PIPE, stderr=open(tmp_path / f"race-{me}.log", "w"), text=True)
    results: dict[int, dict[str, tuple[str, str]]] = {}
    for me, p in procs.items():
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, (tmp_path / f"race-{me}.log").read_text()[-3000:]
        for line in out.splitlines():
            v, op, outcome = line.split(" ", 2)
            results.setdefault(int(v), {})[me] = (op, outcome)
    assert sorted(results) == list(range(2, rounds + 2))
    return results

