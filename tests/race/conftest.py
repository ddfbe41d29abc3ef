"""Two writer processes appending to one Parquet folder whose index follows writes (`make
test-race`, nightly): collected only when tests/race (or a file of it) is named on the command
line (tests/conftest.py). Two extra driver JVMs make it too slow for `make test`'s budget on 2 cores.

The pytest process has one small SparkSession of its own (no Delta, Avro or test classes: it
only creates the index and queries), overriding tests/conftest.py's `spark` fixture for this
folder; tests/conftest.py's `root` fixture (a fresh `spark.bloomindex.root`) uses it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import bloomindex
    from pyspark.sql import SparkSession

    try:
        bloomindex.jar_paths()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    builder = (SparkSession.builder.master("local[1]")
               .appName("bloomindex-race-reader")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.default.parallelism", "1")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("race-warehouse")))
               .config("spark.driver.memory", "1g")
               # The queries here must not refresh the index (an index found behind queues a
               # background refresh): whatever the index covers in the end, the writers'
               # automatic refreshes did it.
               .config("spark.bloomindex.refresh.staleShare", "1.0"))
    session = bloomindex.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
