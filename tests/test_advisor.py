"""Issue 31, the advisor: RECOMMEND BLOOM INDEXES (from the workload history or one query, with
a storage budget) and EXPLAIN BLOOM INDEX WHATIF, on small generated tables whose right answer
is known: `id` is clustered (each value in one file), `low` has 3 values, each in every file.

The same tests run on a Spark Connect session (tests/connect/test_advisor_connect.py)."""

from __future__ import annotations

import re

import pytest

from bloomindex import BloomIndex

FILES = 8
ROWS = 800  # 100 rows per file: ids 0..99 in the first file, 100..199 in the second ...


def _table(spark, tmp_path, name: str = "t") -> str:
    path = str(tmp_path / name)
    (spark.range(0, ROWS, numPartitions=FILES)
     .selectExpr("id", "CAST(id % 3 AS INT) AS low", "concat('k', CAST(id AS STRING)) AS s",
                 "array(CAST(id AS INT)) AS arr")
     .write.parquet(path))
    return path


def _rows(df) -> list[dict]:
    return [r.asDict(recursive=True) for r in df.collect()]


def _condition(e) -> str | None:
    return e.getCondition() if hasattr(e, "getCondition") else None


def test_recommend_for_a_query_picks_the_clustered_column(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    history = BloomIndex(spark).history().count()
    rows = _rows(spark.sql(f"RECOMMEND BLOOM INDEXES ON parquet.`{t}` "
                           f"FOR SELECT * FROM parquet.`{t}` WHERE id IN (5, 450) AND low = 1"))
    creates = [r for r in rows if r["kind"] == "create"]
    assert len(creates) == 1, rows
    c = creates[0]
    assert c["columns"] == ["id"]
    # 2 of 8 files hold the values: about 6 skipped (less a false positive's share).
    assert 5.0 < c["files_skipped_per_query"] <= 6.0
    assert c["queries"] == 1 and c["index_bytes"] > 0 and 0 < c["fpp"]["id"] < 1
    assert c["statement"].startswith(f"CREATE BLOOM INDEX {c['index_name']} ON parquet.`")
    assert " FOR COLUMNS (id OPTIONS (fpp = " in c["statement"]
    # `low` is looked up too, but its values are in every file: never recommended.
    low = [r for r in rows if r["columns"] == ["low"]]
    assert [r["kind"] for r in low] == ["candidate"]
    assert low[0]["files_skipped_per_query"] == 0.0 and "100.0% of 8 files" in low[0]["reason"]
    # The advisor's own planning of the query and its jobs over the table are not the workload.
    _rows(BloomIndex(spark).what_if("id", f"SELECT * FROM parquet.`{t}` WHERE id = 5"))
    assert BloomIndex(spark).history().count() == history


def test_recommend_from_history_and_the_statement_runs(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    for i in range(4):
        spark.sql(f"SELECT * FROM parquet.`{t}` WHERE id = {i * 150 + 3}").collect()
        spark.sql(f"SELECT * FROM parquet.`{t}` WHERE low = {i % 3}").collect()
    rows = _rows(BloomIndex(spark).recommend())
    creates = [r for r in rows if r["kind"] == "create"]
    assert [r["columns"] for r in creates] == [["id"]], rows
    assert creates[0]["queries"] == 4
    # Each lookup's value is in one file of 8: about 7 skipped per query, 28 over the history.
    assert 6.0 < creates[0]["files_skipped_per_query"] <= 7.0
    assert creates[0]["files_skipped_total"] == pytest.approx(4 * creates[0]["files_skipped_per_query"])
    assert [r["kind"] for r in rows if r["columns"] == ["low"]] == ["candidate"]
    # The statement it gives is one to run; then the query prunes as estimated.
    spark.sql(creates[0]["statement"])
    report = BloomIndex(spark).explain(spark.sql(f"SELECT * FROM parquet.`{t}` WHERE id = 3"))
    assert re.search(rf"index {creates[0]['index_name']} .*kept 1/{FILES} files", report), report


def test_budget_goes_to_the_source_queried_most(spark, root, tmp_path):
    a = _table(spark, tmp_path, "a")
    b = _table(spark, tmp_path, "b")
    for i in range(6):
        spark.sql(f"SELECT * FROM parquet.`{a}` WHERE id = {i * 100 + 1}").collect()
    for i in range(2):
        spark.sql(f"SELECT * FROM parquet.`{b}` WHERE id = {i * 100 + 1}").collect()
    bi = BloomIndex(spark)
    free = [r for r in _rows(bi.recommend()) if r["kind"] == "create"]
    assert sorted(r["source"].rstrip("`").split("/")[-1] for r in free) == ["a", "b"]
    sizes = [r["index_bytes"] for r in free]
    # Room for one of the two indexes only: the one of the source queried 6 times.
    budget = max(sizes) + min(sizes) // 2
    capped = _rows(bi.recommend(budget=budget))
    creates = [r for r in capped if r["kind"] == "create"]
    assert len(creates) == 1 and creates[0]["source"].rstrip("`").endswith("/a"), capped
    assert creates[0]["index_bytes"] <= budget
    other = [r for r in capped if r["kind"] == "candidate" and r["source"].rstrip("`").endswith("/b")]
    assert other and "budget" in other[0]["reason"]
    # RECOMMEND ... ON one source: the other is left out.
    only_b = _rows(bi.recommend(b, source_format="parquet"))
    assert {r["source"] for r in only_b} == {creates[0]["source"].replace("/a`", "/b`")}


def test_existing_indexes_that_never_prune_or_have_a_far_fpp(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    spark.sql(f"CREATE BLOOM INDEX low_idx ON parquet.`{t}` FOR COLUMNS (low)")
    u = _table(spark, tmp_path, "u")
    spark.sql(f"CREATE BLOOM INDEX loose_idx ON parquet.`{u}` FOR COLUMNS (id OPTIONS (fpp = 0.6))")
    for i in range(3):
        spark.sql(f"SELECT * FROM parquet.`{t}` WHERE low = {i}").collect()
        spark.sql(f"SELECT * FROM parquet.`{u}` WHERE id = {i * 200 + 7}").collect()
    rows = _rows(spark.sql("RECOMMEND BLOOM INDEXES FROM HISTORY"))
    drops = [r for r in rows if r["kind"] == "drop"]
    assert [(r["index_name"], r["statement"]) for r in drops] == [("low_idx", "DROP BLOOM INDEX low_idx")], rows
    assert "skipped no file" in drops[0]["reason"]
    fpps = [r for r in rows if r["kind"] == "change_fpp"]
    assert [r["index_name"] for r in fpps] == ["loose_idx"], rows
    assert fpps[0]["fpp"]["id"] <= 0.6 / 5
    assert fpps[0]["statement"].startswith("DROP BLOOM INDEX loose_idx; CREATE BLOOM INDEX loose_idx ON ")
    # Neither column is a new recommendation: both are indexed.
    assert not [r for r in rows if r["kind"] in ("create", "candidate")]


QUERIES = [
    "id = 7",
    "id IN (7, 301, 777)",
    "id = 7 OR low = 1",        # an OR with a column the index lacks: every file kept
    "id = 650 AND low = 2",
    "id IN (1, 2, 3) OR id = 799",
    "s = 'k123'",               # not an indexed column: nothing skipped
]


def test_what_if_matches_the_built_index(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    bi = BloomIndex(spark)
    estimates = {}
    for q in QUERIES:
        rows = _rows(bi.what_if(["id"], f"SELECT * FROM parquet.`{t}` WHERE {q}", fpp=0.01))
        assert len(rows) == 1 and rows[0]["files_listed"] == FILES and rows[0]["files_sampled"] == FILES, (q, rows)
        estimates[q] = rows[0]
    spark.sql(f"CREATE BLOOM INDEX t_idx ON parquet.`{t}` FOR COLUMNS (id OPTIONS (fpp = 0.01))")
    for q in QUERIES:
        report = bi.explain(spark.sql(f"SELECT * FROM parquet.`{t}` WHERE {q}"))
        kept = int(re.search(r"kept (\d+)/\d+", report).group(1))
        e = estimates[q]
        assert e["files_kept_low"] <= kept <= e["files_kept_high"], (q, kept, e)
        assert abs(e["files_kept"] - kept) <= 0.5, (q, kept, e)
        assert e["files_holding"] <= e["files_kept"] + 1e-9
    assert estimates["id = 7 OR low = 1"]["files_kept"] == FILES
    assert estimates["s = 'k123'"]["files_kept"] == FILES


def test_what_if_sampled_range_covers_the_index(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    spark.conf.set("spark.bloomindex.advisor.sampleFiles", "4")
    try:
        rows = _rows(spark.sql(f"EXPLAIN BLOOM INDEX WHATIF (id) OPTIONS (fpp = 0.01) "
                               f"FOR SELECT * FROM parquet.`{t}` WHERE id IN (1, 101, 201, 301, 401, 501, 601, 701)"))
    finally:
        spark.conf.unset("spark.bloomindex.advisor.sampleFiles")
    assert rows[0]["files_sampled"] == 4 and "4 of 8" in rows[0]["method"]
    # One value in each file: every file holds one, measured on half of them and scaled.
    assert rows[0]["files_kept"] == pytest.approx(FILES)


def test_bad_input_gets_an_error_condition(spark, root, tmp_path):
    t = _table(spark, tmp_path)
    with pytest.raises(Exception) as e:
        spark.sql("RECOMMEND BLOOM INDEXES ON no_such_table_here").collect()
    assert _condition(e.value) == "BLOOM_INDEX_SOURCE_NOT_FOUND"
    with pytest.raises(Exception) as e:
        spark.sql("RECOMMEND BLOOM INDEXES BUDGET 'lots'").collect()
    assert _condition(e.value) == "BLOOM_INDEX_INVALID_BUDGET"
    with pytest.raises(Exception) as e:
        spark.sql(f"EXPLAIN BLOOM INDEX WHATIF (arr) FOR SELECT * FROM parquet.`{t}` WHERE id = 1").collect()
    assert _condition(e.value) == "BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE"
    with pytest.raises(Exception) as e:
        spark.sql(f"EXPLAIN BLOOM INDEX WHATIF (nope) FOR SELECT * FROM parquet.`{t}` WHERE id = 1").collect()
    assert _condition(e.value) == "BLOOM_INDEX_WHATIF_COLUMN_NOT_FOUND"
    with pytest.raises(Exception) as e:
        spark.sql(f"EXPLAIN BLOOM INDEX WHATIF (id) OPTIONS (fpp = 2) FOR SELECT * FROM parquet.`{t}` WHERE id = 1").collect()
    assert _condition(e.value) == "BLOOM_INDEX_INVALID_OPTION_VALUE"
    bi = BloomIndex(spark)
    with pytest.raises(ValueError, match="budget"):
        bi.recommend(budget="lots")
    with pytest.raises(ValueError, match="budget"):
        bi.recommend(budget=0)
    with pytest.raises(TypeError, match="budget"):
        bi.recommend(budget=1.5)
    with pytest.raises(ValueError, match="source_format"):
        bi.recommend(source_format="parquet")
    with pytest.raises(ValueError, match="not a table name"):
        bi.recommend(t)
    with pytest.raises(ValueError, match="fpp"):
        bi.what_if("id", "SELECT 1", fpp=2.0)
    with pytest.raises(ValueError, match="columns"):
        bi.what_if([], "SELECT 1")


def test_a_command_given_as_the_query_is_refused_and_not_run(spark, root, tmp_path):
    """EXPLAIN BLOOM INDEX FOR, WHATIF and RECOMMEND ... FOR plan their query: a command given
    there (which `spark.sql` would run at once) is refused, and nothing it names changes."""
    t = _table(spark, tmp_path)
    spark.sql("DROP TABLE IF EXISTS advisor_keep")
    spark.read.parquet(t).write.saveAsTable("advisor_keep")
    try:
        before = spark.sql("SELECT count(*) AS n FROM advisor_keep").head().n
        commands = ["DROP TABLE advisor_keep",
                    f"INSERT OVERWRITE advisor_keep SELECT * FROM parquet.`{t}` WHERE false",
                    f"INSERT INTO advisor_keep SELECT * FROM parquet.`{t}`",
                    "CREATE TABLE advisor_other AS SELECT * FROM advisor_keep",
                    "SET spark.bloomindex.pruning.enabled = false",
                    "CREATE BLOOM INDEX advisor_idx ON advisor_keep FOR COLUMNS (id)"]
        bi = BloomIndex(spark)
        for c in commands:
            for run in (lambda: spark.sql(f"EXPLAIN BLOOM INDEX FOR {c}").collect(),
                        lambda: spark.sql(f"EXPLAIN BLOOM INDEX WHATIF (id) FOR {c}").collect(),
                        lambda: spark.sql(f"RECOMMEND BLOOM INDEXES FOR {c}").collect(),
                        lambda: bi.what_if("id", c).collect(),
                        lambda: bi.recommend(query=c).collect()):
                with pytest.raises(Exception) as e:
                    run()
                assert _condition(e.value) == "BLOOM_INDEX_NOT_A_QUERY", (c, e.value)
                assert "takes a query, not a command" in str(e.value)
        assert spark.sql("SELECT count(*) AS n FROM advisor_keep").head().n == before == ROWS
        assert not spark.catalog.tableExists("advisor_other")
        assert spark.conf.get("spark.bloomindex.pruning.enabled") != "false"
        assert bi.list().count() == 0
        # A query is still explained.
        plan = spark.sql("EXPLAIN BLOOM INDEX FOR SELECT * FROM advisor_keep WHERE id = 3").head().plan
        assert plan.startswith("scan of spark_catalog.default.advisor_keep: no Bloom index"), plan
    finally:
        spark.sql("DROP TABLE IF EXISTS advisor_keep")
        spark.sql("DROP TABLE IF EXISTS advisor_other")


def test_plot_recommendations(spark, root, tmp_path):
    import matplotlib  # the `plot` extra, in the test environment

    matplotlib.use("Agg")
    t = _table(spark, tmp_path)
    df = BloomIndex(spark).recommend(t, source_format="parquet", query=f"SELECT * FROM parquet.`{t}` WHERE id = 3 AND low = 1")
    ax = BloomIndex.plot_recommendations(df)
    offsets = [len(c.get_offsets()) for c in ax.collections]
    assert sum(offsets) == 2  # `id` recommended, `low` a candidate
    assert ax.get_xlabel() == "index size (bytes)"
