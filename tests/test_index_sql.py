"""CREATE / REFRESH / DROP / SHOW / DESCRIBE BLOOM INDEX through SQL, on every source kind."""

from __future__ import annotations

import json
import os
import shutil
import re
import threading

import pytest
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import functions as F

import bloomindex
from index_helpers import (assert_filters_hold_values, assert_same_with_pruning_off, entry_text, index_rows, log_entries,
                           row_path, table_files)




def _orders(spark, n=3000, files=4, offset=0):
    return (spark.range(offset, offset + n)
            .select(F.col("id").alias("user_id"),
                    F.concat(F.lit("u"), (F.col("id") % 500).cast("string")).alias("email"),
                    (F.col("id") % 3).alias("p"),
                    F.when(F.col("id") % 7 == 0, None).otherwise(F.col("id") * 1.5).alias("amount"),
                    (F.col("id") % 2 == 0).alias("flag"))
            .repartition(files))


def _describe(spark, name, extended=False):
    sql = f"DESCRIBE BLOOM INDEX {'EXTENDED ' if extended else ''}{name}"
    return {r.info_name: r.info_value for r in spark.sql(sql).collect()}


def test_create_show_describe_on_a_partitioned_managed_table(spark, root):
    spark.sql("DROP TABLE IF EXISTS orders_p")
    _orders(spark).write.partitionBy("p").saveAsTable("orders_p")
    spark.sql("CREATE BLOOM INDEX oi ON orders_p FOR COLUMNS (user_id, email OPTIONS (fpp = 0.05)) "
              "OPTIONS (global = true)")
    shown = spark.sql("SHOW BLOOM INDEXES").collect()
    assert [(r.name, r.columns, r.state) for r in shown] == [("oi", "user_id, email", "ACTIVE")]
    files = table_files(spark, "orders_p")
    assert shown[0].files_indexed == len(files) and shown[0].bytes > 0
    d = _describe(spark, "oi", extended=True)
    assert d["state"] == "ACTIVE" and d["log_version"] == "1" and d["files_indexed"] == str(len(files))
    assert d["column.email.fpp"] == "0.05" and d["column.user_id.fpp"] == "0.01"
    assert d["column.user_id.sizing"] == "exact" and d["files_new_or_changed"] == "0"
    assert int(d["column.user_id.global_ndv"]) == pytest.approx(3000, rel=0.05)
    assert {row_path(r.file_path) for r in index_rows(spark, root, "oi")} == files
    checked = assert_filters_hold_values(spark, root, "oi", spark.table("orders_p"),
                                         {"user_id": "bigint", "email": "string"})
    assert checked == 2 * 3000
    # Per-file filters are sized for the file's own distinct count at the fpp.
    for r in index_rows(spark, root, "oi"):
        f = bloomindex.Sbbf.deserialize(bytes(r.filter))
        target = 0.05 if r.column == "email" else 0.01
        assert bloomindex.expected_fpp(f.num_bytes, r.ndv) <= target
        assert r.row_count > 0 and r.ndv <= r.row_count


@pytest.mark.parametrize("fmt", ["parquet", "orc", "csv", "json"])
def test_every_format_as_external_table_and_as_path(spark, root, tmp_path, fmt):
    path = str(tmp_path / f"data_{fmt}")
    writer = _orders(spark, n=400, files=3).drop("flag").write.format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    writer.save(path)
    table = f"ext_{fmt}"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    header = "OPTIONS (header 'true')" if fmt == "csv" else ""
    schema = "(user_id BIGINT, email STRING, p BIGINT, amount DOUBLE)" if fmt in ("csv", "json") else ""
    spark.sql(f"CREATE TABLE {table} {schema} USING {fmt} {header} LOCATION '{path}'")
    spark.sql(f"CREATE BLOOM INDEX t_{fmt} ON {table} FOR COLUMNS (user_id, email)")
    assert_filters_hold_values(spark, root, f"t_{fmt}", spark.table(table), {"user_id": "bigint", "email": "string"})

    # A path read has no reader options: CSV columns are then _c0, _c1, ...
    spark.sql(f"CREATE BLOOM INDEX p_{fmt} ON {fmt}.`{path}` FOR COLUMNS ({'_c1' if fmt == 'csv' else 'email'})")
    d = _describe(spark, f"p_{fmt}")
    assert d["format"] == fmt and d["files_indexed"] == str(len(table_files(spark, table)))
    # Both answer for the table's queries (the index over its folder per column, where the
    # table decodes it as the path read did): SHOW ... ON lists both.
    shown = spark.sql(f"SHOW BLOOM INDEXES ON {table}").collect()
    assert sorted(r.name for r in shown) == [f"p_{fmt}", f"t_{fmt}"]
    assert [r.name for r in spark.sql(f"SHOW BLOOM INDEXES ON {fmt}.`{path}`").collect()] == [f"p_{fmt}"]


