"""Issue 18: the Maven artifacts `make dist` writes under dist/maven, resolved by Spark with
`--packages` / `spark.jars.packages` and `--repositories file://.../dist/maven`:
`spark-submit` of a small Scala job using the Scala API (bloomindex.testing.ApiSubmitJob, in
the tests jar), and a PySpark session (`slow`: `make test-cluster`). Here because, like
test_spark_submit.py, these start Spark processes of their own.

Spark resolves the artifact with an Ivy folder of our own (target/dist-ivy) from which the
previous run's bloomindex is removed first, so every run uses the artifact just built.
"""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

from dist_helpers import IVY, TESTS_JAR, VECTOR, coordinates, fresh_ivy, package_confs, run, spark_env


@pytest.mark.slow
def test_spark_submit_of_a_scala_job_with_packages(tmp_path):
    if not TESTS_JAR.is_file():
        pytest.fail(f"{TESTS_JAR} is missing: run `make test-python` (it stages the JVM test classes)")
    submit = pathlib.Path(sys.executable).parent / "spark-submit"
    out = run([submit, "--master", "local[2]", *package_confs(),
                "--conf", "spark.sql.extensions=bloomindex.BloomIndexExtensions",
                "--driver-java-options", VECTOR, "--conf", "spark.ui.enabled=false",
                "--class", "bloomindex.testing.ApiSubmitJob", TESTS_JAR, tmp_path], env=spark_env()).stdout
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert lines, out
    r = dict(kv.split("=", 1) for kv in lines[-1][len("RESULT "):].split(";"))
    assert r["rows_on"] == r["rows_off"] == "4242"
    assert r["files_total"] == "8" and 1 <= int(r["files_read"]) < 8, r
    assert r["indexes"] == "events_id" and r["files_indexed"] == "8"
    group, artifact, version = coordinates()
    # bloomindex's classes came from the artifact Spark resolved into our Ivy folder.
    assert f"{IVY}/jars/{group}_{artifact}-{version}.jar" in r["bloomindex_jar"], r["bloomindex_jar"]
    assert list((IVY / "jars").glob("net.openhft_zero-allocation-hashing-*.jar"))


PYSPARK_JOB = """
import sys
from pyspark.sql import SparkSession
packages, repositories, ivy, work = sys.argv[1:]
spark = (SparkSession.builder.master("local[2]")
         .config("spark.jars.packages", packages).config("spark.jars.repositories", repositories)
         .config("spark.jars.ivy", ivy).config("spark.ui.enabled", "false")
         .config("spark.sql.extensions", "bloomindex.BloomIndexExtensions")
         .config("spark.bloomindex.root", work + "/indexes").getOrCreate())
spark.range(0, 8000, 1, 8).selectExpr("id", "concat('s', id) AS s").write.parquet(work + "/events")
spark.sql(f"CREATE BLOOM INDEX ev ON parquet.`{work}/events` FOR COLUMNS (s)")
df = spark.sql(f"SELECT id FROM parquet.`{work}/events` WHERE s = 's777'")
print("RESULT", [r.id for r in df.collect()], len(df.inputFiles()))
"""


@pytest.mark.slow
def test_pyspark_session_with_packages(tmp_path):
    """The same artifact through `spark.jars.packages` in a PySpark builder, SQL only (no wheel)."""
    job = tmp_path / "job.py"
    job.write_text(PYSPARK_JOB)
    confs = package_confs()
    out = run([sys.executable, job, confs[1], confs[3], str(fresh_ivy()), tmp_path], env=spark_env(),
               cwd=tmp_path).stdout
    m = re.search(r"^RESULT \[(.*)\] (\d+)$", out, re.M)
    assert m, out
    assert m.group(1) == "777" and 1 <= int(m.group(2)) < 8, out
