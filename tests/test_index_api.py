"""The Python BloomIndex API: the same JVM code as SQL, PySpark's exceptions on errors.

Every test here also runs on a Spark Connect session (tests/connect), with the same
assertions: the API must give the same results and exception classes on both."""

from __future__ import annotations

import time

import pytest
from pyspark.errors import AnalysisException

import bloomindex
from bloomindex import BloomIndex, might_contain
from index_helpers import assert_filters_hold_values, assert_same_with_pruning_off, confs, log_entries


@pytest.fixture()
def bi(spark):
    return BloomIndex(spark, progress=False)


def test_create_on_table_path_and_dataframe(spark, root, bi, tmp_path):
    spark.sql("DROP TABLE IF EXISTS api_t")
    spark.range(500).selectExpr("id", "cast(id * 3 as string) as s").repartition(3).write.saveAsTable("api_t")
    path = str(tmp_path / "api_p")
    spark.table("api_t").write.parquet(path)

    assert bi.create("by_table", "api_t", ["id", "s"], fpp=0.02, global_filter=True)
    assert bi.create("by_path", path, {"s": {"fpp": 0.1}}, source_format="parquet")
    assert bi.create("by_df", spark.read.parquet(path), ["id"], ndv=1000, sizing="power-of-two")
    assert not bi.create("by_df", spark.read.parquet(path), ["id"], if_not_exists=True)

    listed = {r.name: r for r in bi.list().collect()}
    assert set(listed) == {"by_table", "by_path", "by_df"}
    d = bi.describe("by_table")
    assert d["column.id.fpp"] == "0.02" and d["global"] == "true" and d["files_indexed"] == "3"
    assert bi.describe("by_path")["column.s.fpp"] == "0.1"
    d = bi.describe("by_df")
    assert d["column.id.ndv"] == "1000" and d["column.id.sizing"] == "power-of-two"
    assert_filters_hold_values(spark, root, "by_table", spark.table("api_t"), {"id": "bigint", "s": "string"})

    spark.range(500, 600).selectExpr("id", "cast(id * 3 as string) as s").coalesce(1).write.mode("append").parquet(path)
    assert "files_new_or_changed" not in bi.describe("by_path"), "the source is listed only when asked"
    assert bi.describe("by_path", extended=True)["files_new_or_changed"] == "1"
    with pytest.raises(TypeError, match="extended"):
        bi.describe("by_path", extended="yes")
    version = bi.refresh("by_path")
    assert bi.describe("by_path")["log_version"] == str(version)
    assert bi.refresh("by_path", mode="full") == version + 2
    assert bi.refresh("by_path", mode="FULL") == version + 4  # any case, as SQL takes it
    assert bi.drop("by_path") and not bi.drop("by_path", if_exists=True)
    assert log_entries(root, "by_path")[-1]["state"] == "DELETED"


def test_errors_are_pyspark_exceptions_with_the_jvm_message(spark, root, bi):
    spark.sql("DROP TABLE IF EXISTS api_e")
    spark.range(5).selectExpr("id", "id > 2 as b").write.saveAsTable("api_e")
    with pytest.raises(AnalysisException, match="Column 'zz' does not exist"):
        bi.create("e1", "api_e", ["zz"])
    with pytest.raises(AnalysisException, match="BOOLEAN cannot be indexed"):
        bi.create("e1", "api_e", ["b"])
    with pytest.raises(AnalysisException, match="Invalid fpp"):
        bi.create("e1", "api_e", ["id"], fpp=2)
    with pytest.raises(AnalysisException, match="Invalid Bloom index name"):
        bi.create("../escape", "api_e", ["id"])
    with pytest.raises(AnalysisException, match="Unknown option 'colour'"):
        bi.create("e1", "api_e", ["id"], colour="red")
    with pytest.raises(AnalysisException, match="does not exist"):
        bi.refresh("nope")
    with pytest.raises(AnalysisException, match="does not exist"):
        bi.describe("nope")
    with pytest.raises(ValueError, match="mode"):
        bi.refresh("nope", mode="partial")
    with pytest.raises(ValueError, match="columns"):
        bi.create("e1", "api_e", [])
    with pytest.raises(TypeError, match="source"):
        bi.create("e1", 42, ["id"])
    with pytest.raises(TypeError, match="name"):
        bi.create(123, "api_e", ["id"])
    with pytest.raises(TypeError, match="columns"):
        bi.create("e1", "api_e", 42)
    assert bi.list().count() == 0