@pytest.mark.parametrize("sql,message", [
    ("CREATE BLOOM INDEX bad ON no_such_table FOR COLUMNS (a)", "not found"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (nope)", "Column 'nope' does not exist"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (flag)", "BOOLEAN cannot be indexed"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (s)", "cannot be indexed"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id OPTIONS (fpp = 0))", "Invalid fpp"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id OPTIONS (fpp = 1))", "Invalid fpp"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id) OPTIONS (fpp = 1.5)", "Invalid fpp"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id OPTIONS (ndv = 0))", "Invalid ndv"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id OPTIONS (ndv = -5))", "Invalid ndv"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id) OPTIONS (colour = 'red')", "Unknown option 'colour'"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id OPTIONS (global = true))", "Unknown option 'global'"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id, ID)", "listed twice"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (p)", "partition column"),
    ("CREATE BLOOM INDEX `a/b` ON typed FOR COLUMNS (id)", "Invalid Bloom index name"),
    ("CREATE BLOOM INDEX `..` ON typed FOR COLUMNS (id)", "Invalid Bloom index name"),
    ("CREATE BLOOM INDEX `a.b` ON typed FOR COLUMNS (id)", "Invalid Bloom index name"),
    ("CREATE BLOOM INDEX `/abs` ON typed FOR COLUMNS (id)", "Invalid Bloom index name"),
    ("CREATE BLOOM INDEX bad ON typed FOR COLUMNS (id) OPTIONS (sizing = 'round')", "Invalid sizing"),
    ("CREATE BLOOM INDEX bad ON parquet.`/no/such/path` FOR COLUMNS (id)", "does not exist"),
    ("REFRESH BLOOM INDEX nothing_here", "does not exist"),
    ("DROP BLOOM INDEX nothing_here", "does not exist"),
    ("DESCRIBE BLOOM INDEX nothing_here", "does not exist"),
])
def test_bad_input_is_an_analysis_error_and_writes_nothing(spark, root, sql, message):
    spark.sql("DROP TABLE IF EXISTS typed")
    (spark.range(10).selectExpr("id", "id % 2 = 0 as flag", "named_struct('a', id) as s", "id % 2 as p")
     .write.partitionBy("p").saveAsTable("typed"))
    with pytest.raises(AnalysisException, match=message):
        spark.sql(sql)
    assert not os.path.exists(root) or os.listdir(root) == []


def test_parse_errors_in_our_statements_and_spark_errors_in_spark_statements(spark, root):
    with pytest.raises(ParseException, match="expected '\\('"):
        spark.sql("CREATE BLOOM INDEX x ON t FOR COLUMNS")
    with pytest.raises(ParseException, match="SELEC"):
        spark.sql("SELEC 1")
    assert spark.sql("SELECT 1 AS bloom").collect()[0].bloom == 1


def test_duplicate_name_if_not_exists_and_recreate_after_drop(spark, root):
    spark.sql("DROP TABLE IF EXISTS dup_t")
    _orders(spark, n=200, files=2).write.saveAsTable("dup_t")
    spark.sql("CREATE BLOOM INDEX dup ON dup_t FOR COLUMNS (user_id)")
    before = log_entries(root, "dup")
    with pytest.raises(AnalysisException, match="already exists"):
        spark.sql("CREATE BLOOM INDEX dup ON dup_t FOR COLUMNS (email)")
    spark.sql("CREATE BLOOM INDEX IF NOT EXISTS dup ON dup_t FOR COLUMNS (email)")
    assert log_entries(root, "dup") == before
    spark.sql("DROP BLOOM INDEX dup")
    assert log_entries(root, "dup")[-1]["state"] == "DELETED"
    assert os.listdir(os.path.join(root, "dup", "data")) == []
    assert spark.sql("SHOW BLOOM INDEXES").count() == 0
    spark.sql("DROP BLOOM INDEX IF EXISTS dup")
    spark.sql("CREATE BLOOM INDEX dup ON dup_t FOR COLUMNS (email)")
    versions = [e["version"] for e in log_entries(root, "dup")]
    assert versions == list(range(len(versions)))
    assert _describe(spark, "dup")["columns"] == "email"


def test_describe_reads_the_index_alone_and_extended_compares_it_with_the_source(spark, root, tmp_path):
    """Plain DESCRIBE reads the log, the summary and the index's own files, never the source:
    it answers with the source gone; EXTENDED lists the source for the freshness rows."""
    path = str(tmp_path / "dx")
    _orders(spark, n=300, files=3).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX dx ON parquet.`{path}` FOR COLUMNS (user_id)")
    _orders(spark, n=50, files=1, offset=10_000).drop("flag").write.mode("append").parquet(path)
    d = _describe(spark, "dx", extended=True)
    assert d["files_new_or_changed"] == "1" and d["files_deleted"] == "0" and d["damage"] == "none"
    plain = _describe(spark, "dx")
    assert plain == {k: v for k, v in d.items() if k not in ("files_new_or_changed", "files_deleted")}
    moved = str(tmp_path / "dx_moved")
    os.rename(path, moved)
    try:
        assert _describe(spark, "dx") == plain, "the source is not read"
        with pytest.raises(Exception, match="dx"):
            _describe(spark, "dx", extended=True)
    finally:
        os.rename(moved, path)


def test_refresh_with_nothing_to_do_commits_nothing(spark, root, tmp_path):
    path = str(tmp_path / "noop")
    _orders(spark, n=300, files=3).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX noop ON parquet.`{path}` FOR COLUMNS (user_id)")
    before = log_entries(root, "noop")
    assert [e["state"] for e in before] == ["CREATING", "ACTIVE"]
    spark.sql("REFRESH BLOOM INDEX noop")
    spark.sql("REFRESH BLOOM INDEX noop INCREMENTAL")
    assert log_entries(root, "noop") == before and _describe(spark, "noop")["log_version"] == "1"
    # A change is refreshed as before; FULL always rebuilds.
    _orders(spark, n=50, files=1, offset=10_000).drop("flag").write.mode("append").parquet(path)
    spark.sql("REFRESH BLOOM INDEX noop")
    d = _describe(spark, "noop")
    assert d["log_version"] == "3" and d["files_indexed"] == "4" and d["last_operation"] == "REFRESH INCREMENTAL"
    spark.sql("REFRESH BLOOM INDEX noop")
    assert _describe(spark, "noop")["log_version"] == "3"
    spark.sql("REFRESH BLOOM INDEX noop FULL")
    assert _describe(spark, "noop")["log_version"] == "5"


