"""Bloom indexes on Delta Lake tables: indexed from the log's snapshot, pruning Delta scans
(after Delta's own data skipping) and staying correct across appends, deletes (with and
without deletion vectors), UPDATE / MERGE rewrites, OPTIMIZE and time travel."""

from __future__ import annotations

import random
import re

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import Row, types as T

from bloomindex import BloomIndex

# Only where delta-spark supports the installed PySpark (tests/conftest.py).
pytestmark = pytest.mark.delta

SCHEMA = T.StructType([T.StructField("k", T.LongType()), T.StructField("s", T.StringType()),
                       T.StructField("v", T.IntegerType())])
FILES = 8
ROWS_PER_FILE = 40


def _rows(keys: list[int]) -> list:
    return [Row(k, f"s{k}", k % 7) for k in keys]


def _write(spark, path: str, keys: list[int], mode: str = "overwrite", files: int = FILES, **props) -> None:
    """Key i of `keys` goes to file i % files, so every file's min/max spans nearly the whole key
    range and Delta's own data skipping keeps every file on a point lookup of a key away from
    the ends: only the Bloom index skips."""

    df = (spark.createDataFrame([(i % files, *r) for i, r in enumerate(_rows(keys))],
                                T.StructType([T.StructField("__f", T.IntegerType())] + SCHEMA.fields))
          .repartitionByRange(files, "__f").sortWithinPartitions("k").drop("__f"))
    writer = df.write.format("delta").mode(mode)
    for k, v in props.items():
        writer = writer.option(k, v)
    writer.save(path)


def _describe(spark, name: str, extended: bool = False) -> dict:
    sql = f"DESCRIBE BLOOM INDEX {'EXTENDED ' if extended else ''}{name}"
    return {r.info_name: r.info_value for r in spark.sql(sql).collect()}


def _run(spark, sql: str, pruning: bool) -> tuple[list, tuple[int, int] | None]:
    """The sorted answer, and (files kept, files Delta would read) from the executed plan."""
    spark.conf.set("spark.bloomindex.pruning.enabled", str(pruning).lower())
    try:
        df = spark.sql(sql)
        rows = sorted(df.collect(), key=repr)
        plan = df._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    m = re.search(r"bloomindex://[\w-]+/kept-(\d+)-of-(\d+)", plan)
    return rows, (int(m.group(1)), int(m.group(2))) if m else None


def _same(spark, sql: str) -> tuple[int, int] | None:
    on, kept = _run(spark, sql, True)
    off, none = _run(spark, sql, False)
    assert on == off, sql
    assert none is None
    return kept


def _queries(table: str, keys: list[int]) -> list[str]:
    """Two queries over `keys`, pruned differently (kept few: every step of a Delta test pays a
    planning and a scan per query, twice)."""
    return [f"SELECT * FROM {table} WHERE s = 's{keys[1]}' OR k = {keys[-1]}",
            f"SELECT k, v FROM {table} WHERE k IN ({', '.join(map(str, keys))}, -5) AND v >= 0"]


@pytest.fixture()
def delta_path(tmp_path):
    return str(tmp_path / "delta_t")


