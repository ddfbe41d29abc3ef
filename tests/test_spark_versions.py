"""Issue 18: the jar runs on Spark 4.1.x to 4.3.x, and a session on any other Spark fails at its
start with BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION naming that range (the check is in
BloomIndexExtensions; the JVM side is tested in SparkVersionsSuite). A fake version reaches the
check through the system property ``bloomindex.testing.sparkVersion`` of a driver JVM of its own.
The other Spark versions themselves run in ``make test-spark-versions`` (tests/spark_versions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

JOB = r"""
import json, sys
import bloomindex
from pyspark.sql import SparkSession

builder = (SparkSession.builder.master("local[1]").appName("bloomindex-version-check")
           .config("spark.ui.enabled", "false")
           .config("spark.driver.extraJavaOptions", "-Dbloomindex.testing.sparkVersion=" + sys.argv[1]))
try:
    spark = bloomindex.configure(builder).getOrCreate()
except Exception as e:
    # The session's constructor fails in the JVM, before PySpark converts errors: a Py4JJavaError
    # holding Spark's AnalysisException.
    j = getattr(e, "java_exception", None)
    print("RESULT " + json.dumps({
        "error": type(e).__name__, "java": j.getClass().getName() if j is not None else None,
        "condition": j.getCondition() if j is not None else None,
        "sqlState": j.getSqlState() if j is not None else None,
        "message": j.getMessage() if j is not None else str(e)}))
else:
    print("RESULT " + json.dumps({"error": None, "version": spark.version,
                                  "rows": spark.sql("SHOW BLOOM INDEXES").count()}))
    spark.stop()
"""


def _session_with_version(tmp_path, version: str) -> dict:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, "-c", JOB, version], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"exit {out.returncode}\n{out.stdout}\n{out.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def test_a_session_on_an_unsupported_spark_fails_at_start_naming_the_range(tmp_path):
    r = _session_with_version(tmp_path, "4.0.1")
    assert r["java"] == "bloomindex.errors.BloomIndexAnalysisException", r  # an AnalysisException
    assert r["condition"] == "BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION" and r["sqlState"] == "0A000", r
    assert "bloomindex runs on Spark 4.1.x to 4.3.x; this session's Spark is 4.0.1." in r["message"], r

    assert r["message"].startswith("[BLOOM_INDEX_UNSUPPORTED_SPARK_VERSION] "), r