def test_drop_table_drops_its_indexes_and_a_deleted_folder_orphans_its_index(spark, root, tmp_path):
    spark.sql("DROP TABLE IF EXISTS life_t")
    _orders(spark, n=200, files=2).drop("flag").write.saveAsTable("life_t")
    spark.sql("CREATE BLOOM INDEX life_t_idx ON life_t FOR COLUMNS (user_id)")
    spark.sql("DROP TABLE life_t")
    assert "life_t_idx" not in [r.name for r in spark.sql("SHOW BLOOM INDEXES").collect()]
    assert log_entries(root, "life_t_idx")[-1]["state"] == "DELETED"
    assert os.listdir(os.path.join(root, "life_t_idx", "data")) == []
    # The quickstart's steps run twice in a row: the table and its index are created again.
    _orders(spark, n=200, files=2).drop("flag").write.saveAsTable("life_t")
    spark.sql("CREATE BLOOM INDEX life_t_idx ON life_t FOR COLUMNS (user_id)")
    assert _describe(spark, "life_t_idx")["state"] == "ACTIVE"
    spark.sql("DROP TABLE life_t")

    # A path source whose folder is deleted: ORPHANED, and REFRESH says to drop the index.
    path = str(tmp_path / "gone")
    _orders(spark, n=100, files=1).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX gone_idx ON parquet.`{path}` FOR COLUMNS (user_id)")
    shutil.rmtree(path)
    shown = {r.name: r.state for r in spark.sql("SHOW BLOOM INDEXES").collect()}
    assert shown["gone_idx"] == "ORPHANED"
    # DESCRIBE reads the index alone: the log's state.
    assert _describe(spark, "gone_idx")["state"] == "ACTIVE"
    with pytest.raises(AnalysisException) as e:
        spark.sql("REFRESH BLOOM INDEX gone_idx")
    assert e.value.getCondition() == "BLOOM_INDEX_ORPHANED" and "DROP BLOOM INDEX gone_idx" in str(e.value)
    assert [x["state"] for x in log_entries(root, "gone_idx")] == ["CREATING", "ACTIVE"]
    spark.sql("DROP BLOOM INDEX gone_idx")
    assert "gone_idx" not in [r.name for r in spark.sql("SHOW BLOOM INDEXES").collect()]


def _answers_then_prunes_after_refresh(spark, index, q):
    """`q` (user_id = 217 over a renamed managed table of 4 files) answers as without the index;
    after a REFRESH of `index` (its files at their new paths), it still does and `index` prunes."""
    assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217]
    spark.sql(f"REFRESH BLOOM INDEX {index}")
    assert _describe(spark, index)["files_indexed"] == "4"
    m = re.search(rf"index {index} \(log version \d+\) kept (\d)/4 files", bloomindex.BloomIndex(spark).explain(spark.sql(q)))
    assert m and int(m.group(1)) < 4
    assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217]


def test_rename_table_keeps_its_indexes(spark, root, tmp_path):
    """Issue 29: ALTER TABLE ... RENAME TO keeps the table's indexes attached under the new name;
    an external table's files keep answering at once, a managed table's (moved with the rename)
    after a REFRESH; the old name, created again, is another table."""
    spark.sql("DROP TABLE IF EXISTS ren_ext")
    spark.sql("DROP TABLE IF EXISTS ren_ext2")
    ext = str(tmp_path / "ren_ext")
    _orders(spark, n=400, files=4).drop("flag").write.parquet(ext)
    spark.sql(f"CREATE TABLE ren_ext USING parquet LOCATION '{ext}'")
    spark.sql("CREATE BLOOM INDEX ren_ext_idx ON ren_ext FOR COLUMNS (user_id)")
    spark.sql("ALTER TABLE ren_ext RENAME TO ren_ext2")
    try:
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["ren_ext_idx"][1] == "ACTIVE" and shown["ren_ext_idx"][0].endswith("ren_ext2"), shown
        assert log_entries(root, "ren_ext_idx")[-1]["operation"] == "RENAME TABLE"
        q = "SELECT user_id FROM ren_ext2 WHERE user_id = 217"
        assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217]
        m = re.search(r"index ren_ext_idx \(log version 2\) kept (\d)/4 files", bloomindex.BloomIndex(spark).explain(spark.sql(q)))
        assert m and int(m.group(1)) < 4
        spark.sql("REFRESH BLOOM INDEX ren_ext_idx")  # resolves the new name
    finally:
        spark.sql("DROP TABLE IF EXISTS ren_ext2")

    spark.sql("DROP TABLE IF EXISTS ren_m")
    spark.sql("DROP TABLE IF EXISTS ren_m2")
    _orders(spark, n=400, files=4).drop("flag").write.saveAsTable("ren_m")
    spark.sql("CREATE BLOOM INDEX ren_m_idx ON ren_m FOR COLUMNS (user_id)")
    spark.sql("ALTER TABLE ren_m RENAME TO ren_m2")
    try:
        _answers_then_prunes_after_refresh(spark, "ren_m_idx", "SELECT user_id FROM ren_m2 WHERE user_id = 217")
        # The old name, created again: another table, which the index does not answer for.
        _orders(spark, n=40, files=1).drop("flag").write.saveAsTable("ren_m")
        assert "ren_m_idx (log" not in bloomindex.BloomIndex(spark).explain(spark.sql("SELECT * FROM ren_m WHERE user_id = 3"))
    finally:
        spark.sql("DROP TABLE IF EXISTS ren_m")
        spark.sql("DROP TABLE IF EXISTS ren_m2")