def test_explain_prefilter_might_contain_and_join_filter_metrics(spark, root, bi, tmp_path):
    fact, dim = str(tmp_path / "fact"), str(tmp_path / "dim")
    # 8 files of 500 consecutive keys each; the dimension holds every 40th key.
    spark.range(0, 4000, numPartitions=8).selectExpr("id AS k", "id % 7 AS v").write.parquet(fact)
    spark.range(0, 4000, 40, numPartitions=2).selectExpr("id AS k", "'x' AS cat").write.parquet(dim)
    assert bi.create("fact_idx", fact, ["k"], source_format="parquet")
    assert bi.create("dim_idx", spark.read.parquet(dim), ["k"], global_filter=True)

    point = spark.read.parquet(fact).where("k = 1234")
    report = bi.explain(point)
    assert "index fact_idx (log version 1) kept 1/8 files, skipped 7 files" in report, report
    assert [tuple(r) for r in point.collect()] == [(1234, 1234 % 7)]
    unindexed = str(tmp_path / "unindexed")
    spark.range(10).write.parquet(unindexed)
    assert "no Bloom index for this source" in bi.explain(spark.read.parquet(unindexed).where("id = 3"))
    # An indexed source: a scan with no filter an index reads says so, not that there is no index;
    # a filter on a column no index holds names the index that did not apply.
    assert f"scan of file:{fact}: not pruned: no filter on it that its Bloom indexes read" in \
        bi.explain(spark.read.parquet(fact)), bi.explain(spark.read.parquet(fact))
    assert "not applied: fact_idx" in bi.explain(spark.read.parquet(fact).where("v = 3"))
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        report = bi.explain(spark.read.parquet(fact).where("k = 1234"))
        assert "not pruned: pruning is off (spark.bloomindex.pruning.enabled)" in report, report
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")

    joined = spark.read.parquet(fact).join(spark.read.parquet(dim), "k")
    assert "join filter: index dim_idx (log version 1) global filter of k" in bi.explain(joined)
    started = time.monotonic()
    rows = joined.collect()
    elapsed_ms = (time.monotonic() - started) * 1000
    assert sorted(r.k for r in rows) == list(range(0, 4000, 40))
    [m] = bi.join_filter_metrics(joined)
    assert set(m) == {"numInputRows", "numOutputRows", "filterTimeMs"}
    # Milliseconds: within the query's wall time on two task threads (nanoseconds would be 10^6 times more).
    assert 0 <= m["filterTimeMs"] <= 2 * elapsed_ms, (m, elapsed_ms)
    assert m["numInputRows"] == 4000
    assert 100 <= m["numOutputRows"] < 1000  # the 100 keys and some false positives

    kept = bi.prefilter(spark.read.parquet(fact), "k", "dim_idx", "k")
    assert 100 <= kept.count() < 1000
    assert kept.join(spark.read.parquet(dim), "k").count() == 100
    by_function = spark.read.parquet(fact).filter(might_contain("dim_idx", "k", "k"))
    assert sorted(r.k for r in by_function.collect()) == sorted(r.k for r in kept.collect())
    # A filter of a column the index does not hold: refused when the plan is analyzed.
    with pytest.raises(AnalysisException):
        spark.read.parquet(fact).filter(might_contain("dim_idx", "cat", "k")).collect()


def test_bloomindex_errors_are_pyspark_errors_of_their_condition(spark, root, bi, tmp_path):
    with pytest.raises(bloomindex.BloomIndexError) as e:
        bi.describe("nope")
    assert isinstance(e.value, AnalysisException)
    assert not isinstance(e.value, bloomindex.ConcurrentBloomIndexUpdateError)
    assert e.value.getCondition() == "BLOOM_INDEX_NOT_FOUND" and e.value.getSqlState() == "42704"
    assert e.value.getMessageParameters()["indexName"] == "nope"
    assert e.value.getMessage().startswith("[BLOOM_INDEX_NOT_FOUND] Bloom index 'nope' does not exist")
    # Spark's own errors stay Spark's.
    with pytest.raises(AnalysisException) as e:
        bi.create("e2", "no_such_db.no_such_table", ["id"])
    assert not isinstance(e.value, bloomindex.BloomIndexError) or e.value.getCondition().startswith("BLOOM_")
    # Names are quoted, not spliced into the statement.
    spark.range(5).write.parquet(str(tmp_path / "q"))
    with pytest.raises(AnalysisException, match="Invalid Bloom index name"):
        bi.create("a` ON x FOR COLUMNS (id); --", str(tmp_path / "q"), ["id"], source_format="parquet")
    assert bi.create("quoted", str(tmp_path / "q"), ["id"], source_format="parquet", fpp=0.05)
    assert bi.describe("quoted")["column.id.fpp"] == "0.05"
    with pytest.raises(AnalysisException, match="fpp"):
        bi.create("quoted2", str(tmp_path / "q"), {"id": {"fpp": "0.05' , x = '1"}}, source_format="parquet")
    assert [r.name for r in bi.list().collect()] == ["quoted"]



def test_a_session_reading_parquet_through_v2_creates_and_refreshes_indexes(spark, root, bi, tmp_path):
    """With Parquet read through DataSource V2 (spark.sql.sources.useV1SourceList without it),
    CREATE over a folder, create() from a DataFrame and REFRESH work (the build reads the
    folder through V1 and puts the session's setting back), and the session's V2 scans prune."""
    path = str(tmp_path / "v2")
    spark.range(0, 800, 1, 8).selectExpr("id AS k", "id % 7 AS v").write.parquet(path)
    key = "spark.sql.sources.useV1SourceList"
    v2 = "avro,csv,json,kafka,orc,text"
    with confs(spark, {key: v2}):
        spark.sql(f"CREATE BLOOM INDEX v2_sql ON parquet.`{path}` FOR COLUMNS (k)")
        assert spark.conf.get(key) == v2
        assert bi.create("v2_df", spark.read.parquet(path), ["v"])
        assert spark.conf.get(key) == v2
        q = lambda: spark.read.parquet(path).where("k = 123")
        if not bloomindex.session.is_connect(spark):  # the plan's text (a Connect client has no JVM)
            assert "BatchScan" in q()._jdf.queryExecution().executedPlan().toString()
        assert assert_same_with_pruning_off(spark, q) == [(123, 123 % 7)]
        assert "index v2_sql (log version 1) kept 1/8 files" in bi.explain(q()), bi.explain(q())
        spark.range(800, 900, 1, 1).selectExpr("id AS k", "id % 7 AS v").write.mode("append").parquet(path)
        spark.sql("REFRESH BLOOM INDEX v2_sql")
        q = lambda: spark.read.parquet(path).where("k = 850")
        assert assert_same_with_pruning_off(spark, q) == [(850, 850 % 7)]
        assert "kept 1/9 files" in bi.explain(q()), bi.explain(q())
        assert sorted(r["name"] for r in spark.sql("SHOW BLOOM INDEXES").collect()) == ["v2_df", "v2_sql"]
