"""One SparkSession per test process (per pytest-xdist worker in `make test`), configured by
bloomindex.configure()."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import sys
from collections import defaultdict

import pytest

from jvm_options import java_options

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Interop files of apache/parquet-testing, kept in the repository (with their license).
PARQUET_TESTING = ROOT / "tests" / "testdata" / "parquet-testing"
CLUSTER_TESTS = ROOT / "tests" / "cluster"
# The same API tests on a Spark Connect session: a process of their own (PySpark runs a local
# Connect server on a classic SparkContext of the process, so the two kinds cannot share one).
CONNECT_TESTS = ROOT / "tests" / "connect"
# A Connect server process and a client environment (`make test-connect-server`).
CONNECT_SERVER_TESTS = ROOT / "tests" / "connect_server"
# Indexes on s3a:// against a moto S3 server (`make test-s3`).
S3_TESTS = ROOT / "tests" / "s3"
# Indexes on gs:// against a fake-gcs-server (`make test-gcs`).
GCS_TESTS = ROOT / "tests" / "gcs"
# The other Spark versions' checks: run by `make test-spark-versions` in each version's venv.
SPARK_VERSION_TESTS = ROOT / "tests" / "spark_versions"
# Apache Iceberg, on the PySpark of .venvs/iceberg (`make test-iceberg`).
ICEBERG_TESTS = ROOT / "tests" / "iceberg"
# Two writer processes at once (`make test-race`, nightly: two extra JVMs).
RACE_TESTS = ROOT / "tests" / "race"
# The JVM test classes (the encryption tests' in-memory KMS): `make test` stages them here.
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"


def delta_support() -> tuple[bool, str]:
    """Whether Delta Lake runs on the installed PySpark, and why not: the ``delta-spark`` package
    must be installed and declare the installed PySpark within its supported range (its own
    package metadata, e.g. ``pyspark<=4.2.0,>=4.0.1``), as pip checks when installing both."""
    from importlib import metadata

    from packaging.requirements import Requirement

    pyspark = metadata.version("pyspark")
    try:
        delta = metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        return False, f"delta-spark is not installed (PySpark {pyspark})"
    for r in map(Requirement, metadata.requires("delta-spark") or []):
        if r.name == "pyspark" and not r.specifier.contains(pyspark, prereleases=True):
            return False, f"delta-spark {delta} supports PySpark {r.specifier}, not {pyspark}"
    return True, f"delta-spark {delta} on PySpark {pyspark}"


DELTA_SUPPORTED, DELTA_SUPPORT = delta_support()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "delta: needs Delta Lake; skipped, with the reason, where the installed delta-spark does not "
        "support the installed PySpark (make test-spark-versions runs Spark versions Delta does not)")
    config.addinivalue_line(
        "markers",
        "nightly: listed in tests/nightly.txt; left out of `make test` (-m 'not nightly'), run by "
        "`make test-nightly`")


# The tests CI leaves to the nightly run (tests/nightly.txt): `module::name` or `module::name[param]`.
NIGHTLY_LIST = ROOT / "tests" / "nightly.txt"


def nightly_entries() -> list[tuple[str, str]]:
    entries = []
    for line in NIGHTLY_LIST.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            module, sep, name = line.partition("::")
            if not sep or not name:
                raise pytest.UsageError(f"{NIGHTLY_LIST}: not `module::name`: {line!r}")
            entries.append((module, name))
    return entries


def _mark_nightly(config, items):
    """Marks the items tests/nightly.txt names `nightly`, by the module that defines the test
    function (so tests/connect's imports of a module's tests are marked as the module's are) or
    by the module it was collected from (a tests/connect module: marked on Connect only).
    An entry naming no test of its module (a test renamed, a parameter gone) is refused: it would
    otherwise go on running in CI unnoticed and the list would rot."""
    entries = nightly_entries()
    wanted = set(entries)
    matched = set()
    collected = defaultdict(set)  # module -> test functions collected (names without parameters)
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        base = getattr(item, "originalname", item.name)
        # The defining module, and the collected one (tests/connect's own, to mark there only).
        for module in {fn.__module__, item.module.__name__}:
            collected[module].add(base)
            for key in ((module, item.name), (module, base)):
                if key in wanted:
                    item.add_marker(pytest.mark.nightly)
                    matched.add(key)
    if any("::" in arg for arg in config.args):
        return  # single tests named on the command line: their modules were not collected whole
    def exists(module: str, name: str) -> bool:
        if not any((d / f"{module}.py").is_file() for d in (ROOT / "tests", CONNECT_TESTS)):
            return False
        base = name.split("[")[0]
        if base in collected[module]:  # collected: then each parameter of it was
            return (module, name) in matched
        # Not collected here (tests/connect imports some of a module's tests): defined at least.
        return module not in sys.modules or callable(getattr(sys.modules[module], base, None))
    stale = [f"{m}::{n}" for m, n in entries if not exists(m, n)]
    if stale:
        raise pytest.UsageError(f"{NIGHTLY_LIST} names tests that do not exist: {', '.join(stale)}")


@pytest.hookimpl(tryfirst=True)  # before `-k` and `-m` deselect: the list is checked against every test
def pytest_collection_modifyitems(config, items):
    _mark_nightly(config, items)
    if DELTA_SUPPORTED:
        return
    skip = pytest.mark.skip(reason=f"Delta Lake unavailable here: {DELTA_SUPPORT}")
    for item in items:
        if item.get_closest_marker("delta"):
            item.add_marker(skip)


def pytest_ignore_collect(collection_path, config):
    """tests/cluster, tests/connect, tests/s3 and tests/gcs need their own process (one SparkContext per
    process, see their conftest), tests/connect_server a client environment, and
    tests/spark_versions belongs to `make test-spark-versions`, tests/iceberg to another PySpark,
    tests/race to the nightly run: collected only when named on the command line (`make
    test-cluster`, `make test-connect`, `make test-connect-server`, `make test-s3`, `make test-gcs`,
    `make test-spark-versions`, `make test-iceberg`, `make test-race`)."""
    own = pathlib.Path(collection_path).resolve()
    if own not in (CLUSTER_TESTS, CONNECT_TESTS, CONNECT_SERVER_TESTS, S3_TESTS, GCS_TESTS, SPARK_VERSION_TESTS,
                   ICEBERG_TESTS, RACE_TESTS):
        return None
    base = pathlib.Path(config.invocation_params.dir)
    for arg in config.args:
        p = (base / arg.split("::")[0]).resolve()
        if p == own or own in p.parents:
            return None
    return True


@pytest.fixture(scope="session")
def parquet_testing() -> pathlib.Path:
    if not PARQUET_TESTING.is_dir():
        pytest.fail(f"interop files missing: expected {PARQUET_TESTING}")
    return PARQUET_TESTING


@contextlib.contextmanager
def _start_lock(tmp_path_factory):
    """An exclusive lock shared by the pytest-xdist workers of one run (their base temp folder's
    parent is common to them), held while a worker starts its SparkSession."""
    lock = tmp_path_factory.getbasetemp().parent / "spark-start.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import bloomindex
    import pyspark
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    if not TEST_JAR.is_file():
        pytest.fail(f"{TEST_JAR} is missing: run `make test-python` (it stages the JVM test classes)")
    warehouse = tmp_path_factory.mktemp("warehouse")
    builder = (SparkSession.builder.master("local[2]")
               .appName("bloomindex-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse))
               # local[2]: the driver's class path is the executors' too.
               .config("spark.driver.extraClassPath", str(TEST_JAR))
               .config("spark.driver.memory", "2g")
               # The serial collector and C2's thresholds raised (tests/jvm_options.py);
               # BLOOMINDEX_TEST_JAVA_OPTIONS replaces them.
               .config("spark.driver.extraJavaOptions", java_options())
               # Delta reads its log with 50 partitions by default: a tiny table's log needs 2.
               .config("spark.databricks.delta.snapshotPartitions", "2")
               # Indexes follow writes only where a test asks (OPTIONS (refresh = ...)): the other
               # tests append and then check what REFRESH does.
               .config("spark.bloomindex.refresh.default", "manual")
               # The rate the tests were written for (the default is `auto`, chosen per build:
               # tests/test_fpp_auto.py names it).
               .config("spark.bloomindex.fpp.default", "0.01"))
    # `make test-kryo`: the session under Kryo, with a test registrator that writes each class Kryo
    # sends unregistered to this file (tests/conftest.py fails the run on one of bloomindex's).
    kryo_log = os.environ.get("BLOOMINDEX_KRYO_LOG")
    if kryo_log:
        builder = (builder.config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
                   .config("spark.kryo.registrator", "bloomindex.testing.KryoUnregistered"))
    # Spark's Avro source (not in PySpark's jars), for the Avro cases of test_schema_mapping;
    # configure() appends Delta's package to this. `make test-spark-versions` runs a subset that
    # reads no Avro and sets BLOOMINDEX_TEST_PACKAGES empty: a release's spark-avro may not be on
    # Maven Central yet when its PySpark is on the package index.
    packages = os.environ.get("BLOOMINDEX_TEST_PACKAGES", f"org.apache.spark:spark-avro_2.13:{pyspark.__version__}")
    if packages:
        builder = builder.config("spark.jars.packages", packages)
    # Delta Lake's extension and catalog in the one session of the run (tests marked `delta`),
    # where delta-spark supports this PySpark.
    # `make test` runs two pytest-xdist workers, each with its session: they start one after
    # the other, so Spark's resolution of the packages above never runs twice at once on one
    # Ivy cache.
    with _start_lock(tmp_path_factory):
        session = bloomindex.configure(builder, delta=DELTA_SUPPORTED).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    if kryo_log and os.path.exists(kryo_log):
        with open(kryo_log, encoding="utf-8") as f:
            ours = sorted({line.split(" Note:")[0] for line in f if "registered: bloomindex." in line})
        assert not ours, f"sent through Kryo without BloomIndexKryoRegistrator registering them: {ours}"


@pytest.fixture(scope="session")
def jvm_api(spark):
    from bloomindex.session import jvm_api

    return jvm_api(spark)


@pytest.fixture(scope="session")
def vector_bits(spark) -> int:
    """The session JVM's own word on its CPU's vectors. The lookup fails where configure() did
    not put the Vector API module in the JVM's boot layer, and with it every test using this."""
    return int(spark._jvm.jdk.incubator.vector.IntVector.SPECIES_PREFERRED.vectorBitSize())


@pytest.fixture()
def root(spark, tmp_path):
    """A fresh `spark.bloomindex.root` for one test, so indexes never leak between tests; the root
    set before it (a module fixture's) is set again after it."""
    before = spark.conf.get("spark.bloomindex.root", None)
    path = str(tmp_path / "indexes")
    spark.conf.set("spark.bloomindex.root", path)
    yield path
    if before is None:
        spark.conf.unset("spark.bloomindex.root")
    else:
        spark.conf.set("spark.bloomindex.root", before)