def test_a_rename_during_a_stopped_refresh_keeps_the_index(spark, root, tmp_path):
    """A managed table renamed while its index's newest entry is a REFRESH that stopped before its
    commit (or is still running): the index follows the table from its last ACTIVE version, as
    from an ACTIVE one, instead of staying on the old name, ORPHANED, once the refresh is over.
    A still-running refresh would then lose its commit to the rename (tests/test_reliability.py's
    takeover rules)."""
    for t in ("ren_r", "ren_r2"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    _orders(spark, n=400, files=4).drop("flag").write.saveAsTable("ren_r")
    spark.sql("CREATE BLOOM INDEX ren_r_idx ON ren_r FOR COLUMNS (user_id)")
    spark.conf.set("spark.internal.bloomindex.test.failAfterDataWrite", "true")
    try:
        with pytest.raises(Exception, match="failAfterDataWrite"):
            spark.sql("REFRESH BLOOM INDEX ren_r_idx FULL")
    finally:
        spark.conf.unset("spark.internal.bloomindex.test.failAfterDataWrite")
    assert [e["state"] for e in log_entries(root, "ren_r_idx")] == ["CREATING", "ACTIVE", "REFRESHING"]
    spark.sql("ALTER TABLE ren_r RENAME TO ren_r2")
    try:
        entries = log_entries(root, "ren_r_idx")
        assert [(e["state"], e["operation"]) for e in entries[-2:]] == [("REFRESHING", "REFRESH FULL"),
                                                                         ("ACTIVE", "RENAME TABLE")]
        assert entries[-1]["data"] == entries[1]["data"], "the rename carries the last ACTIVE version's data"
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["ren_r_idx"][1] == "ACTIVE" and shown["ren_r_idx"][0].endswith("ren_r2"), shown
        _answers_then_prunes_after_refresh(spark, "ren_r_idx", "SELECT user_id FROM ren_r2 WHERE user_id = 217")
    finally:
        spark.sql("DROP BLOOM INDEX IF EXISTS ren_r_idx")
        spark.sql("DROP TABLE IF EXISTS ren_r2")


def _indexed_external_table(spark, tmp_path, names, index, n, files):
    """`names[0]`: an external Parquet table of `n` orders in `files` files, indexed on user_id as
    `index` (the other names dropped first); its folder, and the catalog behind the session."""
    for t in names:
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    ext = str(tmp_path / names[0])
    _orders(spark, n=n, files=files).drop("flag").write.parquet(ext)
    spark.sql(f"CREATE TABLE {names[0]} USING parquet LOCATION '{ext}'")
    spark.sql(f"CREATE BLOOM INDEX {index} ON {names[0]} FOR COLUMNS (user_id)")
    return ext, _behind_the_session(spark)


def _behind_the_session(spark):
    """The session's external catalog without its event listener: what another cluster sharing the
    metastore changes (no RenameTableEvent or DropTableEvent reaches this session's indexes)."""
    return spark._jsparkSession.sharedState().externalCatalog().unwrapped()


def _kept(spark, name, q):
    """(files kept, files listed) by index `name` for query `q`, or None when it did not prune."""
    m = re.search(rf"index {name} \(log version \d+\) kept (\d+)/(\d+) files", bloomindex.BloomIndex(spark).explain(spark.sql(q)))
    return (int(m.group(1)), int(m.group(2))) if m else None


def test_a_table_renamed_by_another_engine_is_followed_by_its_identity(spark, root, tmp_path):
    """Issue 29: a session catalog table renamed where this session hears no event (another cluster
    sharing the metastore) is found again by its identity (same database, location, format and
    creation time): a query of the new name follows it (pruned, same answers as with pruning off), as
    do SHOW, DESCRIBE and REFRESH. A second table over the same folder is never taken for it, and
    two tables with the same identity are not followed (ORPHANED, DESCRIBE says why)."""
    names = ["fol_a", "fol_b", "fol_c", "fol_d", "fol_e", "fol_twin"]
    ext, other = _indexed_external_table(spark, tmp_path, names, "fol_idx", n=400, files=4)
    try:
        # Renamed behind the session's back; the first query of the new name follows it.
        other.renameTable("default", "fol_a", "fol_b")
        assert [x["operation"] for x in log_entries(root, "fol_idx")] == ["CREATE", "CREATE"]  # nothing heard
        q = "SELECT user_id, email FROM fol_b WHERE user_id = 217"
        assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217]
        kept = _kept(spark, "fol_idx", q)
        assert kept is not None and kept[0] < kept[1] == 4, kept
        last = log_entries(root, "fol_idx")[-1]
        assert last["operation"] == "RENAME TABLE" and last["state"] == "ACTIVE", last
        assert last["spec"]["source"]["table"].endswith("default.fol_b"), last["spec"]["source"]
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["fol_idx"][1] == "ACTIVE" and shown["fol_idx"][0].endswith("fol_b"), shown
        assert spark.sql("REFRESH BLOOM INDEX fol_idx").head()[0] == last["version"]  # nothing new: nothing committed

        # Renamed again; now SHOW follows it (no query first), then REFRESH of new files works.
        other.renameTable("default", "fol_b", "fol_c")
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["fol_idx"][1] == "ACTIVE" and shown["fol_idx"][0].endswith("fol_c"), shown
        assert log_entries(root, "fol_idx")[-1]["spec"]["source"]["table"].endswith("default.fol_c")
        _orders(spark, n=100, files=1, offset=5000).drop("flag").write.mode("append").parquet(ext)
        spark.sql("REFRESH TABLE fol_c")
        spark.sql("REFRESH BLOOM INDEX fol_idx")
        assert _describe(spark, "fol_idx")["files_indexed"] == "5"
        q = "SELECT user_id FROM fol_c WHERE user_id IN (217, 5017)"
        assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217, 5017]
        kept = _kept(spark, "fol_idx", q)
        assert kept is not None and kept[0] < kept[1] == 5, kept

        # Renamed by DESCRIBE's turn: followed too.
        other.renameTable("default", "fol_c", "fol_d")
        d = _describe(spark, "fol_idx")
        assert d["source"].endswith("fol_d") and "orphaned" not in d, d

        # Another table over the same folder (created later: another creation time): renamed
        # again, the index's table is told from it; then dropped behind the session: the other
        # table is not the index's.
        spark.sql(f"CREATE TABLE fol_twin USING parquet LOCATION '{ext}'")
        other.renameTable("default", "fol_d", "fol_e")
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["fol_idx"][1] == "ACTIVE" and shown["fol_idx"][0].endswith("fol_e"), shown
        other.dropTable("default", "fol_e", False, False)
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["fol_idx"][1] == "ORPHANED" and shown["fol_idx"][0].endswith("fol_e"), shown
        assert "no table of database default" in _describe(spark, "fol_idx")["orphaned"]
        q = "SELECT user_id FROM fol_twin WHERE user_id = 217"
        assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [217]
        assert _kept(spark, "fol_idx", q) is None
        with pytest.raises(AnalysisException) as e:
            spark.sql("REFRESH BLOOM INDEX fol_idx")
        assert e.value.getCondition() == "BLOOM_INDEX_ORPHANED"
        assert log_entries(root, "fol_idx")[-1]["spec"]["source"]["table"].endswith("default.fol_e")
    finally:
        for t in names:
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_two_tables_with_a_renamed_tables_identity_are_not_followed(spark, root, tmp_path):
    """The index's table renamed behind the session and a copy of its catalog entry (same location,
    format and creation time) under a third name: two candidates, none followed, ORPHANED; the
    queries of either are not pruned by the index (same answers), DESCRIBE names both."""
    names = ["amb_a", "amb_b", "amb_c"]
    ext, other = _indexed_external_table(spark, tmp_path, names, "amb_idx", n=200, files=2)
    try:
        t = other.getTable("default", "amb_a")
        jvm = spark._jvm
        ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier("amb_c", t.identifier().database(), t.identifier().catalog())
        # CatalogTable.copy(identifier = amb_c): the other fields as they are (Scala's defaults).
        arity = len([m for m in t.getClass().getMethods() if m.getName().startswith("copy$default$")])
        copy = t.copy(ident, *[getattr(t, f"copy$default${i}")() for i in range(2, arity + 1)])
        assert copy.createTime() == t.createTime() and copy.location() == t.location()
        other.renameTable("default", "amb_a", "amb_b")
        other.createTable(copy, False)
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["amb_idx"][1] == "ORPHANED", shown
        why = _describe(spark, "amb_idx")["orphaned"]
        assert "2 tables" in why and "default.amb_b" in why and "default.amb_c" in why, why
        for name in ("amb_b", "amb_c"):
            q = f"SELECT user_id FROM {name} WHERE user_id = 17"
            assert [r[0] for r in assert_same_with_pruning_off(spark, lambda: spark.sql(q))] == [17]
            assert _kept(spark, "amb_idx", q) is None
        assert log_entries(root, "amb_idx")[-1]["spec"]["source"]["table"].endswith("default.amb_a")
    finally:
        for t in names:
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_truncate_table_leaves_no_index_answering_for_its_files(spark, root, tmp_path):
    """Issue 29: TRUNCATE TABLE removes the files an index covers; rows inserted after it are read
    (not covered: the index was manual), and answers stay as without the index."""
    spark.sql("DROP TABLE IF EXISTS trunc_t")
    _orders(spark, n=400, files=4).drop("flag").write.saveAsTable("trunc_t")
    spark.sql("CREATE BLOOM INDEX trunc_idx ON trunc_t FOR COLUMNS (user_id) OPTIONS (refresh = 'manual')")
    try:
        spark.sql("TRUNCATE TABLE trunc_t")
        assert assert_same_with_pruning_off(spark, lambda: spark.sql("SELECT * FROM trunc_t WHERE user_id = 217")) == []
        _orders(spark, n=400, files=2).drop("flag").write.insertInto("trunc_t")
        rows = assert_same_with_pruning_off(spark, lambda: spark.sql("SELECT user_id FROM trunc_t WHERE user_id = 217"))
        assert [r[0] for r in rows] == [217]
    finally:
        spark.sql("DROP TABLE IF EXISTS trunc_t")


