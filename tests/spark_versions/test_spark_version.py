"""`make test-spark-versions`, in each Spark version's venv (.venvs/spark-X.Y; the build's Spark
in .venv): the jar built once against the build's Spark links against this Spark's jars, and a
Scala job using it runs under this Spark's spark-submit."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from importlib import metadata

import pytest

import bloomindex
from linkcheck import unresolved

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTS_JAR = ROOT / "target" / "bloomindex-tests.jar"
# The Scala job (in the tests jar). Issue 18's Scala API job, bloomindex.testing.ApiSubmitJob,
# prints the same RESULT keys but for the V2 and shim ones.
SUBMIT_JOB_CLASS = "bloomindex.testing.VersionSmokeJob"
VECTOR = "--add-modules jdk.incubator.vector"


def _spark_jars() -> pathlib.Path:
    import pyspark

    return pathlib.Path(pyspark.__file__).parent / "jars"


def _bloomindex_jar() -> pathlib.Path:
    jars = [pathlib.Path(j) for j in bloomindex.jar_paths()]
    return next(j for j in jars if j.name == "bloomindex.jar")


def test_the_running_pyspark_is_in_the_supported_range():
    from packaging.requirements import Requirement

    # The `spark` extra's PySpark (the full distribution).
    req = next(q for q in map(Requirement, metadata.requires("bloomindex"))
               if q.name == "pyspark" and q.marker is not None and q.marker.evaluate({"extra": "spark"}))
    assert req.specifier.contains(metadata.version("pyspark")), (req, metadata.version("pyspark"))


def test_every_reference_of_the_jar_into_spark_resolves_here():
    """No NoSuchMethodError / NoClassDefFoundError waiting in a code path the smoke tests miss:
    every class, method (with its exact descriptor) and field of Spark, Scala, Parquet, Hadoop
    and Jackson that bloomindex.jar refers to exists in this Spark's jars."""
    missing = unresolved(_bloomindex_jar(), _spark_jars())
    assert missing == [], "\n".join(missing)


def test_spark_submit_of_a_scala_job(tmp_path):
    if not TESTS_JAR.is_file():
        pytest.fail(f"{TESTS_JAR} is missing: run `make test-spark-versions` (it stages the JVM test classes)")
    submit = pathlib.Path(sys.executable).parent / "spark-submit"
    jars = ",".join(str(j) for j in bloomindex.jar_paths())
    # This venv's Spark: its spark-submit, class path and version.
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(_spark_jars().parent),
               PYSPARK_PYTHON=sys.executable)
    out = subprocess.run(
        [str(submit), "--master", "local[2]", "--jars", jars,
         "--conf", "spark.sql.extensions=bloomindex.BloomIndexExtensions",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--driver-java-options", VECTOR,
         "--class", SUBMIT_JOB_CLASS, str(TESTS_JAR), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"exit {out.returncode}\n{out.stdout}\n{out.stderr[-6000:]}"
    r = dict(kv.split("=", 1) for kv in lines[-1][len("RESULT "):].split(";"))
    assert r["spark"] == metadata.version("pyspark"), r
    assert r["rows_on"] == r["rows_off"] == "4242", r
    assert r["files_total"] == "8" and 1 <= int(r["files_read"]) < 8, r
    # The V2 file source, pruned by the planner strategy (its scan rebuilt by SparkShim.withScan).
    assert r["rows_v2"] == r["rows_off_v2"] == "4242", r
    assert 1 <= int(r["files_read_v2"]) < 8, r
    assert r["shim_rebuilt_scan_ok"] == "true", r
    assert r["indexes"] == "events_id" and r["files_indexed"] == "8", r
    assert str(_bloomindex_jar()) in r["bloomindex_jar"], r


def _other_venvs() -> list[pathlib.Path]:
    """The Python of each other Spark version's venv (.venvs/spark-X.Y, made by `make
    test-spark-versions`) and of the build's (.venv), this one left out."""
    found = sorted(ROOT.glob(".venvs/spark-*/bin/python")) + [ROOT / ".venv" / "bin" / "python"]
    return [p for p in found if p.is_file() and p.parent.parent.resolve() != pathlib.Path(sys.prefix).resolve()]


def _job(python: pathlib.Path, mode: str, root: pathlib.Path) -> list[str]:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("SPARK_HOME", None)
    out = subprocess.run([str(python), str(pathlib.Path(__file__).parent / "collation_job.py"), mode, str(root)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{python} {mode}: exit {out.returncode}\n{out.stdout}\n{out.stderr[-6000:]}"
    return out.stdout.splitlines()


def test_collation_keys_built_on_another_spark_answer_as_without_the_index(tmp_path):
    """Collated strings are indexed by collation key, from the ICU data their Spark bundles (4.1:
    ICU 77.1; 4.2, 4.3: ICU 78.3, where '#', '@' and '%' key otherwise): an index built on each
    other version's Spark, queried on this one, answers every lookup as without the index, and
    prunes where both Sparks' ICU is the same."""
    import json

    others = _other_venvs()
    assert others, "no other Spark version's venv: run `make test-spark-versions`, which makes .venvs/spark-X.Y"
    icu_here = None
    differs = 0
    for python in others:
        root = tmp_path / python.parent.parent.name
        icu_built = next(line.split()[1] for line in _job(python, "build", root) if line.startswith("ICU "))
        lines = _job(pathlib.Path(sys.executable), "query", root)
        icu_here = next(line.split()[1] for line in lines if line.startswith("ICU "))
        results = [json.loads(line[len("RESULT "):]) for line in lines if line.startswith("RESULT ")]
        assert len(results) == 5, lines
        for r in results:
            assert r["on"] == r["off"], (python, icu_built, icu_here, r)
            if icu_built != icu_here:
                assert "not applied: coll_ix:" in r["report"] and "collation keys computed with" in r["report"], r
            else:
                assert "kept" in r["report"] and "not applied" not in r["report"], r
        assert any(r["off"] for r in results), results
        differs += icu_built != icu_here
    # The check is only as good as the versions it met: 4.1's ICU differs from 4.2's and 4.3's.
    assert differs >= 1, (icu_here, others)
