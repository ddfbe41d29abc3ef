"""Issue 18: what `make dist` writes, used as a user would use it.

- The wheel, installed alone (with PySpark from the package index) into a new virtual
  environment outside the checkout, runs the README's quickstart: the answer and the files read.
- The Maven artifacts under dist/maven: the pom's dependencies, and `spark-submit --packages
  --repositories file://.../dist/maven` of a small Scala job using the Scala API
  (bloomindex.testing.ApiSubmitJob, in the tests jar), and a PySpark session configured with
  `spark.jars.packages` running the SQL statements.

The version, group and artifact are read from the sources and the published pom, never written
here. Spark resolves the artifact with an Ivy folder of our own (target/dist-ivy) from which the
previous run's bloomindex is removed first, so every run uses the artifact just built.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
MAVEN = DIST / "maven"
STAGED_JAR = ROOT / "python" / "bloomindex" / "jars" / "bloomindex.jar"
TESTS_JAR = ROOT / "target" / "bloomindex-tests.jar"
IVY = ROOT / "target" / "dist-ivy"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
VECTOR = "--add-modules jdk.incubator.vector"
TIMEOUT = 600


def _version() -> str:
    text = (ROOT / "python" / "bloomindex" / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def _pyspark_version() -> str:
    from importlib import metadata

    return metadata.version("pyspark")


def _wheel() -> pathlib.Path:
    wheel = DIST / f"bloomindex-{_version()}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.fail(f"{wheel} is missing: run `make dist` (make test builds it)")
    return wheel


def _pom() -> pathlib.Path:
    poms = sorted(MAVEN.rglob("*.pom"))
    if len(poms) != 1:
        pytest.fail(f"expected one pom under {MAVEN}, found {poms}: run `make dist`")
    return poms[0]


def _coordinates() -> tuple[str, str, str]:
    pom = ET.parse(_pom()).getroot()
    return tuple(pom.find(f"m:{k}", POM_NS).text for k in ("groupId", "artifactId", "version"))


def _run(args, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT, **kw)
    assert p.returncode == 0, f"{args[0]} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    return p


def _quickstart() -> str:
    """The Python block of the README's quickstart (after the `<!-- quickstart ... -->` marker)."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- quickstart\b.*?-->.*?```python\n(.*?)```", readme, re.S)
    assert m, "README.md has no quickstart block"
    return m.group(1)


def test_the_wheel_holds_the_jars_it_was_built_with():
    with zipfile.ZipFile(_wheel()) as z:
        names = set(z.namelist())
        assert "bloomindex/jars/bloomindex.jar" in names
        assert any(re.fullmatch(r"bloomindex/jars/zero-allocation-hashing-[^/]+\.jar", n) for n in names), names
        assert "bloomindex/_version.py" in names and "bloomindex/py.typed" in names
        assert z.read("bloomindex/jars/bloomindex.jar") == STAGED_JAR.read_bytes()
        meta = z.read(f"bloomindex-{_version()}.dist-info/METADATA").decode()
    assert re.search(rf"^Version: {re.escape(_version())}$", meta, re.M)
    assert re.search(r"^Requires-Dist: pyspark", meta, re.M)


def test_a_wheel_build_without_the_jar_fails(tmp_path):
    """python/setup.py refuses to build a wheel whose jars folder lacks bloomindex.jar."""
    src = tmp_path / "python"
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    (src / "bloomindex" / "jars" / "bloomindex.jar").unlink()
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                        "-w", str(tmp_path / "out"), str(src)], capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode != 0
    assert "bloomindex.jar missing" in p.stdout + p.stderr, p.stdout + p.stderr
    assert not list(tmp_path.rglob("*.whl"))