def test_refresh_after_append_delete_and_overwrite_in_place(spark, root, tmp_path):
    path = str(tmp_path / "r")
    _orders(spark, n=600, files=3).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX r ON parquet.`{path}` FOR COLUMNS (user_id) OPTIONS (global = true)")
    assert _describe(spark, "r")["files_indexed"] == "3"

    # Append: new files are not indexed until a refresh, which indexes just them.
    _orders(spark, n=100, files=2, offset=10_000).drop("flag").write.mode("append").parquet(path)
    d = _describe(spark, "r", extended=True)
    assert d["files_new_or_changed"] == "2" and d["files_indexed"] == "3"
    old_rows = {row_path(r.file_path): bytes(r.filter) for r in index_rows(spark, root, "r")}
    spark.sql("REFRESH BLOOM INDEX r")
    d = _describe(spark, "r", extended=True)
    assert d["files_new_or_changed"] == "0" and d["files_indexed"] == "5"
    assert d["last_operation"] == "REFRESH INCREMENTAL"
    new_rows = {row_path(r.file_path): bytes(r.filter) for r in index_rows(spark, root, "r")}
    assert all(new_rows[p] == b for p, b in old_rows.items())  # unchanged files carried, not rebuilt
    assert_filters_hold_values(spark, root, "r", spark.read.parquet(path), {"user_id": "bigint"})

    # Delete one file, overwrite another in place with other values.
    files = sorted(p for p in os.listdir(path) if p.endswith(".parquet"))
    os.remove(os.path.join(path, files[0]))
    victim = os.path.join(path, files[1])
    tmp = str(tmp_path / "replacement")
    spark.range(50_000, 50_010).selectExpr("id AS user_id", "'x' AS email", "0L AS p", "1.0 AS amount") \
        .coalesce(1).write.parquet(tmp)
    replacement = [f for f in os.listdir(tmp) if f.endswith(".parquet")][0]
    os.replace(os.path.join(tmp, replacement), victim)
    # Hadoop's local file system checks a .crc sidecar: move the new file's along with it.
    os.replace(os.path.join(tmp, f".{replacement}.crc"), os.path.join(path, f".{files[1]}.crc"))
    d = _describe(spark, "r", extended=True)
    assert d["files_deleted"] == "1" and d["files_new_or_changed"] == "1"
    spark.sql("REFRESH BLOOM INDEX r INCREMENTAL")
    d = _describe(spark, "r", extended=True)
    assert d["files_deleted"] == "0" and d["files_new_or_changed"] == "0" and d["files_indexed"] == "4"
    assert_filters_hold_values(spark, root, "r", spark.read.parquet(path), {"user_id": "bigint"})
    rows = {row_path(r.file_path): r for r in index_rows(spark, root, "r")}
    assert bloomindex.Sbbf.deserialize(bytes(rows[row_path(victim)].filter)).might_contain(50_005, "bigint")

    spark.sql("REFRESH BLOOM INDEX r FULL")
    d = _describe(spark, "r")
    assert d["last_operation"] == "REFRESH FULL" and d["files_indexed"] == "4"
    versions = [(e["version"], e["state"]) for e in log_entries(root, "r")]
    assert [v for v, _ in versions] == list(range(len(versions)))
    assert [s for _, s in versions] == ["CREATING", "ACTIVE"] + ["REFRESHING", "ACTIVE"] * 3
    # Replaced versions' data stays for the retention (spark.bloomindex.vacuum.retention, 1 hour:
    # queries planned on them may still read it); VACUUM ... RETAIN 0 HOURS keeps only what the
    # live version reads (a FULL refresh keeps no earlier probe file: its own folder).
    active = [e["data"] for e in log_entries(root, "r") if e["state"] == "ACTIVE"]
    data_dir = os.path.join(root, "r", "data")
    assert sorted(os.listdir(data_dir)) == sorted(d["dir"].split("/")[1] for d in active)
    assert "reused" not in active[-1]
    [(folders, freed, entries)] = spark.sql("VACUUM BLOOM INDEX r RETAIN 0 HOURS").collect()
    assert folders == len(active) - 1 and freed > 0
    assert os.listdir(data_dir) == [active[-1]["dir"].split("/")[1]]
    # The log keeps the live version's entry and what came after its predecessor was replaced.
    assert entries > 0 and log_entries(root, "r")[-1]["version"] == versions[-1][0]
    assert spark.sql("VACUUM BLOOM INDEX r").collect()[0] == (0, 0, 0)
    assert _describe(spark, "r")["files_indexed"] == "4"
    assert_filters_hold_values(spark, root, "r", spark.read.parquet(path), {"user_id": "bigint"})


