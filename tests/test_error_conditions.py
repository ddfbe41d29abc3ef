"""Issue 14: every error of bloomindex has an error condition and a SQLSTATE of its own
(jvm/src/main/resources/error/bloomindex-error-conditions.json). Callers match conditions,
never message text; a lost commit race is `bloomindex.ConcurrentBloomIndexUpdateError`."""

from __future__ import annotations

import threading
import time

import pytest
from pyspark.errors import AnalysisException

import bloomindex
from bloomindex import BloomIndex
from bloomindex.session import is_connect
from index_helpers import log_entries

DELAY = "spark.internal.bloomindex.test.buildTaskDelayMs"


def _source(spark, tmp_path, name="src", files=4):
    path = str(tmp_path / name)
    spark.range(0, 400, numPartitions=files).selectExpr("id", "map(id, id) AS m").write.parquet(path)
    return path


def _raises(condition: str, sql_state: str, call) -> AnalysisException:
    with pytest.raises(AnalysisException) as e:
        call()
    assert e.value.getCondition() == condition, str(e.value)
    assert e.value.getSqlState() == sql_state, str(e.value)
    return e.value


def test_not_found(spark, root):
    _raises("BLOOM_INDEX_NOT_FOUND", "42704", lambda: BloomIndex(spark).drop("nope"))
    _raises("BLOOM_INDEX_NOT_FOUND", "42704", lambda: BloomIndex(spark).refresh("nope"))
    _raises("BLOOM_INDEX_NOT_FOUND", "42704", lambda: spark.sql("DROP BLOOM INDEX nope"))
    _raises("BLOOM_INDEX_NOT_FOUND", "42704", lambda: spark.sql("DESCRIBE BLOOM INDEX nope").collect())


