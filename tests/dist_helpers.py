"""What `make dist` writes, and how the tests find it (tests/test_dist.py,
tests/cluster/test_packages.py). The version, group and artifact are read from the sources and
the published pom, never written here."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

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


def dist_version() -> str:
    text = (ROOT / "python" / "bloomindex" / "_version.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def pyspark_version() -> str:
    from importlib import metadata

    return metadata.version("pyspark")


def wheel_path() -> pathlib.Path:
    wheel = DIST / f"bloomindex-{dist_version()}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.fail(f"{wheel} is missing: run `make dist` (make test builds it)")
    return wheel


def pom_path() -> pathlib.Path:
    poms = sorted(MAVEN.rglob("*.pom"))
    if len(poms) != 1:
        pytest.fail(f"expected one pom under {MAVEN}, found {poms}: run `make dist`")
    return poms[0]


def coordinates() -> tuple[str, str, str]:
    pom = ET.parse(pom_path()).getroot()
    return tuple(pom.find(f"m:{k}", POM_NS).text for k in ("groupId", "artifactId", "version"))


def run(args, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT, **kw)
    assert p.returncode == 0, f"{args[0]} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    return p


def quickstart() -> str:
    """The Python block of the README's quickstart (after the `<!-- quickstart ... -->` marker)."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- quickstart\b.*?-->.*?```python\n(.*?)```", readme, re.S)
    assert m, "README.md has no quickstart block"
    return m.group(1)


def fresh_ivy() -> pathlib.Path:
    """target/dist-ivy without any bloomindex resolved by an earlier run (its other jars stay cached)."""
    group = coordinates()[0]
    for sub in ("cache", "jars"):
        for p in (IVY / sub).glob(f"{group}*"):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    return IVY


def package_confs() -> list[str]:
    group, artifact, version = coordinates()
    return ["--packages", f"{group}:{artifact}:{version}", "--repositories", MAVEN.as_uri(),
            "--conf", f"spark.jars.ivy={fresh_ivy()}"]


def spark_env() -> dict:
    import pyspark

    return dict(os.environ, SPARK_HOME=os.path.dirname(os.path.abspath(pyspark.__file__)),
                PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