def test_a_build_that_fails_part_way_leaves_the_previous_version_readable(spark, root, tmp_path):
    path = str(tmp_path / "f")
    _orders(spark, n=300, files=2).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX f ON parquet.`{path}` FOR COLUMNS (user_id)")
    good = sorted((row_path(r.file_path), bytes(r.filter)) for r in index_rows(spark, root, "f"))
    junk = os.path.join(path, "part-99999-junk.parquet")
    with open(junk, "wb") as out:
        out.write(b"PAR1 this is not a parquet file at all PAR1")
    with pytest.raises(Exception):
        spark.sql("REFRESH BLOOM INDEX f")
    entries = log_entries(root, "f")
    assert entries[-1]["state"] == "ACTIVE" and "rolled back" in entries[-1]["operation"]
    assert sorted((row_path(r.file_path), bytes(r.filter)) for r in index_rows(spark, root, "f")) == good
    assert _describe(spark, "f")["state"] == "ACTIVE"
    os.remove(junk)
    spark.sql("REFRESH BLOOM INDEX f")
    # The failed build's leftovers are gone; the previous and the new version remain.
    active = [e["data"]["dir"].split("/")[1] for e in log_entries(root, "f") if e["state"] == "ACTIVE"]
    assert sorted(os.listdir(os.path.join(root, "f", "data"))) == sorted(set(active[-2:]))


