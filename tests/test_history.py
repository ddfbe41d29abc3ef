"""Issue 31, first part: the workload history. Each scan of an indexable source that a query
plans with a filter is recorded (source, the columns under =, IN, <=> and IS NULL with their
number of values, files listed and read, bytes, the index that answered, the query's wall time),
stored under the index root in `_history/` as JSON lines, never with a literal value, bounded in
entries and age, and read back with `bloom_index_history()` / `BloomIndex.history()`.

The same tests run on a Spark Connect session (tests/connect/test_history_connect.py), the
Delta one in this process only (the Connect suite's server has no Delta)."""

from __future__ import annotations

import glob
import os
import time

import pytest

from bloomindex import BloomIndex

FILES = 4
# Literals the queries use, which must never reach the stored history.
SECRET_NUMBER = 987654321
SECRET_TEXT = "zebra-sentinel-7q"


def _source(spark, tmp_path, name: str = "src") -> str:
    path = str(tmp_path / name)
    (spark.range(0, 400, numPartitions=FILES)
     .selectExpr("id", "concat('v', CAST(id AS STRING)) AS s", "CAST(id % 5 AS INT) AS g")
     .write.parquet(path))
    return path


def _history(spark) -> list[dict]:
    return [r.asDict(recursive=True) for r in BloomIndex(spark).history().collect()]


def _stored(root: str) -> str:
    """Everything written under the root's `_history/`."""
    files = glob.glob(os.path.join(root, "_history", "*"))
    return "".join(open(f, encoding="utf-8").read() for f in files)


def _lines(root: str) -> int:
    return sum(1 for line in _stored(root).splitlines() if line.strip())


def _preds(row: dict) -> list[tuple]:
    return [(p["column"], p["op"], p["values"]) for p in row["predicates"]]


def test_v1_scans_recorded_with_and_without_an_index(spark, root, tmp_path):
    indexed = _source(spark, tmp_path, "indexed")
    plain = _source(spark, tmp_path, "plain")
    spark.sql(f"CREATE BLOOM INDEX hist_idx ON parquet.`{indexed}` FOR COLUMNS (id)")
    assert spark.sql(f"SELECT * FROM parquet.`{indexed}` WHERE id = 123").count() == 1
    spark.sql(f"SELECT * FROM parquet.`{indexed}` WHERE id = {SECRET_NUMBER}").collect()
    spark.sql(f"SELECT * FROM parquet.`{plain}` WHERE s IN ('{SECRET_TEXT}', 'b', 'c') OR g IS NULL").collect()

    rows = _history(spark)
    assert len(rows) == 3, rows
    hit, miss, other = rows
    for r in rows:
        assert r["provider"] == "files" and r["format"] == "parquet"
        assert r["files_listed"] == FILES
        assert r["execution_id"] is not None
        assert r["wall_time_ms"] is not None and r["wall_time_ms"] >= 0
        assert r["bytes_read"] <= r["bytes_listed"]
    assert _preds(hit) == [("id", "=", 1)]
    assert (hit["index_name"], hit["index_version"], hit["files_read"], hit["pruned"]) == ("hist_idx", 1, 1, True)
    assert (miss["index_name"], miss["files_read"], miss["bytes_read"], miss["pruned"]) == ("hist_idx", 0, 0, True)
    assert other["source"].endswith("plain") and other["index_name"] is None
    assert sorted(_preds(other)) == [("g", "IS NULL", 0), ("s", "IN", 3)]
    assert (other["files_read"], other["pruned"]) == (FILES, False)
    assert other["bytes_read"] == other["bytes_listed"] > 0

    stored = _stored(root)
    assert stored.count("\n") == 3
    assert str(SECRET_NUMBER) not in stored and SECRET_TEXT not in stored
    # JSON lines any Spark reads.
    assert spark.read.json(os.path.join(root, "_history")).count() == 3
    # The SQL table function reads the same.
    assert spark.sql("SELECT count(*) FROM bloom_index_history() WHERE pruned").head()[0] == 2


