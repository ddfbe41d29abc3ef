"""Issue 18: what `make dist` writes, used as a user would use it (the Maven artifacts through
`--packages`: tests/cluster/test_packages.py).

- The wheel holds the jars it was built with; a wheel build without the jar fails.
- The wheel, installed alone (with its `spark` extra: PySpark from the package index) into a new virtual
  environment outside the checkout, runs the README's quickstart: the answer and the files read.
- The pom under dist/maven declares zero-allocation-hashing, Spark and Scala as provided, and what a Maven
  Central release requires (name, description, url, licenses, scm, developers; sources and javadoc jars).
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

from packaging.specifiers import SpecifierSet

from dist_helpers import (POM_NS, ROOT, STAGED_JAR, TIMEOUT, coordinates, dist_version, pom_path, pyspark_version,
                          quickstart, run, wheel_path)


def test_the_wheel_holds_the_jars_it_was_built_with():
    with zipfile.ZipFile(wheel_path()) as z:
        names = set(z.namelist())
        assert "bloomindex/jars/bloomindex.jar" in names
        assert any(re.fullmatch(r"bloomindex/jars/zero-allocation-hashing-[^/]+\.jar", n) for n in names), names
        assert "bloomindex/_version.py" in names and "bloomindex/py.typed" in names
        assert z.read("bloomindex/jars/bloomindex.jar") == STAGED_JAR.read_bytes()
        meta = z.read(f"bloomindex-{dist_version()}.dist-info/METADATA").decode()
    assert re.search(rf"^Version: {re.escape(dist_version())}$", meta, re.M)
    spark = re.search(r'^Requires-Dist: pyspark([^;]*); extra == "spark"$', meta, re.M)
    assert spark and SpecifierSet(spark.group(1)).contains(pyspark_version()), meta


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
    # --no-compile: byte-compiling all of PySpark would take longer than the rest of the test.
    # As the README says: the wheel with its `spark` extra; PySpark pinned to the main venv's (the
    # Spark the jar was just built and tested against), whatever range the extra allows.
    run([py, "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check", f"{wheel_path()}[spark]",
         f"pyspark=={pyspark_version()}"])
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON")}
    where = run([py, "-c", "import bloomindex, pyspark; print(bloomindex.__file__, bloomindex.__version__, "
                           "pyspark.__version__)"], cwd=work, env=env).stdout.split()
    assert pathlib.Path(where[0]).is_relative_to(env_dir) and where[1] == dist_version()
    assert where[2] == pyspark_version()

    script = work / "quickstart.py"
    script.write_text(quickstart())
    out = run([py, script], cwd=work, env=env).stdout
    print(out)
    # The quickstart's table: ids 0..999,999 in 20 files, amount = id % 97; the query asks for 4242.
    assert f"Row(user_id=4242, amount={4242 % 97})" in out, out
    read = int(re.search(r"files read: (\d+)", out).group(1))
    assert 1 <= read < 20, out
    assert re.search(rf"index orders_idx \(log version 1\) kept {read}/20 files", out), out
    # Run again in the same folder: the table is dropped with its index and both made again.
    again = run([py, script], cwd=work, env=env).stdout
    assert f"Row(user_id=4242, amount={4242 % 97})" in again, again
    assert re.search(rf"index orders_idx \(log version \d+\) kept {read}/20 files", again), again


def test_the_pom_declares_what_spark_lacks_and_spark_as_provided():
    group, artifact, version = coordinates()
    assert artifact == "bloomindex_2.13" and version == dist_version() and "." in group
    pom = ET.parse(pom_path()).getroot()
    # What a Maven Central release requires of a pom: name, description, url, licenses, scm, developers.
    for key in ("name", "description", "url", "licenses/m:license/m:name", "licenses/m:license/m:url",
                "scm/m:url", "scm/m:connection", "developers/m:developer/m:name"):
        element = pom.find(f"m:{key}", POM_NS)
        assert element is not None and element.text and element.text.strip(), f"the pom has no {key}"
    deps = {d.find("m:artifactId", POM_NS).text: (d.find("m:version", POM_NS).text,
                                                  getattr(d.find("m:scope", POM_NS), "text", "compile"))
            for d in pom.iterfind("m:dependencies/m:dependency", POM_NS)}
    assert deps["spark-sql_2.13"] == (pyspark_version(), "provided")
    assert deps["scala-library"][1] == "provided"
    assert deps["zero-allocation-hashing"][1] == "compile"
    assert deps["scalatest_2.13"][1] == "test"
    assert all(scope in ("compile", "provided", "test") for _, scope in deps.values()), deps
    folder = pom_path().parent
    assert (folder / f"{artifact}-{version}.jar").read_bytes() == STAGED_JAR.read_bytes()
    with zipfile.ZipFile(folder / f"{artifact}-{version}-sources.jar") as z:
        assert "bloomindex/api/BloomIndex.scala" in z.namelist()
    with zipfile.ZipFile(folder / f"{artifact}-{version}-javadoc.jar") as z:
        assert "bloomindex/api/BloomIndex.html" in z.namelist()