def test_index_on_a_delta_path_prunes_a_point_lookup(spark, root, delta_path):
    _write(spark, delta_path, [k for k in range(FILES * ROWS_PER_FILE + 1) if k != 100])
    t = f"delta.`{delta_path}`"
    spark.sql(f"CREATE BLOOM INDEX d_idx ON {t} FOR COLUMNS (k, s) OPTIONS (fpp = 0.001)")
    d = _describe(spark, "d_idx", extended=True)
    assert d["format"] == "delta"
    assert d["table_version"] == "0" and d["table_current_version"] == "0"
    assert d["files_indexed"] == str(FILES)
    assert d["files_new_or_changed"] == "0" and d["files_deleted"] == "0"
    # Delta's own skipping keeps every file (each spans the key range); the index keeps one.
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 17") == (1, FILES)
    assert _same(spark, f"SELECT * FROM {t} WHERE s = 's123'") == (1, FILES)
    # Absent inside every file's range: Delta keeps all files, the index none.
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 100") == (0, FILES)
    # Outside every file's range: Delta's skipping alone leaves nothing to prune.
    assert _same(spark, f"SELECT * FROM {t} WHERE k = -1") == (0, 0)
    # The DataFrame reader form of the same table is pruned by the same index.
    spark.conf.set("spark.bloomindex.pruning.enabled", "true")
    try:
        df = spark.read.format("delta").load(delta_path).where("k = 42")
        assert [r.k for r in df.collect()] == [42]
        assert "kept-1-of-8" in df._jdf.queryExecution().executedPlan().toString()
        # BloomIndex.explain reports the Delta scan's pruning before anything runs.
        report = BloomIndex(spark).explain(spark.read.format("delta").load(delta_path).where("k = 42"))
        assert f"index d_idx (log version 1) kept 1/{FILES} files" in report, report
        # A self-join: each side is reported with its own scan's filters.
        report = BloomIndex(spark).explain(spark.sql(
            f"SELECT a.k FROM {t} a JOIN {t} b ON a.v = b.v WHERE a.k = 42 AND b.k = 100"))
        assert f"kept 1/{FILES} files" in report and f"kept 0/{FILES} files" in report, report
        spark.conf.set("spark.bloomindex.pruning.enabled", "false")
        report = BloomIndex(spark).explain(spark.read.format("delta").load(delta_path).where("k = 42"))
        assert "not pruned: pruning is off (spark.bloomindex.pruning.enabled)" in report, report
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    for q in _queries(t, [0, 5, 77, 200, 319]):
        _same(spark, q)


def test_delta_data_skipping_still_applies_under_the_index(spark, root, delta_path):
    # Sorted keys: Delta's min/max statistics alone narrow a lookup to one file.
    spark.createDataFrame(_rows(list(range(400))), SCHEMA).repartitionByRange(FILES, "k") \
        .write.format("delta").save(delta_path)
    t = f"delta.`{delta_path}`"
    spark.sql(f"CREATE BLOOM INDEX skip_idx ON {t} FOR COLUMNS (k) OPTIONS (fpp = 0.001)")
    # Of the one file Delta keeps, the index keeps it (the key is there) ...
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 17") == (1, 1)
    # ... and for a key inside that file's range but absent, skips it.
    spark.sql(f"DELETE FROM {t} WHERE k = 18")
    spark.sql(f"REFRESH BLOOM INDEX skip_idx")
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 18") == (0, 1)


def test_catalog_table_and_databricks_forms(spark, root):
    spark.sql("DROP TABLE IF EXISTS delta_cat")
    spark.sql("CREATE TABLE delta_cat (k BIGINT, s STRING, v INT) USING delta")
    keys = list(range(200))
    random.Random(3).shuffle(keys)
    spark.createDataFrame(_rows(keys), SCHEMA).repartition(4).write.format("delta").mode("append") \
        .saveAsTable("delta_cat")
    try:
        spark.sql("CREATE BLOOMFILTER INDEX ON TABLE delta_cat FOR COLUMNS (k OPTIONS (fpp = 0.01))")
        names = [r[0] for r in spark.sql("SHOW BLOOM INDEXES").collect()]
        assert "bloomfilter_delta_cat_k" in names
        d = _describe(spark, "bloomfilter_delta_cat_k")
        assert d["format"] == "delta" and d["files_indexed"] == "4" and d["table_version"] == "1"
        assert _same(spark, "SELECT * FROM delta_cat WHERE k = 150") == (1, 4)
        # The same table through its path uses the same index.
        location = spark.sql("DESCRIBE DETAIL delta_cat").head().location
        assert _same(spark, f"SELECT * FROM delta.`{location}` WHERE k = 150") == (1, 4)
        spark.sql("DROP BLOOMFILTER INDEX ON TABLE delta_cat FOR COLUMNS (k)")
        assert _same(spark, "SELECT * FROM delta_cat WHERE k = 150") is None
    finally:
        spark.sql("DROP TABLE IF EXISTS delta_cat")


