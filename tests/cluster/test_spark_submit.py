"""`spark-submit` (the pip PySpark package's script) of tests/cluster/submit_job.py with the
flags the README gives, on a local cluster of one executor JVM."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import bloomindex
from bloomindex.session import EXTENSIONS_CLASS, VECTOR_MODULE_FLAG
from cluster_helpers import pyspark_home
from index_helpers import native_kernel

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "submit_job.py")


def spark_submit(work, executor_options: str) -> dict:
    submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    assert os.access(submit, os.X_OK), f"no spark-submit next to {sys.executable}"
    args = [submit, "--master", "local-cluster[1,1,1024]",
            "--jars", ",".join(bloomindex.jar_paths()),
            "--conf", f"spark.sql.extensions={EXTENSIONS_CLASS}",
            "--driver-java-options", VECTOR_MODULE_FLAG,
            "--conf", "spark.executor.memory=1024m",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.ui.showConsoleProgress=false",
            "--conf", f"spark.executor.extraJavaOptions={executor_options}",
            # The rate the file counts below were written for: the default, `auto`, may choose a
            # higher one for a table this small (its budget is a tenth of the indexed bytes).
            "--conf", "spark.bloomindex.fpp.default=0.01",
            JOB, str(work)]
    env = dict(os.environ, SPARK_HOME=pyspark_home(), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    assert p.returncode == 0 and lines, f"spark-submit failed ({p.returncode}):\n{p.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.slow
def test_spark_submit_with_jars_and_confs(tmp_path):
    r = spark_submit(tmp_path, VECTOR_MODULE_FLAG)
    assert r["master"] == "local-cluster[1,1,1024]"
    assert r["indexes"] == ["events_id"]
    assert r["rows_on"] == r["rows_off"] and [row[0] for row in r["rows_on"]] == [7, 3500]
    assert r["files_total"] == 8 and r["files_read"] == 2
    assert r["driver_kernel"] == native_kernel(r["vector_bits"])
    assert {t["sbbf"] for t in r["tasks"]} == {native_kernel(r["vector_bits"])}
    assert all(t["executor"] != "driver" and t["pid"] != r["driver_pid"] for t in r["tasks"])


@pytest.mark.slow
def test_the_kernel_reported_is_the_executors_own(tmp_path):
    """A control for the kernel check: executors told to run the scalar kernel report it,
    while the driver, not told, reports the vector one (same answers either way). Spark 4.2's
    launcher itself puts --add-modules=jdk.incubator.vector on every JVM it starts, so leaving
    our flag out would not show a difference; -Dbloomindex.kernel does."""
    r = spark_submit(tmp_path, f"{VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar")
    assert r["driver_kernel"] == native_kernel(r["vector_bits"])
    assert {t["sbbf"] for t in r["tasks"]} == {"scalar"}
    assert r["rows_on"] == r["rows_off"] and r["files_read"] == 2
