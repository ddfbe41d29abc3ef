"""Apache Iceberg tests: a pytest process of their own (`make test-iceberg`), on the PySpark of
the Iceberg venv (Iceberg publishes Spark runtimes up to Spark 4.1), with one SparkSession that
has Iceberg's runtime (spark.jars.packages, resolved at session start) and a Hadoop catalog
`local` over a temporary warehouse folder."""

from __future__ import annotations

import pathlib

import pytest

@pytest.fixture(scope="session")
def warehouse(tmp_path_factory) -> pathlib.Path:
    return tmp_path_factory.mktemp("iceberg-warehouse")


@pytest.fixture(scope="session")
def spark(warehouse, tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    builder = (SparkSession.builder.master("local[2]")
               .appName("bloomindex-iceberg-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
               .config("spark.driver.memory", "2g")
               .config("spark.bloomindex.refresh.default", "manual")
               # The rate the tests were written for; tests/test_fpp_auto.py names `auto`.
               .config("spark.bloomindex.fpp.default", "0.01"))
    session = bloomindex.configure(builder, iceberg=True, iceberg_catalogs={
        "local": {"type": "hadoop", "warehouse": str(warehouse)},
        # Iceberg's in-memory catalog: the one here with views (test_refuses_view).
        "mem": {"catalog-impl": "org.apache.iceberg.inmemory.InMemoryCatalog",
                "warehouse": str(tmp_path_factory.mktemp("iceberg-mem"))}}).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture()
def root(spark, tmp_path):
    """A fresh `spark.bloomindex.root` for one test."""
    path = str(tmp_path / "indexes")
    spark.conf.set("spark.bloomindex.root", path)
    yield path
    spark.conf.unset("spark.bloomindex.root")


_counter = [0]


@pytest.fixture()
def table(spark):
    """A fresh Iceberg table name in the `local` catalog, dropped after the test."""
    _counter[0] += 1
    name = f"local.db.t{_counter[0]}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS local.db")
    yield name
    spark.sql(f"DROP TABLE IF EXISTS {name}")