def test_a_catalog_table_renamed_by_another_engine_is_followed(spark, root, delta_path):
    """A Delta catalog table (external) renamed where this session hears no event (another cluster
    sharing the metastore: the session's external catalog without its listener): the folder is the
    table, so queries of the new name are pruned at once, and SHOW follows the name (one RENAME
    TABLE entry: the one Delta table of the database at the index's folder); REFRESH works."""
    for t in ("dren_a", "dren_b"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    keys = list(range(FILES * ROWS_PER_FILE))
    random.Random(5).shuffle(keys)
    _write(spark, delta_path, keys)
    spark.sql(f"CREATE TABLE dren_a USING delta LOCATION '{delta_path}'")
    try:
        spark.sql("CREATE BLOOM INDEX dren_idx ON dren_a FOR COLUMNS (k)")
        spark._jsparkSession.sharedState().externalCatalog().unwrapped().renameTable("default", "dren_a", "dren_b")
        assert _same(spark, f"SELECT * FROM dren_b WHERE k = {keys[7]}") == (1, FILES)
        shown = {r.name: (r.source, r.state) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
        assert shown["dren_idx"][1] == "ACTIVE" and shown["dren_idx"][0].endswith("default.dren_b"), shown
        d = _describe(spark, "dren_idx")
        assert d["last_operation"] == "RENAME TABLE" and d["source"].endswith("dren_b"), d
        _write(spark, delta_path, [10_000, 10_001], mode="append", files=1)
        spark.sql("REFRESH BLOOM INDEX dren_idx")
        assert _describe(spark, "dren_idx")["files_indexed"] == str(FILES + 1)
        assert _same(spark, f"SELECT * FROM dren_b WHERE k IN ({keys[9]}, 10001)") == (2, FILES + 1)
    finally:
        for t in ("dren_a", "dren_b"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_differential_across_commits_refresh_and_time_travel(spark, root, delta_path):
    """Deletion vectors on: DELETE / UPDATE / MERGE mark rows in files the index holds."""
    deletion_vectors = True
    keys = list(range(FILES * ROWS_PER_FILE))
    _write(spark, delta_path, keys)
    t = f"delta.`{delta_path}`"
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{str(deletion_vectors).lower()}')")
    spark.sql(f"CREATE BLOOM INDEX dd_idx ON {t} FOR COLUMNS (k, s) OPTIONS (fpp = 0.001)")
    indexed_version = int(_describe(spark, "dd_idx")["table_version"])
    assert indexed_version == 1
    probe = [13, 64, 150, 250, 301]
    for q in _queries(t, probe):
        _same(spark, q)
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 64") == (1, FILES)

    # Append: the new file is not in the index and is read; the old files are still pruned.
    _write(spark, delta_path, [1000, 1001, 64], mode="append", files=1)
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 1000") == (1, 1)  # Delta skips the old files
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 64") == (2, FILES + 1)
    for q in _queries(t, probe + [1000, 1001]):
        _same(spark, q)

    # DELETE (a rewrite, or a deletion vector on the same file), UPDATE and MERGE.
    spark.sql(f"DELETE FROM {t} WHERE k IN (13, 150)")
    for q in _queries(t, probe):
        _same(spark, q)
    spark.sql(f"UPDATE {t} SET k = k + 5000, s = concat(s, 'u') WHERE k = 250")
    for q in _queries(t, probe + [5250]) + [f"SELECT * FROM {t} WHERE s = 's250u'"]:
        _same(spark, q)
    spark.createDataFrame(_rows([301, 7000]), SCHEMA).createOrReplaceTempView("delta_src")
    spark.sql(f"""MERGE INTO {t} AS d USING delta_src AS src ON d.k = src.k
                  WHEN MATCHED THEN UPDATE SET v = -1
                  WHEN NOT MATCHED THEN INSERT *""")
    for q in _queries(t, probe + [7000]) + [f"SELECT * FROM {t} WHERE k = 301 AND v = -1"]:
        _same(spark, q)
    assert len(spark.sql(f"SELECT * FROM {t} WHERE k = 301 AND v = -1").collect()) == 1

    # OPTIMIZE rewrites everything into new files: none is indexed, all are read.
    spark.sql(f"OPTIMIZE {t}")
    latest = spark.sql(f"DESCRIBE HISTORY {t} LIMIT 1").head().version
    kept = _same(spark, f"SELECT * FROM {t} WHERE k = 64")
    assert kept is not None and kept[0] == kept[1]
    d = _describe(spark, "dd_idx", extended=True)
    assert d["table_version"] == str(indexed_version) and d["table_current_version"] == str(latest)
    assert int(d["files_deleted"]) > 0 and int(d["files_new_or_changed"]) > 0

    # Time travel to the indexed version: its files are all indexed and pruned.
    assert _same(spark, f"SELECT * FROM {t} VERSION AS OF {indexed_version} WHERE k = 64") == (1, FILES)
    for v in (indexed_version, indexed_version + 2, latest - 1):
        for q in _queries(f"{t} VERSION AS OF {v}", probe + [1000, 5250, 7000]):
            _same(spark, q)
    ts = spark.sql(f"DESCRIBE HISTORY {t}").where(f"version = {indexed_version + 1}").head().timestamp
    for q in _queries(f"{t} TIMESTAMP AS OF '{ts}'", probe + [1000]):
        _same(spark, q)
    assert _same(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{ts}' WHERE k = 64") == (2, FILES + 1)

    # REFRESH: indexes the files added since, drops the removed ones, records the version.
    spark.sql("REFRESH BLOOM INDEX dd_idx")
    d = _describe(spark, "dd_idx", extended=True)
    assert d["table_version"] == str(latest)
    assert d["files_new_or_changed"] == "0" and d["files_deleted"] == "0"
    current_files = len(spark.read.format("delta").load(delta_path).inputFiles())
    assert d["files_indexed"] == str(current_files)
    for q in _queries(t, probe + [1000, 5250, 7000]):
        _same(spark, q)
    # Old versions after the refresh: their removed files are no longer indexed and are read.
    for q in _queries(f"{t} VERSION AS OF {indexed_version}", probe):
        _same(spark, q)
    kept = _same(spark, f"SELECT * FROM {t} VERSION AS OF {indexed_version} WHERE k = 64")
    assert kept is not None and kept[1] == FILES


def test_the_snapshot_not_the_folder_is_indexed(spark, root, delta_path):
    _write(spark, delta_path, list(range(100)), files=4)
    _write(spark, delta_path, list(range(100, 160)), files=2)  # overwrite: 4 files removed
    t = f"delta.`{delta_path}`"
    spark.sql(f"CREATE BLOOM INDEX snap_idx ON {t} FOR COLUMNS (k)")
    d = _describe(spark, "snap_idx")
    assert d["files_indexed"] == "2" and d["table_version"] == "1"
    assert _same(spark, f"SELECT * FROM {t} VERSION AS OF 0 WHERE k = 5") is not None
    assert _same(spark, f"SELECT * FROM {t} VERSION AS OF 0 WHERE k = 5") == (4, 4)
    assert _same(spark, f"SELECT * FROM {t} WHERE k = 150")[1] == 2


def test_bad_delta_sources_are_refused(spark, root, tmp_path):
    with pytest.raises(AnalysisException, match="Path does not exist"):
        spark.sql(f"CREATE BLOOM INDEX bad ON delta.`{tmp_path / 'nothing'}` FOR COLUMNS (k)")
    plain = str(tmp_path / "plain")
    spark.createDataFrame(_rows([1, 2]), SCHEMA).write.parquet(plain)
    with pytest.raises(AnalysisException, match="is not a Delta table"):
        spark.sql(f"CREATE BLOOM INDEX bad ON delta.`{plain}` FOR COLUMNS (k)")
    with pytest.raises(AnalysisException, match="does not exist"):
        spark.sql(f"CREATE BLOOM INDEX bad ON delta.`{tmp_path / 'plain'}_x` FOR COLUMNS (k)")


def test_differential_across_rewrites_without_deletion_vectors(spark, root, delta_path):
    """Deletion vectors off: DELETE and UPDATE rewrite files (new paths, not indexed, read)."""
    _write(spark, delta_path, list(range(FILES * ROWS_PER_FILE)))
    t = f"delta.`{delta_path}`"
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')")
    spark.sql(f"CREATE BLOOM INDEX rw_idx ON {t} FOR COLUMNS (k, s) OPTIONS (fpp = 0.001)")
    probe = [13, 64, 150, 250, 301]
    spark.sql(f"DELETE FROM {t} WHERE k IN (13, 150)")
    spark.sql(f"UPDATE {t} SET k = k + 5000 WHERE k = 250")
    for q in _queries(t, probe + [5250]):
        _same(spark, q)
    # Three files were rewritten: the rewrites are read, the files not rewritten still pruned.
    kept = _same(spark, f"SELECT * FROM {t} WHERE k = 64")
    assert kept is not None and 1 < kept[0] < kept[1], kept
    spark.sql("REFRESH BLOOM INDEX rw_idx")
    kept = _same(spark, f"SELECT * FROM {t} WHERE k = 64")
    assert kept is not None and kept[0] == 1, kept


def test_scans_with_deletion_vectors_are_pruned(spark, root, delta_path):
    """A DELETE that leaves deletion vectors keeps every file's filter valid (the vectors only
    remove rows): after REFRESH the scan, which now drops the deleted rows, is still pruned."""
    _write(spark, delta_path, list(range(0, 320)), **{"delta.enableDeletionVectors": "true"})
    t = f"delta.`{delta_path}`"
    spark.sql(f"CREATE BLOOM INDEX dv_idx ON {t} FOR COLUMNS (k, s)")
    spark.sql(f"DELETE FROM {t} WHERE k % 10 = 3")
    assert spark.sql(f"SELECT count(*) FROM {t}").first()[0] == 288
    dv = spark.sql(f"DESCRIBE DETAIL {t}").first()
    for sql in (f"SELECT * FROM {t} WHERE k = 17", f"SELECT * FROM {t} WHERE k = 13",
                f"SELECT * FROM {t} WHERE s IN ('s40', 's43', 's299')"):
        kept = _same(spark, sql)
        assert kept is not None and kept[0] < kept[1], (sql, kept, dv)
    spark.sql("REFRESH BLOOM INDEX dv_idx")
    for sql in (f"SELECT * FROM {t} WHERE k = 17", f"SELECT k FROM {t} WHERE k IN (13, 27, 311)"):
        kept = _same(spark, sql)
        assert kept is not None and kept[0] < kept[1], (sql, kept)
        # BloomIndex.explain reads the same decision.
        assert re.search(r"index dv_idx \(log version \d+\) kept \d+/\d+ files", BloomIndex(spark).explain(spark.sql(sql))), \
            BloomIndex(spark).explain(spark.sql(sql))


def test_full_refresh_after_type_widening(spark, root, delta_path):
    """An index built on INT and FLOAT columns, then the columns widened to BIGINT and DOUBLE
    (Delta type widening): REFRESH ... FULL builds the index under the new types."""
    # Row i in file i % 4: every file's min and max span the table, so only the index skips.
    spark.createDataFrame([(i % 4, i, i, float(i) / 4) for i in range(200)], "f4 INT, k BIGINT, v INT, f FLOAT") \
        .repartitionByRange(4, "f4").drop("f4").write.format("delta") \
        .option("delta.enableTypeWidening", "true").save(delta_path)
    t = f"delta.`{delta_path}`"
    spark.sql(f"CREATE BLOOM INDEX widen_idx ON {t} FOR COLUMNS (v, f)")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN v TYPE BIGINT")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE")
    spark.createDataFrame([(1000, 3_000_000_000, 1e300)], "k BIGINT, v BIGINT, f DOUBLE") \
        .write.format("delta").mode("append").save(delta_path)
    with pytest.raises(AnalysisException):
        spark.sql("REFRESH BLOOM INDEX widen_idx")
    spark.sql("REFRESH BLOOM INDEX widen_idx FULL")
    d = _describe(spark, "widen_idx")
    for sql in (f"SELECT * FROM {t} WHERE v = 3000000000", f"SELECT * FROM {t} WHERE v = 17",
                f"SELECT * FROM {t} WHERE f = 1e300", f"SELECT * FROM {t} WHERE f = 2.25"):
        _same(spark, sql)
    assert d["state"] == "ACTIVE"
    for sql in (f"SELECT * FROM {t} WHERE v = 17", f"SELECT * FROM {t} WHERE f = 2.25"):
        kept = _same(spark, sql)
        assert kept is not None and kept[0] < kept[1], (sql, kept)


# ---------------------------------------------------------------- column mapping


def _mapped_table(spark, path: str, mode: str, keys: list[int]) -> str:
    """A Delta table with column mapping `mode` from its creation, `keys` in FILES files."""
    t = f"delta.`{path}`"
    spark.sql(f"""CREATE TABLE {t} (k BIGINT, s STRING, v INT) USING delta
                  TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}', 'delta.minReaderVersion' = '2',
                                 'delta.minWriterVersion' = '5', 'delta.enableDeletionVectors' = 'false')""")
    _write(spark, path, keys, mode="append")
    return t


def _file_columns(spark, path: str) -> set[str]:
    """The column names the table's Parquet files store (Delta's physical names under column mapping)."""
    return set(spark.read.parquet(*[f for f in spark.read.format("delta").load(path).inputFiles()]).columns)


def _kept_one(spark, sql: str) -> None:
    kept = _same(spark, sql)
    assert kept is not None and kept[0] == 1, (sql, kept)


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_tables_are_indexed_and_follow_renames(spark, root, delta_path, mode):
    """Column mapping: the files store each column under its physical name (and, in id mode,
    field id), which the build reads as Delta does. The index prunes; after `RENAME COLUMN k TO
    key` it answers under the new name, and REFRESH indexes new files under the column's physical
    identity (one key per file: each lookup keeps exactly 1 file, with the index on and off
    answering the same)."""
    t = _mapped_table(spark, delta_path, mode, list(range(FILES * ROWS_PER_FILE)))
    stored = _file_columns(spark, delta_path)
    assert not stored & {"k", "s", "v"}, stored  # physical names only: a read by name would see nulls
    spark.sql(f"CREATE BLOOM INDEX cm_idx ON {t} FOR COLUMNS (k, s)")
    for sql in (f"SELECT * FROM {t} WHERE k = 17", f"SELECT * FROM {t} WHERE s = 's250'"):
        _kept_one(spark, sql)

    spark.sql(f"ALTER TABLE {t} RENAME COLUMN k TO key")
    _kept_one(spark, f"SELECT * FROM {t} WHERE key = 17")
    assert "index cm_idx " in BloomIndex(spark).explain(spark.sql(f"SELECT * FROM {t} WHERE key = 17"))
    # New files, written under the new name: REFRESH builds them from the same physical column.
    spark.createDataFrame([(i, f"s{i}", i % 7) for i in range(1000, 1080)], "key BIGINT, s STRING, v INT") \
        .repartition(2).write.format("delta").mode("append").save(delta_path)
    spark.sql("REFRESH BLOOM INDEX cm_idx")
    d = _describe(spark, "cm_idx")
    assert d["state"] == "ACTIVE" and d["files_indexed"] == str(FILES + 2), d
    for key in (17, 1001, 1079):
        _kept_one(spark, f"SELECT * FROM {t} WHERE key = {key}")
    _kept_one(spark, f"SELECT * FROM {t} WHERE s = 's1042'")
    for q in (f"SELECT * FROM {t} WHERE s = 's64' OR key = 1003",
              f"SELECT key, v FROM {t} WHERE key IN (13, 64, 150, 1003, -5) AND v >= 0"):
        _same(spark, q)


def test_column_mapping_drop_and_readd_is_not_answered_by_old_filters(spark, root, delta_path):
    """A column dropped and added again under column mapping is another physical column: the
    index's filters of the old one never answer for it, an incremental REFRESH is refused, and
    REFRESH ... FULL builds the new column."""
    t = _mapped_table(spark, delta_path, "name", list(range(FILES * ROWS_PER_FILE)))
    spark.sql(f"CREATE BLOOM INDEX cm_drop ON {t} FOR COLUMNS (k, s)")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN s")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (s STRING)")
    # The new s: the old values again, in a new file, and nulls in the old files.
    spark.createDataFrame([(i, f"s{i}", i % 7) for i in range(0, 40)], "k BIGINT, s STRING, v INT") \
        .coalesce(1).write.format("delta").mode("append").save(delta_path)
    sql = f"SELECT * FROM {t} WHERE s = 's17'"
    kept = _same(spark, sql)
    assert kept is None or kept[0] == kept[1], kept
    assert "another physical column" in BloomIndex(spark).explain(spark.sql(sql))
    assert len(spark.sql(sql).collect()) == 1
    with pytest.raises(AnalysisException, match="physical column"):
        spark.sql("REFRESH BLOOM INDEX cm_drop")
    # k still answers from the same index.
    _kept_one(spark, f"SELECT * FROM {t} WHERE k = 250")
    spark.sql("REFRESH BLOOM INDEX cm_drop FULL")
    _kept_one(spark, sql)
    _kept_one(spark, f"SELECT * FROM {t} WHERE k = 250")


def test_column_mapping_rename_then_readd_under_the_old_name(spark, root, delta_path):
    """k renamed to key, then a new column k added: the index's k answers for key (its physical
    column) and never for the new k; an incremental REFRESH builds key's new files as k."""
    t = _mapped_table(spark, delta_path, "name", list(range(FILES * ROWS_PER_FILE)))
    spark.sql(f"CREATE BLOOM INDEX cm_swap ON {t} FOR COLUMNS (k)")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN k TO key")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (k BIGINT)")
    spark.createDataFrame([(5000 + i, i, f"s{i}", 0) for i in range(40)], "key BIGINT, k BIGINT, s STRING, v INT") \
        .coalesce(1).write.format("delta").mode("append").save(delta_path)
    spark.sql("REFRESH BLOOM INDEX cm_swap")
    assert _describe(spark, "cm_swap")["files_indexed"] == str(FILES + 1)
    _kept_one(spark, f"SELECT * FROM {t} WHERE key = 5017")
    _kept_one(spark, f"SELECT * FROM {t} WHERE key = 17")
    # The new k holds 17 in the new file only; old files hold nulls there: no index answers for it.
    sql = f"SELECT * FROM {t} WHERE k = 17"
    kept = _same(spark, sql)
    assert kept is None or kept[0] == kept[1], kept
    assert [r.key for r in spark.sql(sql).collect()] == [5017]


def test_column_mapping_on_write_refresh_after_rename(spark, root, delta_path):
    """An on_write index over a column mapping table keeps following appends after a rename."""
    t = _mapped_table(spark, delta_path, "name", list(range(FILES * ROWS_PER_FILE)))
    spark.sql(f"CREATE BLOOM INDEX cm_ow ON {t} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN k TO key")
    spark.sql(f"INSERT INTO {t} (key, s, v) VALUES (7001, 'x', 1), (7002, 'y', 2)")
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    assert spark._jvm.bloomindex.actions.WriteEvents.awaitIdle(60_000)
    d = _describe(spark, "cm_ow")
    assert "automatic_refresh_failed" not in d, d
    files = len(spark.read.format("delta").load(delta_path).inputFiles())
    assert files > FILES and d["files_indexed"] == str(files), d
    _kept_one(spark, f"SELECT * FROM {t} WHERE key = 7002")