def test_two_sessions_creating_the_same_index_at_once(spark, root):
    spark.sql("DROP TABLE IF EXISTS race_t")
    _orders(spark, n=2000, files=4).write.saveAsTable("race_t")
    sessions = [spark.newSession() for _ in range(2)]
    for s in sessions:
        s.conf.set("spark.bloomindex.root", root)
    outcomes = []

    def run(s):
        try:
            s.sql("CREATE BLOOM INDEX race ON race_t FOR COLUMNS (user_id)")
            outcomes.append("ok")
        except AnalysisException as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=run, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1, outcomes
    loser = [o for o in outcomes if o != "ok"][0]
    assert "already exists" in loser or "another command committed" in loser
    entries = log_entries(root, "race")
    assert [e["version"] for e in entries] == list(range(len(entries)))
    assert entries[-1]["state"] == "ACTIVE"
    assert _describe(spark, "race")["files_indexed"] == str(len(table_files(spark, "race_t")))


def test_databricks_forms(spark, root):
    spark.sql("DROP TABLE IF EXISTS dbx")
    _orders(spark, n=300, files=2).write.saveAsTable("dbx")
    spark.sql("CREATE BLOOMFILTER INDEX ON TABLE dbx FOR COLUMNS (user_id OPTIONS (fpp = 0.1, numItems = 5000), email)")
    shown = {r.columns: r.name for r in spark.sql("SHOW BLOOM INDEXES ON dbx").collect()}
    assert set(shown) == {"user_id", "email"}
    d = _describe(spark, shown["user_id"])
    assert d["column.user_id.fpp"] == "0.1" and d["column.user_id.ndv"] == "5000"
    for r in index_rows(spark, root, shown["user_id"]):
        assert bloomindex.Sbbf.deserialize(bytes(r.filter)).num_bytes == bloomindex.optimal_num_bytes(
            5000, 0.1, power_of_two=False)
    with pytest.raises(AnalysisException, match="already has a Bloom filter index"):
        spark.sql("CREATE BLOOMFILTER INDEX ON dbx FOR COLUMNS (email)")
    spark.sql("DROP BLOOMFILTER INDEX ON TABLE dbx FOR COLUMNS (user_id)")
    assert [r.columns for r in spark.sql("SHOW BLOOM INDEXES ON dbx").collect()] == ["email"]
    spark.sql("DROP BLOOMFILTER INDEX ON dbx")
    assert spark.sql("SHOW BLOOM INDEXES ON dbx").count() == 0
    with pytest.raises(AnalysisException, match="has no Bloom filter index"):
        spark.sql("DROP BLOOMFILTER INDEX ON dbx")


def test_a_log_entry_from_a_future_version_is_refused(spark, root, tmp_path):
    path = str(tmp_path / "fv")
    _orders(spark, n=50, files=1).drop("flag").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX fv ON parquet.`{path}` FOR COLUMNS (user_id)")
    log_dir = os.path.join(root, "fv", "_log")
    last = sorted(os.listdir(log_dir))[-1]
    # The next version as a newer build would write it: sealed with its checksum (format 6 on),
    # so that it reads as a newer format and not as damage.
    entry = json.loads(open(os.path.join(log_dir, last)).read())
    entry.update(formatVersion=7, version=int(last[:20]) + 1)
    open(os.path.join(log_dir, "%020d.json" % (int(last[:20]) + 1)), "w").write(entry_text(entry))
    stored = {os.path.relpath(os.path.join(d, f), os.path.join(root, "fv")): open(os.path.join(d, f), "rb").read()
              for d, _, fs in os.walk(os.path.join(root, "fv")) for f in fs}
    # Every command refuses it by name, with what this build reads; none writes anything.
    for stmt in ["REFRESH BLOOM INDEX fv", "REFRESH BLOOM INDEX fv FULL", "DESCRIBE BLOOM INDEX fv",
                 "DESCRIBE BLOOM INDEX EXTENDED fv", "DROP BLOOM INDEX fv", "DROP BLOOM INDEX IF EXISTS fv",
                 "VACUUM BLOOM INDEX fv", "ALTER BLOOM INDEX fv SET OPTIONS (refresh = 'manual')",
                 f"CREATE BLOOM INDEX fv ON parquet.`{path}` FOR COLUMNS (email)"]:
        with pytest.raises(AnalysisException) as e:
            spark.sql(stmt).collect()
        assert e.value.getCondition() == "BLOOM_INDEX_NEWER_FORMAT", (stmt, str(e.value))
        assert "'fv'" in str(e.value) and "format version 7" in str(e.value), (stmt, str(e.value))
    # SHOW lists it, by name, with what this build can say of it.
    shown = [r.asDict() for r in spark.sql("SHOW BLOOM INDEXES").collect() if r.name == "fv"]
    assert shown == [dict(name="fv", source="", columns="", state="NEWER_FORMAT", version=int(last[:20]) + 1,
                          files_indexed=0, bytes=0)], shown
    assert [r.state for r in bloomindex.BloomIndex(spark).list().collect() if r.name == "fv"] == ["NEWER_FORMAT"]
    # Queries do not use it, and answer as without it.
    q = lambda: spark.read.parquet(path).where("user_id = 7")
    assert assert_same_with_pruning_off(spark, q) == sorted(q().collect()) and len(q().collect()) == 1
    assert "no Bloom index for this source" in bloomindex.BloomIndex(spark).explain(q())
    after = {os.path.relpath(os.path.join(d, f), os.path.join(root, "fv")): open(os.path.join(d, f), "rb").read()
             for d, _, fs in os.walk(os.path.join(root, "fv")) for f in fs}
    assert after == stored