def test_the_readme_quickstart_from_the_wheel_alone(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    _run([py, "-m", "pip", "install", "-q", _wheel(), f"pyspark=={_pyspark_version()}"])
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON")}
    where = _run([py, "-c", "import bloomindex; print(bloomindex.__file__); print(bloomindex.__version__)"],
                 cwd=work, env=env).stdout.split()
    assert pathlib.Path(where[0]).is_relative_to(env_dir) and where[1] == _version()

    script = work / "quickstart.py"
    script.write_text(_quickstart())
    out = _run([py, script], cwd=work, env=env).stdout
    print(out)
    # The quickstart's table: ids 0..999,999 in 100 files, amount = id % 97; the query asks for 4242.
    assert f"Row(user_id=4242, amount={4242 % 97})" in out, out
    read = int(re.search(r"(\d+) files read", out).group(1))
    assert 1 <= read < 100, out
    assert re.search(rf"index orders_idx \(log version 1\) kept {read}/100 files", out), out


def _fresh_ivy() -> pathlib.Path:
    """target/dist-ivy without any bloomindex resolved by an earlier run (its other jars stay cached)."""
    group = _coordinates()[0]
    for sub in ("cache", "jars"):
        for p in (IVY / sub).glob(f"{group}*"):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    return IVY


def _package_confs() -> list[str]:
    group, artifact, version = _coordinates()
    return ["--packages", f"{group}:{artifact}:{version}", "--repositories", MAVEN.as_uri(),
            "--conf", f"spark.jars.ivy={_fresh_ivy()}"]


def test_the_pom_declares_what_spark_lacks_and_spark_as_provided():
    group, artifact, version = _coordinates()
    assert artifact == "bloomindex_2.13" and version == _version() and "." in group
    pom = ET.parse(_pom()).getroot()
    deps = {d.find("m:artifactId", POM_NS).text: (d.find("m:version", POM_NS).text,
                                                  getattr(d.find("m:scope", POM_NS), "text", "compile"))
            for d in pom.iterfind("m:dependencies/m:dependency", POM_NS)}
    assert deps["spark-sql_2.13"] == (_pyspark_version(), "provided")
    assert deps["scala-library"][1] == "provided"
    assert deps["zero-allocation-hashing"][1] == "compile"
    assert all(scope in ("compile", "provided") for _, scope in deps.values()), deps
    folder = _pom().parent
    assert (folder / f"{artifact}-{version}.jar").read_bytes() == STAGED_JAR.read_bytes()
    with zipfile.ZipFile(folder / f"{artifact}-{version}-sources.jar") as z:
        assert "bloomindex/api/BloomIndex.scala" in z.namelist()


def _spark_env() -> dict:
    import pyspark

    return dict(os.environ, SPARK_HOME=os.path.dirname(os.path.abspath(pyspark.__file__)),
                PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)


def test_spark_submit_of_a_scala_job_with_packages(tmp_path):
    if not TESTS_JAR.is_file():
        pytest.fail(f"{TESTS_JAR} is missing: run `make test-python` (it stages the JVM test classes)")
    submit = pathlib.Path(sys.executable).parent / "spark-submit"
    out = _run([submit, "--master", "local[2]", *_package_confs(),
                "--conf", "spark.sql.extensions=bloomindex.BloomIndexExtensions",
                "--driver-java-options", VECTOR, "--conf", "spark.ui.enabled=false",
                "--class", "bloomindex.testing.ApiSubmitJob", TESTS_JAR, tmp_path], env=_spark_env()).stdout
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert lines, out
    r = dict(kv.split("=", 1) for kv in lines[-1][len("RESULT "):].split(";"))
    assert r["rows_on"] == r["rows_off"] == "4242"
    assert r["files_total"] == "8" and 1 <= int(r["files_read"]) < 8, r
    assert r["indexes"] == "events_id" and r["files_indexed"] == "8"
    group, artifact, version = _coordinates()
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


def test_pyspark_session_with_packages(tmp_path):
    """The same artifact through `spark.jars.packages` in a PySpark builder, SQL only (no wheel)."""
    job = tmp_path / "job.py"
    job.write_text(PYSPARK_JOB)
    confs = _package_confs()
    out = _run([sys.executable, job, confs[1], confs[3], str(_fresh_ivy()), tmp_path], env=_spark_env(),
               cwd=tmp_path).stdout
    m = re.search(r"^RESULT \[(.*)\] (\d+)$", out, re.M)
    assert m, out
    assert m.group(1) == "777" and 1 <= int(m.group(2)) < 8, out
