"""What only a Spark Connect session has: configure() without warnings, no py4j, the API's
temporary views and the DataFrame's execution info left as they were."""

from __future__ import annotations

import pytest

import bloomindex
from bloomindex import BloomIndex
from bloomindex.session import EXTENSIONS_CLASS, is_connect, jvm_api, task_kernels

import conftest


def test_configure_sets_the_local_server_up_without_warnings(spark):
    assert is_connect(spark)
    assert not [w for w in conftest.WARNINGS if "CANNOT_MODIFY" in w], conftest.WARNINGS
    assert EXTENSIONS_CLASS in spark.conf.get("spark.sql.extensions")
    assert "jdk.incubator.vector" in spark.conf.get("spark.driver.extraJavaOptions")
    jars = spark.conf.get("spark.jars")
    assert all(j in jars for j in bloomindex.jar_paths())


def test_a_remote_server_gets_nothing_from_the_client():
    from pyspark.sql import SparkSession

    b = bloomindex.configure(SparkSession.builder.remote("sc://127.0.0.1:1"))
    assert b._options == {"spark.remote": "sc://127.0.0.1:1"}


def test_py4j_only_calls_say_so(spark):
    with pytest.raises(ValueError, match="classic session"):
        jvm_api(spark)
    with pytest.raises(ValueError, match="classic session"):
        task_kernels(spark, 1)


def test_explain_and_create_leave_no_view_and_keep_the_metrics(spark, root, tmp_path):
    path = str(tmp_path / "t")
    spark.range(0, 100, numPartitions=2).write.parquet(path)
    bi = BloomIndex(spark)
    df = spark.read.parquet(path).where("id = 5")
    assert bi.create("v", df, ["id"])
    df.collect()
    info = df.executionInfo
    assert info is not None
    assert "index v (log version 1) kept 1/2 files" in bi.explain(df)
    assert df.executionInfo is info
    assert not [t.name for t in spark.catalog.listTables() if t.name.startswith("_bloomindex_")]
    with pytest.raises(ValueError, match="run an action"):
        bi.join_filter_metrics(spark.read.parquet(path))


def test_a_dataframe_of_another_session_is_indexed_and_explained_in_its_session(spark, root, tmp_path):
    """The temporary view is the DataFrame's session's, so the statement reading it runs there
    too (the classic API uses df.sparkSession), and the view is dropped there."""
    path = str(tmp_path / "other")
    spark.range(0, 100, numPartitions=2).write.parquet(path)
    other = spark.cloneSession()  # a second session of the server, with spark's settings
    df = other.read.parquet(path).where("id = 5")
    bi = BloomIndex(spark)
    try:
        assert bi.create("o", df, ["id"])
        assert "index o (log version 1) kept 1/2 files" in bi.explain(df)
        for s in (spark, other):
            assert not [t.name for t in s.catalog.listTables() if t.name.startswith("_bloomindex_")]
        assert [r.name for r in bi.list().collect()] == ["o"]
    finally:
        # Not other.stop(), which stops the local server; an open client would retry its
        # cleanup against the stopped server at exit.
        other.client.close()


def test_set_refresh_and_refresh_on_write_on_connect(spark, root, tmp_path):
    """The refresh option on a Connect session: set at CREATE, changed with set_refresh (SQL's
    ALTER BLOOM INDEX), and an append through the session refreshes an on_write index."""
    path = str(tmp_path / "w")
    spark.range(0, 100, numPartitions=2).write.parquet(path)
    bi = BloomIndex(spark)
    assert bi.create("w_ix", path, ["id"], source_format="parquet", refresh="manual")
    assert bi.describe("w_ix")["refresh"] == "manual"
    assert bi.set_refresh("w_ix", "on_write") == 2
    spark.range(100, 150, numPartitions=1).write.mode("append").parquet(path)
    d = bi.describe("w_ix")
    assert d["refresh"] == "on_write" and d["files_indexed"] == "3", d
    assert "index w_ix (log version 4) kept 1/3 files" in bi.explain(spark.read.parquet(path).where("id = 120"))


def test_optimize_and_vacuum_on_connect(spark, root, tmp_path):
    """OPTIMIZE and VACUUM BLOOM INDEX through the API on a Connect session: after two refreshes
    that kept the earlier probe files, OPTIMIZE rewrites them into one per column, and VACUUM with
    no retention deletes the three folders the live version no longer reads."""
    path = str(tmp_path / "h")
    spark.range(0, 100, numPartitions=2).write.parquet(path)
    bi = BloomIndex(spark)
    assert bi.create("h_ix", path, ["id"], source_format="parquet", refresh="manual")
    for start in (100, 200):
        spark.range(start, start + 50, numPartitions=1).write.mode("append").parquet(path)
        bi.refresh("h_ix")
    assert bi.vacuum("h_ix") == {"folders_deleted": 0, "bytes_deleted": 0, "log_entries_deleted": 0}
    version = bi.optimize("h_ix")
    assert bi.describe("h_ix")["last_operation"] == "OPTIMIZE"
    assert bi.optimize("h_ix") == version
    out = bi.vacuum("h_ix", retain_hours=0)
    assert out["folders_deleted"] == 3 and out["bytes_deleted"] > 0, out
    assert "index h_ix (log version %d) kept 1/4 files" % version in bi.explain(spark.read.parquet(path).where("id = 220"))


def test_text_filters_on_connect(spark, root, tmp_path):
    """tokens() and ngrams() on a Connect session (sent as CREATE ... USING TOKENS / NGRAMS (n)):
    a substring and a word query keep only the file that holds them, answering as without the index."""
    path = str(tmp_path / "logs")
    (spark.range(0, 400, numPartitions=4)
     .selectExpr("id", "concat('req ', lpad(CAST(id AS STRING), 5, '0'), ' ', IF(id < 100, 'Alpha', 'beta')) AS msg")
     .write.parquet(path))
    bi = BloomIndex(spark)
    assert bi.create("t_ix", path, ["id", bloomindex.tokens("msg", case="lower"), bloomindex.ngrams("msg", 3, fpp=0.001)],
                     source_format="parquet")
    assert bi.describe("t_ix")["columns"] == "id, msg USING TOKENS, msg USING NGRAMS(3)"
    df = spark.read.parquet(path)
    for condition, rows in (("msg LIKE '%00321%'", 1), ("msg ILIKE '% ALPHA'", 100)):
        q = df.where(condition)
        report = bi.explain(q)
        assert "kept 1/4 files" in report, report
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
        try:
            off = sorted(q.collect())
        finally:
            spark.conf.unset("spark.bloomindex.pruning.enabled")
        assert sorted(q.collect()) == off and len(off) == rows