def test_already_exists(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    bi = BloomIndex(spark, progress=False)
    assert bi.create("twice", path, ["id"], source_format="parquet")
    _raises("BLOOM_INDEX_ALREADY_EXISTS", "42710", lambda: bi.create("twice", path, ["id"], source_format="parquet"))
    _raises("BLOOM_INDEX_ALREADY_EXISTS", "42710",
            lambda: spark.sql(f"CREATE BLOOM INDEX twice ON parquet.`{path}` FOR COLUMNS (id)"))
    _raises("BLOOM_FILTER_INDEX_NOT_FOUND", "42704",
            lambda: spark.sql(f"DROP BLOOMFILTER INDEX ON parquet.`{path}` FOR COLUMNS (m)"))


def test_unsupported_source(spark, root, tmp_path):
    bi = BloomIndex(spark, progress=False)
    _raises("BLOOM_INDEX_UNSUPPORTED_SOURCE", "0A000", lambda: bi.create("r", spark.range(3), ["id"]))
    _raises("BLOOM_INDEX_UNSUPPORTED_FORMAT", "0A000",
            lambda: bi.create("r", str(tmp_path), ["id"], source_format="xml"))
    _raises("BLOOM_INDEX_PATH_NOT_FOUND", "42K03",
            lambda: bi.create("r", str(tmp_path / "missing"), ["id"], source_format="parquet"))
    _raises("BLOOM_INDEX_SOURCE_NOT_FOUND", "42P01",
            lambda: spark.sql("CREATE BLOOM INDEX r ON no_such_table FOR COLUMNS (id)"))


def test_a_function_error_keeps_its_condition_once_spark_attaches_the_sql_position(spark, root):
    """Spark attaches the SQL position to errors of function lookups: PySpark still converts
    them (an AnalysisException, not a Py4JJavaError), condition and position kept."""
    e = _raises("BLOOM_MIGHT_CONTAIN_WRONG_NUM_ARGS", "42605",
                lambda: spark.sql("SELECT bloom_might_contain('i', 'c') FROM range(1)").collect())
    assert e.getMessageParameters()["count"] == "2"
    assert "line 1 pos 7" in str(e)
    _raises("BLOOM_INDEX_NOT_FOUND", "42704",
            lambda: spark.sql("SELECT * FROM range(3) WHERE bloom_might_contain('nope', 'c', id)").collect())


def test_bad_option(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    bi = BloomIndex(spark, progress=False)
    _raises("BLOOM_INDEX_INVALID_OPTION_VALUE", "22023", lambda: bi.create("o", path, ["id"], source_format="parquet", fpp=2))
    _raises("BLOOM_INDEX_UNKNOWN_OPTION", "42K06",
            lambda: bi.create("o", path, ["id"], source_format="parquet", colour="red"))
    # ndv and its alias numItems at one level, with different numbers: refused, not one chosen.
    e = _raises("BLOOM_INDEX_INVALID_OPTION_VALUE", "22023",
                lambda: spark.sql(f"CREATE BLOOM INDEX o ON parquet.`{path}` FOR COLUMNS (id OPTIONS (ndv = 10, numItems = 99))"))
    assert e.getMessageParameters()["option"] == "numItems" and "column 'id' also gives ndv = '10'" in str(e), str(e)
    _raises("BLOOM_INDEX_INVALID_OPTION_VALUE", "22023",
            lambda: spark.sql(f"CREATE BLOOM INDEX o ON parquet.`{path}` FOR COLUMNS (id) OPTIONS (ndv = 10, numItems = 99)"))
    assert spark.sql("SHOW BLOOM INDEXES").filter("name = 'o'").count() == 0


def test_an_fpp_only_the_largest_filter_meets_is_refused(spark, root, tmp_path):
    """A rate no filter reaches for one value below the 128 MiB cap (a typo such as 1e-300) is
    refused by name before anything is written, for each sizing; a small but reachable one is not."""
    path = _source(spark, tmp_path)
    for fpp, sizing in [("1e-300", "exact"), ("1e-25", "exact"), ("1e-100", "power-of-two")]:
        e = _raises("BLOOM_INDEX_FPP_UNREACHABLE", "22023", lambda: spark.sql(
            f"CREATE BLOOM INDEX tiny ON parquet.`{path}` FOR COLUMNS (id OPTIONS (fpp = {fpp}, sizing = '{sizing}'))"))
        assert "single value" in str(e) and "128 MiB" in str(e), str(e)
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_FPP_UNREACHABLE"):
        BloomIndex(spark, progress=False).create("tiny", path, ["id"], source_format="parquet", fpp=1e-300)
    assert spark.sql("SHOW BLOOM INDEXES").filter("name = 'tiny'").count() == 0
    spark.sql(f"CREATE BLOOM INDEX tiny ON parquet.`{path}` FOR COLUMNS (id OPTIONS (fpp = 1e-9))")
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX tiny").collect()}
    assert d["column.id.fpp"] == "1.0E-9", d
    spark.sql("DROP BLOOM INDEX tiny")


def test_ndv_and_numitems_agreeing_or_at_two_levels(spark, root, tmp_path):
    """The same number under both names is accepted; a column's own ndv (or numItems) is used
    over the index's, whichever name either level gives it by."""
    path = _source(spark, tmp_path)
    spark.sql(f"CREATE BLOOM INDEX nd1 ON parquet.`{path}` FOR COLUMNS (id OPTIONS (ndv = 70, numItems = 70))")
    spark.sql(f"CREATE BLOOM INDEX nd2 ON parquet.`{path}` FOR COLUMNS (id OPTIONS (numItems = 30)) OPTIONS (ndv = 500)")
    spark.sql(f"CREATE BLOOM INDEX nd3 ON parquet.`{path}` FOR COLUMNS (id OPTIONS (ndv = 40)) OPTIONS (numItems = 500)")
    for name, ndv in [("nd1", "70"), ("nd2", "30"), ("nd3", "40")]:
        d = {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}
        assert d["column.id.ndv"] == ndv, (name, d)


def test_unsupported_column_type(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    _raises("BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE", "0A000",
            lambda: BloomIndex(spark, progress=False).create("t", path, ["m"], source_format="parquet"))


def test_a_lost_commit_race_is_a_retryable_error_of_its_own(spark, root, tmp_path):
    path = _source(spark, tmp_path, files=4)
    bi = BloomIndex(spark, progress=False)
    bi.create("race", path, ["id"], source_format="parquet")
    # A second session of the same server: on Spark Connect a clone (newSession is classic-only).
    slow = spark.cloneSession() if is_connect(spark) else spark.newSession()
    slow.conf.set("spark.bloomindex.root", root)
    slow.conf.set("spark.bloomindex.build.footerFilters", "false")
    slow.conf.set(DELAY, "3000")
    outcome: dict = {}

    def refresh():
        try:
            BloomIndex(slow, progress=False).refresh("race", "full")
            outcome["ok"] = True
        except Exception as e:  # noqa: BLE001 - reported to the test thread
            outcome["error"] = e

    t = threading.Thread(target=refresh)
    t.start()
    deadline = time.time() + 120
    while not any(e["state"] == "REFRESHING" for e in log_entries(root, "race")):
        assert time.time() < deadline and t.is_alive(), outcome
        time.sleep(0.1)
    bi.drop("race")  # commits the version the refresh would have committed next
    t.join(timeout=300)
    e = outcome.get("error")
    assert isinstance(e, bloomindex.ConcurrentBloomIndexUpdateError), outcome
    assert isinstance(e, AnalysisException)
    assert e.getCondition() == "BLOOM_INDEX_CONCURRENT_UPDATE"
    assert e.getSqlState() == "40001"
    assert e.getMessageParameters()["indexName"] == "race"
    assert "retry it" in e.getMessage()
    # Nothing of the refresh is visible: the index stays dropped, and can be created again.
    assert log_entries(root, "race")[-1]["state"] == "DELETED"
    assert bi.create("race", path, ["id"], source_format="parquet")


def test_the_python_api_raises_bloomindex_errors_whose_message_works(spark, root):
    e = _raises("BLOOM_INDEX_NOT_FOUND", "42704", lambda: BloomIndex(spark).drop("nope"))
    assert isinstance(e, bloomindex.BloomIndexError)
    assert e.getMessage().startswith("[BLOOM_INDEX_NOT_FOUND] Bloom index 'nope' does not exist")