def test_v2_file_scans_recorded(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    spark.sql(f"CREATE BLOOM INDEX hist_v2 ON parquet.`{path}` FOR COLUMNS (s)")
    spark.conf.set("spark.sql.sources.useV1SourceList", "")
    try:
        assert spark.read.parquet(path).where("s = 'v42' OR s <=> 'v43'").count() == 2
        spark.read.parquet(path).where(f"s = '{SECRET_TEXT}'").collect()
    finally:
        spark.conf.unset("spark.sql.sources.useV1SourceList")
    rows = _history(spark)
    assert len(rows) == 2, rows
    assert _preds(rows[0]) == [("s", "=", 1), ("s", "<=>", 1)]
    assert [(r["index_name"], r["files_listed"], r["files_read"]) for r in rows] == \
        [("hist_v2", FILES, 1), ("hist_v2", FILES, 0)]
    assert SECRET_TEXT not in _stored(root)


def test_disabled_records_nothing(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    spark.conf.set("spark.bloomindex.history.enabled", "false")
    try:
        spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = 1").collect()
        assert _history(spark) == []
    finally:
        spark.conf.unset("spark.bloomindex.history.enabled")
    assert not os.path.exists(os.path.join(root, "_history"))


def test_bounded_in_entries_and_age(spark, root, tmp_path):
    path = _source(spark, tmp_path)
    spark.conf.set("spark.bloomindex.history.maxEntries", "3")
    try:
        for i in range(5):
            spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id = {i}").collect()
            _history(spark)   # one batch written per query
        rows = _history(spark)
        assert len(rows) == 3
        assert _lines(root) <= 3
    finally:
        spark.conf.unset("spark.bloomindex.history.maxEntries")
    spark.conf.set("spark.bloomindex.history.maxAge", "1s")
    try:
        time.sleep(1.1)
        assert _history(spark) == []   # reads show nothing older
        assert _lines(root) == 3       # (reads delete nothing)
        spark.sql(f"SELECT * FROM parquet.`{path}` WHERE id IN (1, 2)").collect()
        rows = _history(spark)
        # The write deleted the older files; the new record is there unless this machine took
        # more than the second to plan, run and write it.
        assert _lines(root) <= 1
        assert all(_preds(r) == [("id", "IN", 2)] for r in rows)
    finally:
        spark.conf.unset("spark.bloomindex.history.maxAge")


def test_history_name_is_reserved(spark, root):
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException) as e:
        spark.sql("DROP BLOOM INDEX _history")
    assert e.value.getCondition() == "BLOOM_INDEX_INVALID_NAME"
    with pytest.raises(AnalysisException) as e:
        spark.sql("SELECT * FROM bloom_index_history(1)").collect()
    assert e.value.getCondition() == "BLOOM_INDEX_HISTORY_ARGUMENTS"


@pytest.mark.delta
def test_delta_scans_recorded(spark, root, tmp_path):
    path = str(tmp_path / "delta")
    (spark.range(0, 400, numPartitions=FILES).selectExpr("id", "concat('v', CAST(id AS STRING)) AS s")
     .write.format("delta").save(path))
    plain = str(tmp_path / "delta_plain")
    spark.range(0, 100, numPartitions=2).write.format("delta").save(plain)
    spark.sql(f"CREATE BLOOM INDEX hist_delta ON delta.`{path}` FOR COLUMNS (s)")
    # Every file's min/max spans the values: Delta's own skipping keeps all, the index one.
    assert spark.sql(f"SELECT * FROM delta.`{path}` WHERE s = 'v150'").count() == 1
    spark.sql(f"SELECT * FROM delta.`{plain}` WHERE id = {SECRET_NUMBER}").collect()
    rows = [r for r in _history(spark) if r["provider"] == "delta"]
    assert len(rows) == 2, rows
    indexed, other = rows
    assert _preds(indexed) == [("s", "=", 1)]
    assert (indexed["index_name"], indexed["files_read"]) == ("hist_delta", 1)
    assert indexed["files_listed"] >= 1 and indexed["wall_time_ms"] is not None
    assert other["index_name"] is None and other["files_read"] == other["files_listed"]
    assert str(SECRET_NUMBER) not in _stored(root)