def test_databricks_forms_on_tables_of_one_name_in_two_databases(spark, root):
    """Index names come from the table's own name and the column's: two databases' `events`, and
    columns `a b` and `a_b`, would share one. Each index is created (under a name with a hash
    where the plain one is taken) and DROP BLOOMFILTER INDEX finds it by table and column."""
    for db in ("dbx_one", "dbx_two"):
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
        spark.sql(f"CREATE DATABASE {db}")
        _orders(spark, n=300, files=2).withColumnRenamed("email", "a b").withColumn("a_b", F.col("user_id") * 3) \
            .write.saveAsTable(f"{db}.events")
    try:
        spark.sql("CREATE BLOOMFILTER INDEX ON dbx_one.events FOR COLUMNS (user_id, `a b`, a_b)")
        spark.sql("CREATE BLOOMFILTER INDEX ON TABLE dbx_two.events FOR COLUMNS (user_id)")
        one = {r.columns: r.name for r in spark.sql("SHOW BLOOM INDEXES ON dbx_one.events").collect()}
        two = {r.columns: r.name for r in spark.sql("SHOW BLOOM INDEXES ON dbx_two.events").collect()}
        assert set(one) == {"user_id", "a b", "a_b"} and set(two) == {"user_id"}, (one, two)
        assert len(set(one.values()) | set(two.values())) == 4
        for db in ("dbx_one", "dbx_two"):
            q = lambda: spark.sql(f"SELECT user_id FROM {db}.events WHERE user_id = 217")
            assert [r[0] for r in assert_same_with_pruning_off(spark, q)] == [217]
            m = re.search(r"kept (\d)/2 files", bloomindex.BloomIndex(spark).explain(q()))
            assert m and int(m.group(1)) < 2, db
        with pytest.raises(AnalysisException, match="already has a Bloom filter index"):
            spark.sql("CREATE BLOOMFILTER INDEX ON dbx_two.events FOR COLUMNS (a_b, user_id)")
        assert spark.sql("SHOW BLOOM INDEXES ON dbx_two.events").count() == 1, "nothing created by a refused statement"
        spark.sql("DROP BLOOMFILTER INDEX ON dbx_two.events FOR COLUMNS (user_id)")
        assert spark.sql("SHOW BLOOM INDEXES ON dbx_two.events").count() == 0
        assert {r.columns for r in spark.sql("SHOW BLOOM INDEXES ON dbx_one.events").collect()} == {"user_id", "a b", "a_b"}
        spark.sql("DROP BLOOMFILTER INDEX ON dbx_one.events")
        assert spark.sql("SHOW BLOOM INDEXES ON dbx_one.events").count() == 0
    finally:
        for db in ("dbx_one", "dbx_two"):
            spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def test_the_statements_a_connect_client_uses(spark, root, tmp_path):
    """ON VIEW, ON LOCATION ... USING, EXPLAIN BLOOM INDEX FOR, and the rows CREATE / REFRESH /
    DROP return (what BloomIndex runs on a Spark Connect session)."""
    path = str(tmp_path / "t")
    spark.range(0, 400, numPartitions=4).selectExpr("id", "cast(id AS string) AS s").write.parquet(path)
    spark.read.parquet(path).where("id > 0").createOrReplaceTempView("t_view")
    assert spark.sql("CREATE BLOOM INDEX by_view ON VIEW t_view FOR COLUMNS (id)").collect() == [(True,)]
    spark.catalog.dropTempView("t_view")
    # The index is of the files the view read, not of the view.
    assert _describe(spark, "by_view")["source"] == f"parquet.`file:{path}`"
    assert spark.sql(f"CREATE BLOOM INDEX by_loc ON LOCATION '{path}' USING PARQUET FOR COLUMNS (s) "
                     "OPTIONS ('fpp' = '0.05')").collect() == [(True,)]
    assert spark.sql(f"CREATE BLOOM INDEX IF NOT EXISTS by_loc ON LOCATION '{path}' USING parquet "
                     "FOR COLUMNS (s)").collect() == [(False,)]
    assert _describe(spark, "by_loc")["column.s.fpp"] == "0.05"
    with pytest.raises(AnalysisException) as e:
        spark.sql(f"CREATE BLOOM INDEX x ON LOCATION '{path}' USING xml FOR COLUMNS (s)")
    assert e.value.getCondition() == "BLOOM_INDEX_UNSUPPORTED_FORMAT"
    with pytest.raises(AnalysisException) as e:
        spark.sql("CREATE BLOOM INDEX x ON VIEW no_such_view FOR COLUMNS (s)")
    assert not spark.sql("SHOW BLOOM INDEXES").where("name = 'x'").collect()

    [row] = spark.sql(f"EXPLAIN BLOOM INDEX FOR SELECT * FROM parquet.`{path}` WHERE id = 123").collect()
    assert "index by_view (log version 1) kept 1/4 files, skipped 3 files" in row.plan, row.plan
    assert row.plan == bloomindex.BloomIndex(spark).explain(spark.read.parquet(path).where("id = 123"))
    with pytest.raises(AnalysisException):
        spark.sql("EXPLAIN BLOOM INDEX FOR SELECT * FROM no_such_table")

    [(version,)] = spark.sql("REFRESH BLOOM INDEX by_loc FULL").collect()
    assert version == int(_describe(spark, "by_loc")["log_version"]) and version > 1
    assert spark.sql("DROP BLOOM INDEX by_view").collect() == [(True,)]
    assert spark.sql("DROP BLOOM INDEX IF EXISTS by_view").collect() == [(False,)]
