"""Bloom indexes on Apache Iceberg tables (issue 19): the Iceberg source provider, pruning after
Iceberg's own planning, REFRESH over snapshots, columns by field id, row-level deletes, time
travel, compaction, footer filters, the join filter and bad inputs.

Differential throughout: every query runs with pruning on and off and must return the same
rows; files-kept counts come from BloomIndex.explain and the plan's BloomIndexPruned node."""

from __future__ import annotations

import json
import glob
import os
import pathlib
import re
import sys

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from bloomindex import BloomIndex

# The helpers of the main suite (tests/), which this process does not collect.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from index_helpers import assert_icu_change_reads_what_was_skipped  # noqa: E402

FILES = 8          # data files per table (one per append)
PER_FILE = 200     # rows per file


# The index off: no file pruned, no join filter.
OFF = ("spark.bloomindex.pruning.enabled", "spark.bloomindex.joinFilter.enabled")


def _rows_off(make) -> list:
    """The rows of the DataFrame `make()` builds with the index off (the session's settings restored after)."""
    conf = make().sparkSession.conf
    before = {key: conf.get(key, None) for key in OFF}
    for key in OFF:
        conf.set(key, "false")
    try:
        return sorted(map(tuple, make().collect()), key=repr)
    finally:
        for key, value in before.items():
            conf.unset(key) if value is None else conf.set(key, value)


def _same(spark, sql: str) -> list:
    """The rows of `sql` as the session is set (the index on); asserts the same rows with the index off."""
    on = sorted(map(tuple, spark.sql(sql).collect()), key=repr)
    off = _rows_off(lambda: spark.sql(sql))
    assert on == off, sql
    return on


def _kept(spark, sql: str) -> tuple[int, int] | None:
    """(files kept, files total) of the Bloom index pruning of the query's Iceberg scan, or None."""
    report = BloomIndex(spark).explain(spark.sql(sql))
    m = re.search(r"kept (\d+)/(\d+) files", report)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _plan(spark, sql: str) -> str:
    return spark.sql(sql)._jdf.queryExecution().executedPlan().toString()


def _fill(spark, table: str, files: int = FILES, start: int = 0, partitioned: bool = False) -> None:
    """`files` appends of PER_FILE rows each (one data file per append): id, k = 'key-<id>', v."""
    for f in range(start, start + files):
        lo = f * PER_FILE
        (spark.range(lo, lo + PER_FILE, numPartitions=1)
         .selectExpr("id", "concat('key-', cast(id * 7919 % 100003 as string)) AS k", "cast(id % 13 AS int) AS v",
                     f"cast({f % 2} AS int) AS p")
         .select("id", "k", "v", *(["p"] if partitioned else []))
         .writeTo(table).append())


def _key(i: int) -> str:
    return f"key-{i * 7919 % 100003}"


def _create_table(spark, table: str, props: str = "", partitioned: bool = False) -> None:
    part = "PARTITIONED BY (p)" if partitioned else ""
    cols = "id BIGINT, k STRING, v INT" + (", p INT" if partitioned else "")
    tbl = f"TBLPROPERTIES ({props})" if props else ""
    spark.sql(f"CREATE TABLE {table} ({cols}) USING iceberg {part} {tbl}")


def _log(root: str, name: str) -> list[dict]:
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(root, name, "_log", "*.json")))]


def _snapshot_id(spark, table: str) -> int:
    return spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1").head()[0]


def _data_files(spark, table: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {table}.files WHERE content = 0").head()[0]


# ---------------------------------------------------------------- create, prune, refresh


def test_point_lookup_prunes_to_one_file(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    entry = _log(root, "ix")[-1]
    assert entry["state"] == "ACTIVE"
    assert entry["spec"]["source"]["format"] == "iceberg"
    assert entry["data"]["tableVersion"] == _snapshot_id(spark, table)
    assert entry["data"]["indexedFiles"] == FILES
    for i in (0, 777, FILES * PER_FILE - 1):
        q = f"SELECT id, k, v FROM {table} WHERE k = '{_key(i)}'"
        rows = _same(spark, q)
        assert [r[0] for r in rows] == [i]
        kept, total = _kept(spark, q)
        assert kept == 1 and total >= kept
        plan = _plan(spark, q)
        # Iceberg's own metrics may leave one file already; the index node shows when it skipped some.
        assert ("BloomIndexPruned [index=ix" in plan and f"files kept 1 of {total}" in plan) == (total > 1)
    q = f"SELECT id, k, v FROM {table} WHERE k = '{_key(777)}'"
    assert _kept(spark, q)[1] > 1, "Iceberg's min/max metrics alone should not isolate a hashed key"
    # IN lists, absent keys and a column the index does not hold.
    _same(spark, f"SELECT id FROM {table} WHERE k IN ('{_key(3)}', '{_key(1500)}', 'absent')")
    assert _kept(spark, f"SELECT id FROM {table} WHERE k IN ('{_key(3)}', '{_key(1500)}')")[0] == 2
    assert _same(spark, f"SELECT id FROM {table} WHERE k = 'absent'") == []
    assert _kept(spark, f"SELECT id FROM {table} WHERE k = 'absent'")[0] == 0
    _same(spark, f"SELECT count(*) FROM {table} WHERE v = 3")


def test_sql_metrics_count_skipped_files(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    df = spark.sql(f"SELECT id FROM {table} WHERE k = '{_key(5)}'")
    assert [r.id for r in df.collect()] == [5]
    plan = df._jdf.queryExecution().executedPlan()
    text = plan.toString()
    assert "BloomIndexPruned" in text
    metrics = {}
    nodes = [plan]
    while nodes:
        n = nodes.pop()
        ms = n.metrics()
        it = ms.iterator()
        while it.hasNext():
            kv = it.next()
            metrics[kv._1()] = kv._2().value()
        children = n.children()
        for i in range(children.size()):
            nodes.append(children.apply(i))
        if hasattr(n, "executedPlan"):
            pass
    assert metrics.get("filesKept") == 1
    assert metrics.get("filesSkipped", 0) >= 1


def test_refresh_follows_snapshots(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table, files=4)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    _fill(spark, table, files=3, start=4)
    new_key = _key(4 * PER_FILE + 10)
    q = f"SELECT id FROM {table} WHERE k = '{new_key}'"
    # New files are read until a refresh: right answer, nothing pruned among them.
    assert [r[0] for r in _same(spark, q)] == [4 * PER_FILE + 10]
    kept_before = _kept(spark, q)[0]
    assert kept_before >= 3
    spark.sql(f"REFRESH BLOOM INDEX ix")
    entry = _log(root, "ix")[-1]
    assert entry["operation"] == "REFRESH INCREMENTAL" and entry["state"] == "ACTIVE"
    assert entry["data"]["tableVersion"] == _snapshot_id(spark, table)
    assert entry["data"]["indexedFiles"] == 7
    assert _kept(spark, q)[0] == 1
    assert [r[0] for r in _same(spark, q)] == [4 * PER_FILE + 10]
    # Files a snapshot removed drop out of the index at the next refresh.
    spark.sql(f"DELETE FROM {table} WHERE id < {PER_FILE}")  # the whole first file: metadata delete
    spark.sql("REFRESH BLOOM INDEX ix")
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == _data_files(spark, table) == 6


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_changes(spark, root, table, mode):
    props = (f"'format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
             f"'write.merge.mode'='{mode}'")
    _create_table(spark, table, props)
    _fill(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k, id)")
    checks = [_key(i) for i in (1, 150, 201, 333, 650, 1001, 1599)] + ["absent", "changed-1"]

    def check():
        for k in checks:
            _same(spark, f"SELECT id, k, v FROM {table} WHERE k = '{k}'")
        for i in (1, 201, 333, 1599):
            _same(spark, f"SELECT id, k, v FROM {table} WHERE id = {i}")
        _same(spark, f"SELECT count(*) FROM {table}")

    check()
    spark.sql(f"DELETE FROM {table} WHERE id IN (150, 333)")
    check()
    assert _same(spark, f"SELECT id FROM {table} WHERE k = '{_key(333)}'") == []
    spark.sql(f"UPDATE {table} SET k = 'changed-1' WHERE id = 201")
    check()
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE k = 'changed-1'")] == [201]
    spark.createDataFrame([(650, "merged-650", 1), (99999, "merged-new", 2)], "id BIGINT, k STRING, v INT") \
        .createOrReplaceTempView("updates")
    spark.sql(f"""MERGE INTO {table} t USING updates u ON t.id = u.id
                  WHEN MATCHED THEN UPDATE SET k = u.k
                  WHEN NOT MATCHED THEN INSERT *""")
    checks.extend(["merged-650", "merged-new", _key(650)])
    check()
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE k = 'merged-650'")] == [650]
    spark.sql("REFRESH BLOOM INDEX ix")
    check()
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE k = 'merged-new'")] == [99999]
    # A point lookup of an untouched key still reads one data file.
    assert _kept(spark, f"SELECT id FROM {table} WHERE k = '{_key(1599)}'")[0] == 1


def test_compaction_reads_new_files_until_refresh(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    catalog, db, name = table.split(".")
    spark.sql(f"CALL {catalog}.system.rewrite_data_files(table => '{db}.{name}', "
              f"options => map('min-input-files', '2', 'target-file-size-bytes', '4000'))")
    q = f"SELECT id FROM {table} WHERE k = '{_key(900)}'"
    assert [r[0] for r in _same(spark, q)] == [900]
    kept = _kept(spark, q)
    # The rewritten files are not indexed: every file Iceberg plans is read.
    assert kept is None or kept[0] == kept[1]
    spark.sql("REFRESH BLOOM INDEX ix")
    assert [r[0] for r in _same(spark, q)] == [900]
    kept, total = _kept(spark, q)
    assert kept == 1 and _log(root, "ix")[-1]["data"]["indexedFiles"] == _data_files(spark, table)


def test_time_travel_prunes_only_indexed_files(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table, files=4)
    old = _snapshot_id(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    spark.sql(f"DELETE FROM {table} WHERE id < {PER_FILE}")
    _fill(spark, table, files=2, start=4)
    spark.sql("REFRESH BLOOM INDEX ix")  # now covers files 1..5, not file 0 (deleted)
    q0 = f"SELECT id FROM {table} VERSION AS OF {old} WHERE k = '{_key(5)}'"
    assert [r[0] for r in _same(spark, q0)] == [5]
    kept, total = _kept(spark, q0)
    assert total == 4 and kept == 1  # file 0 is not indexed: read; files 1-3 are, and ruled out
    q1 = f"SELECT id FROM {table} VERSION AS OF {old} WHERE k = '{_key(250)}'"
    assert [r[0] for r in _same(spark, q1)] == [250]
    assert _kept(spark, q1)[0] == 2  # file 0 (not indexed) and file 1 (holds the key)
    ts = spark.sql(f"SELECT committed_at FROM {table}.snapshots WHERE snapshot_id = {old}").head()[0]
    _same(spark, f"SELECT id FROM {table} TIMESTAMP AS OF '{ts}' WHERE k = '{_key(5)}'")
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_ICEBERG_NOT_INDEXABLE.*time travel"):
        BloomIndex(spark).create("ix_tt", spark.sql(f"SELECT * FROM {table} VERSION AS OF {old}"), ["k"])


# ---------------------------------------------------------------- schema and partition evolution


def test_rename_keeps_index_drop_and_readd_does_not(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table, files=4)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")
    spark.sql(f"CREATE BLOOM INDEX ix2 ON {table} FOR COLUMNS (key)")
    q = f"SELECT id FROM {table} WHERE key = '{_key(300)}'"
    assert [r[0] for r in _same(spark, q)] == [300]
    assert _kept(spark, q)[0] == 1  # ix2 reads the renamed column by field id from the old files
    # The old index was built from the same field under its old name: it answers under the new one.
    spark.sql("DROP BLOOM INDEX ix2")
    _same(spark, q)
    assert _kept(spark, q)[0] == 1
    assert "index ix " in BloomIndex(spark).explain(spark.sql(q))
    # Dropped and added again: same name, new field id, other values.
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN key TO k")
    spark.sql(f"CREATE BLOOM INDEX ix3 ON {table} FOR COLUMNS (k)")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN k")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN k STRING")
    spark.sql(f"INSERT INTO {table} (id, k, v) VALUES (5000, '{_key(300)}', 1)")
    q = f"SELECT id FROM {table} WHERE k = '{_key(300)}'"
    assert [r[0] for r in _same(spark, q)] == [5000]
    report = BloomIndex(spark).explain(spark.sql(q))
    assert "field id" in report  # ix3 and ix were built from the dropped column's field id
    with pytest.raises(AnalysisException, match="field id"):
        spark.sql("REFRESH BLOOM INDEX ix3")
    spark.sql("REFRESH BLOOM INDEX ix3 FULL")
    assert [r[0] for r in _same(spark, q)] == [5000]
    assert _kept(spark, q)[0] == 1


def test_type_widening(spark, root, table):
    spark.sql(f"CREATE TABLE {table} (id BIGINT, n INT) USING iceberg")
    for f in range(4):
        spark.range(f * 100, f * 100 + 100, numPartitions=1).selectExpr("id", "cast(id * 3 AS int) AS n") \
            .writeTo(table).append()
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (n)")
    q = f"SELECT id FROM {table} WHERE n = 303"
    assert [r[0] for r in _same(spark, q)] == [101]
    assert _kept(spark, q)[0] == 1
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN n TYPE BIGINT")
    spark.sql(f"INSERT INTO {table} VALUES (9000, 5000000000)")
    assert [r[0] for r in _same(spark, q)] == [101]
    assert "type differs" in BloomIndex(spark).explain(spark.sql(q))
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_SOURCE_COLUMN_TYPE_CHANGED"):
        spark.sql("REFRESH BLOOM INDEX ix")
    assert [r[0] for r in _same(spark, q)] == [101]
    # A full rebuild builds the column at its current type (BIGINT), old files included.
    spark.sql("REFRESH BLOOM INDEX ix FULL")
    assert [r[0] for r in _same(spark, q)] == [101]
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE n = 5000000000")] == [9000]
    assert _kept(spark, q)[0] == 1


def test_partition_evolution(spark, root, table):
    _create_table(spark, table, partitioned=True)
    _fill(spark, table, files=4, partitioned=True)
    spark.sql(f"ALTER TABLE {table} ADD PARTITION FIELD bucket(4, id)")
    _fill(spark, table, files=2, start=4, partitioned=True)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    for i in (10, 450, 1100, 1150):
        q = f"SELECT id, p FROM {table} WHERE k = '{_key(i)}'"
        assert [r[0] for r in _same(spark, q)] == [i]
        assert _kept(spark, q)[0] == 1
        _same(spark, f"SELECT id FROM {table} WHERE k = '{_key(i)}' AND p = 1")
    spark.sql(f"ALTER TABLE {table} DROP PARTITION FIELD p")
    _fill(spark, table, files=1, start=6, partitioned=True)
    spark.sql("REFRESH BLOOM INDEX ix")
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE k = '{_key(1250)}'")] == [1250]


def _same_df(make) -> list:
    """The rows of the DataFrame `make()` builds as the session is set; asserts the same rows with the index off."""
    on = sorted(map(tuple, make().collect()), key=repr)
    assert on == _rows_off(make)
    return on


def _first_snapshot(spark, table: str) -> tuple[int, object]:
    """The id and commit time of the table's first snapshot."""
    r = spark.sql(f"SELECT snapshot_id, committed_at FROM {table}.snapshots WHERE parent_id IS NULL").head()
    return r[0], r[1]


def test_time_travel_to_schema_with_swapped_names(spark, root, table):
    """Issue 30: a snapshot's schema may give an indexed column's name to another column (a
    and b swapped after it): a time-travelled scan reads that schema, so the index's a (today's
    field id) must not answer for the snapshot's a. A branch reads the current schema."""
    spark.sql(f"CREATE TABLE {table} (a STRING, b STRING, v INT) USING iceberg")
    # a = v<id>, b = v<id + 1000>: a file's ranges of a and b overlap (see the branch below).
    for f in range(3):
        (spark.range(f * 100, f * 100 + 100, numPartitions=1)
         .selectExpr("concat('v', id) AS a", "concat('v', id + 1000) AS b", "cast(id AS int) AS v")
         .writeTo(table).append())
    first, _ = _first_snapshot(spark, table)
    spark.sql(f"ALTER TABLE {table} CREATE TAG before_swap")
    spark.sql(f"ALTER TABLE {table} CREATE BRANCH br")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN a TO x")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN b TO a")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN x TO b")
    spark.sql(f"INSERT INTO {table} (b, a, v) VALUES ('v900', 'v1900', 900)")
    spark.sql(f"CREATE BLOOM INDEX sw_ix ON {table} FOR COLUMNS (a, b, v)")
    bi = BloomIndex(spark)
    # Today's columns in schema order: b (the first column's field id), a, v. Today's a holds
    # the old files' b values: still pruned.
    q = f"SELECT * FROM {table} WHERE a = 'v1017'"
    assert _same(spark, q) == [("v17", "v1017", 17)]
    assert _kept(spark, q)[0] == 1
    # The snapshot's a and b are today's b and a: each answered by the index column of its field
    # id (today's b for the snapshot's a), whatever the names.
    for q, rows in ((f"SELECT * FROM {table} VERSION AS OF {first} WHERE a = 'v17'", [("v17", "v1017", 17)]),
                    (f"SELECT * FROM {table} VERSION AS OF 'before_swap' WHERE b = 'v1017'", [("v17", "v1017", 17)]),
                    (f"SELECT * FROM {table} VERSION AS OF 'before_swap' WHERE a = 'v217' OR b = 'v1005'",
                     [("v217", "v1217", 217), ("v5", "v1005", 5)])):
        assert sorted(_same(spark, q)) == rows, q
        kept = _kept(spark, q)
        assert kept is not None and kept[0] == len(rows), (q, kept)  # one file per row here
        assert "index sw_ix" in bi.explain(spark.sql(q)) and "field id" not in bi.explain(spark.sql(q)), q
    # A column whose field id is the same in the snapshot still prunes.
    q = f"SELECT * FROM {table} VERSION AS OF {first} WHERE v = 17"
    assert _same(spark, q) == [("v17", "v1017", 17)]
    q = f"SELECT * FROM {table} VERSION AS OF 'before_swap' WHERE v = 117"
    assert _same(spark, q) == [("v117", "v1117", 117)]
    assert _kept(spark, q)[0] == 1
    # The DataFrame reader's time travel option.
    rows = _same_df(lambda: spark.read.option("versionAsOf", first).table(table).where(F.col("a") == "v17"))
    assert rows == [("v17", "v1017", 17)]
    rows = _same_df(lambda: spark.read.option("versionAsOf", "before_swap").table(table).where(F.col("b") == "v1117"))
    assert rows == [("v117", "v1117", 117)]
    # A branch reads today's schema (its files by field id): the index answers for it. (Iceberg
    # 1.12 plans a branch's files with the filter bound to the branch snapshot's schema, so a
    # file is planned here only when its old a's range also holds the value: hence the values.)
    for q in (f"SELECT * FROM {table} VERSION AS OF 'br' WHERE a = 'v1017'",
              f"SELECT * FROM {table}.branch_br WHERE a = 'v1017'"):
        assert _same(spark, q) == [("v17", "v1017", 17)], q
        assert _kept(spark, q)[0] == 1, q
    assert _same(spark, f"SELECT * FROM {table} VERSION AS OF 'br' WHERE a = 'v17'") == []
    # A new snapshot of the branch: its new file is read, the others still pruned.
    spark.sql(f"INSERT INTO {table}.branch_br (a, b, v) VALUES ('v1017', 'new', 1000)")
    q = f"SELECT * FROM {table}.branch_br WHERE a = 'v1017'"
    assert sorted(_same(spark, q)) == [("new", "v1017", 1000), ("v17", "v1017", 17)]
    assert _kept(spark, q)[0] == 2


def test_time_travel_to_column_dropped_and_added_again(spark, root, table):
    """Issue 30: a column dropped and added again before the index was built has another field
    id than the snapshot's column of that name: time travel to the snapshot reads it unpruned."""
    spark.sql(f"CREATE TABLE {table} (id BIGINT, s STRING) USING iceberg")
    for f in range(3):
        spark.range(f * 100, f * 100 + 100, numPartitions=1).selectExpr("id", "concat('s', id) AS s") \
            .writeTo(table).append()
    first, committed = _first_snapshot(spark, table)
    spark.sql(f"ALTER TABLE {table} CREATE TAG old_s")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN s")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN s STRING")
    spark.sql(f"INSERT INTO {table} VALUES (1000, 'n1000')")
    spark.sql(f"CREATE BLOOM INDEX s_ix ON {table} FOR COLUMNS (s, id)")
    q = f"SELECT * FROM {table} WHERE s = 'n1000'"
    assert _same(spark, q) == [(1000, "n1000")]
    assert _kept(spark, q)[0] == 1
    assert _same(spark, f"SELECT * FROM {table} WHERE s = 's17'") == []
    for q in (f"SELECT * FROM {table} VERSION AS OF {first} WHERE s = 's17'",
              f"SELECT * FROM {table} TIMESTAMP AS OF '{committed}' WHERE s = 's17'",
              f"SELECT * FROM {table} VERSION AS OF 'old_s' WHERE s = 's17'"):
        assert _same(spark, q) == [(17, "s17")], q
        kept = _kept(spark, q)
        assert kept is None or kept[0] == kept[1], q
        assert "field id" in BloomIndex(spark).explain(spark.sql(q)), q
    rows = _same_df(lambda: spark.read.option("timestampAsOf", str(committed)).table(table).where(F.col("s") == "s17"))
    assert rows == [(17, "s17")]
    # id kept its field id: it prunes the old snapshot's files.
    q = f"SELECT * FROM {table} VERSION AS OF 'old_s' WHERE id = 217"
    assert _same(spark, q) == [(217, "s217")]
    assert _kept(spark, q)[0] == 1


def _add_files(spark, table: str, path: str, df) -> None:
    """Writes `df` as a plain Parquet folder (no field ids) and imports it with add_files."""
    df.write.parquet(path)
    catalog, db, name = table.split(".")
    spark.sql(f"CALL {catalog}.system.add_files(table => '{db}.{name}', source_table => '`parquet`.`{path}`')")


def _imported(spark, start: int, rows: int = PER_FILE, with_k: bool = True):
    """Rows for an imported file: k = 'key-<id>-imp', within the range of the keys Iceberg's files
    hold (so Iceberg's min/max metrics alone rule out neither kind of file)."""
    cols = ["id"] + (["concat('key-', id, '-imp') AS k"] if with_k else []) + ["cast(id % 13 AS int) AS v"]
    return spark.range(start, start + rows, numPartitions=1).selectExpr(*cols)


def test_imported_files_read_by_name_mapping(spark, root, table, tmp_path):
    """Issue 30: files add_files imported carry no field ids; Iceberg reads them through the
    table's name mapping, and so does the build (it read them by field id and failed)."""
    _create_table(spark, table)
    _fill(spark, table, files=3)
    _add_files(spark, table, str(tmp_path / "imp1"), _imported(spark, 5000))
    assert spark.sql(f"SHOW TBLPROPERTIES {table} ('schema.name-mapping.default')").head()[1].startswith("[")
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k, id)")
    entry = _log(root, "ix")[-1]
    assert entry["state"] == "ACTIVE" and entry["data"]["indexedFiles"] == 4 == _data_files(spark, table)
    # A value only the imported file holds: found with pruning on, every other file skipped; a
    # key of a file Iceberg wrote (within the imported file's range of k): the imported file skipped.
    for q, ids in ((f"SELECT id FROM {table} WHERE k = 'key-5017-imp'", [5017]),
                   (f"SELECT id FROM {table} WHERE id = 5123", [5123]),
                   (f"SELECT id FROM {table} WHERE k = '{_key(57)}'", [57]),
                   (f"SELECT id FROM {table} WHERE k = 'key-5017-imp-absent'", [])):
        assert [r[0] for r in _same(spark, q)] == ids, q
        kept, total = _kept(spark, q)
        assert kept == len(ids) and (total >= 2 or q.endswith("5123")), q
    assert _kept(spark, f"SELECT id FROM {table} WHERE k = 'key-5017-imp'")[1] == 4
    # A rename keeps the imported file's old name in the mapping: a new index reads it by that name.
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")
    spark.sql(f"CREATE BLOOM INDEX ix2 ON {table} FOR COLUMNS (key)")
    assert _log(root, "ix2")[-1]["data"]["indexedFiles"] == 4
    q = f"SELECT id FROM {table} WHERE key = 'key-5150-imp'"
    assert [r[0] for r in _same(spark, q)] == [5150]
    assert _kept(spark, q)[0] == 1


def test_refresh_after_add_files(spark, root, table, tmp_path):
    """Issue 30: REFRESH after add_files into an indexed table builds the imported files by the
    name mapping; an imported file without the indexed column is left out (read in full)."""
    _create_table(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k)")
    _add_files(spark, table, str(tmp_path / "imp1"), _imported(spark, 5000))
    _add_files(spark, table, str(tmp_path / "imp2"), _imported(spark, 6000, with_k=False))
    q = f"SELECT id FROM {table} WHERE k = 'key-5017-imp'"
    assert [r[0] for r in _same(spark, q)] == [5017]  # not indexed yet: read
    spark.sql("REFRESH BLOOM INDEX ix")
    entry = _log(root, "ix")[-1]
    assert entry["operation"] == "REFRESH INCREMENTAL" and entry["state"] == "ACTIVE"
    assert entry["data"]["indexedFiles"] == 4 and _data_files(spark, table) == 5
    assert [r[0] for r in _same(spark, q)] == [5017]
    kept, total = _kept(spark, q)
    # The three files Iceberg wrote are skipped; imp1 is read, and imp2 (not indexed) if Iceberg plans it.
    assert total >= 4 and kept == total - 3
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE k = '{_key(250)}'")] == [250]
    assert _same(spark, f"SELECT count(*) FROM {table} WHERE k IS NULL") == [(PER_FILE,)]
    spark.sql("REFRESH BLOOM INDEX ix FULL")
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 4
    assert [r[0] for r in _same(spark, q)] == [5017]
    assert _kept(spark, q)[0] == total - 3


def _import_folder(spark, table: str, path: str) -> None:
    catalog, db, name = table.split(".")
    spark.sql(f"CALL {catalog}.system.add_files(table => '{db}.{name}', source_table => '`parquet`.`{path}`')")


def _with_confs(spark, confs: dict, body) -> None:
    before = {k: spark.conf.get(k, None) for k in confs}
    for k, v in confs.items():
        spark.conf.set(k, v)
    try:
        body()
    finally:
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def test_imported_int96_read_as_iceberg_reads_them(spark, root, table, tmp_path):
    """INT96 timestamps another writer than parquet-mr wrote (pyarrow), imported: Iceberg reads
    them as stored; Spark's reader, under spark.sql.parquet.int96TimestampConversion, shifts
    them by the session's zone. A build in such a session reads them as Iceberg does."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "int96"
    src.mkdir()
    for f in range(3):
        ks = list(range(f * 10, f * 10 + 10))
        ts = [datetime.datetime(2020, 1, 1) + datetime.timedelta(hours=k) for k in ks]
        pq.write_table(pa.table({"k": pa.array(ks, pa.int64()), "ts": pa.array(ts, pa.timestamp("us"))}),
                       str(src / f"part-{f}.parquet"), use_deprecated_int96_timestamps=True)
    spark.sql(f"CREATE TABLE {table} (k BIGINT, ts TIMESTAMP) USING iceberg")
    _import_folder(spark, table, str(src))
    [(value,)] = spark.sql(f"SELECT cast(ts AS string) FROM {table} WHERE k = 15").collect()
    _with_confs(spark, {"spark.sql.session.timeZone": "America/Los_Angeles",
                        "spark.sql.parquet.int96TimestampConversion": "true"},
                lambda: spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (ts)"))
    q = f"SELECT k FROM {table} WHERE ts = timestamp'{value}'"
    assert _same(spark, q) == [(15,)]
    assert _kept(spark, q)[0] == 1


def test_imported_files_without_ids_or_mapping_are_left_out(spark, root, table, tmp_path):
    """Imported files without field ids, the table's name mapping removed: Iceberg reads them by
    position. A build under spark.sql.parquet.fieldId.read.ignoreMissing would have read them
    as nulls; they are left out of the index (read in full), the files Iceberg wrote are not."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "noids"
    src.mkdir()
    for f in range(2):
        ks = list(range(f * 10, f * 10 + 10))
        pq.write_table(pa.table({"id": pa.array(ks, pa.int64()), "k": pa.array([f"imp-{k}" for k in ks]),
                                 "v": pa.array([k % 13 for k in ks], pa.int32())}), str(src / f"part-{f}.parquet"))
    _create_table(spark, table)
    _fill(spark, table, files=2, start=1)
    _import_folder(spark, table, str(src))
    spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('schema.name-mapping.default')")
    _with_confs(spark, {"spark.sql.parquet.fieldId.read.ignoreMissing": "true"},
                lambda: spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (id, k)"))
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 2
    for q, ids in ((f"SELECT id FROM {table} WHERE id = 5", [5]), (f"SELECT id FROM {table} WHERE k = 'imp-15'", [15]),
                   (f"SELECT id FROM {table} WHERE k = '{_key(250)}'", [250])):
        assert [r[0] for r in _same(spark, q)] == ids, q
    # The files Iceberg wrote are indexed: a key of one skips the other.
    kept, total = _kept(spark, f"SELECT id FROM {table} WHERE k = '{_key(250)}'")
    assert kept == 1 < total


def test_a_name_mapping_removed_after_the_build_stops_the_index(spark, root, table, tmp_path):
    """Files add_files imported (no field ids) are read through the table's name mapping as it is
    at query time. Removed after the build, Iceberg reads such a file by position: here its first
    column (b) as a. The index, built through the mapping, held the file's a values: it must
    not answer until a REFRESH ... FULL builds it as the table reads now (an incremental one
    refuses)."""
    spark.sql(f"CREATE TABLE {table} (a STRING, b STRING) USING iceberg")
    imp = str(tmp_path / "imp")
    spark.createDataFrame([("b1", "a1"), ("b2", "c9")], "b STRING, a STRING").coalesce(1).write.parquet(imp)
    _import_folder(spark, table, imp)
    spark.sql(f"INSERT INTO {table} VALUES ('a5', 'b5')")
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (a)")
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 2
    q = f"SELECT a, b FROM {table} WHERE a = 'b1'"
    assert _same(spark, q) == []
    assert _kept(spark, q)[0] == 0
    spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('schema.name-mapping.default')")
    rows = _same(spark, q)
    assert _kept(spark, q) is None, "the index does not answer for the table as it reads now"
    with pytest.raises(Exception, match="name mapping"):
        spark.sql("REFRESH BLOOM INDEX ix")
    spark.sql("REFRESH BLOOM INDEX ix FULL")
    assert _same(spark, q) == rows
    # The imported file, without ids or a mapping, is left out now: read in full.
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 1


def test_a_dropped_columns_name_taken_by_a_rename_stops_the_index(spark, root, table, tmp_path):
    """Iceberg takes a name a rename gives away from the other fields of the name mapping: after
    DROP COLUMN b and RENAME COLUMN a TO b, two columns of an imported file (a and b) map to
    the renamed column's field id, and Iceberg reads one of them, perhaps not the one the build
    read. The index holds imported files, so it requires the mapping to give its column the names
    it gave at the build, and answers again after a REFRESH ... FULL."""
    spark.sql(f"CREATE TABLE {table} (id BIGINT, a STRING, b STRING) USING iceberg")
    imp = str(tmp_path / "imp2")
    spark.range(50).selectExpr("id", "format_string('k%02d', id * 2) AS a", "format_string('k%02d', id * 2 + 1) AS b") \
        .coalesce(1).write.parquet(imp)
    _import_folder(spark, table, imp)
    spark.sql(f"INSERT INTO {table} VALUES (100, 'k10', 'k99')")
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (a)")
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 2
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE a = 'k20'")] == [10]
    spark.sql(f"ALTER TABLE {table} DROP COLUMN b")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN a TO b")
    queries = [f"SELECT id FROM {table} WHERE b = '{v}'" for v in ("k51", "k20", "k10", "k99")]
    answers = [_same(spark, q) for q in queries]
    for q in queries:
        assert _kept(spark, q) is None, q
    spark.sql("REFRESH BLOOM INDEX ix FULL")
    assert [_same(spark, q) for q in queries] == answers
    assert _kept(spark, queries[0]) is not None


@pytest.mark.parametrize("kind", ["date", "int96"])
def test_imported_legacy_calendar_files_are_left_out(spark, root, table, tmp_path, kind):
    """Files Spark wrote in legacy calendar mode (their footer says so), imported: Spark's reader
    rebases their old dates and INT96 timestamps whatever the session says, Iceberg reads them
    as stored. They are left out of an index of a date or timestamp column (read in full)."""
    src = str(tmp_path / "legacy")
    write = {"date": ("spark.sql.parquet.datetimeRebaseModeInWrite", "date_add(date'1000-01-01', cast(id AS int)) AS d"),
             "int96": ("spark.sql.parquet.int96RebaseModeInWrite",
                       "timestamp'1000-01-01 00:00:00' + make_interval(0, 0, 0, cast(id AS int)) AS d")}[kind]
    confs = {write[0]: "LEGACY"}
    if kind == "int96":
        confs["spark.sql.parquet.outputTimestampType"] = "INT96"
    _with_confs(spark, confs, lambda: spark.range(0, 30, 1, 3).selectExpr("id AS k", write[1]).write.parquet(src))
    dtype = "DATE" if kind == "date" else "TIMESTAMP"
    spark.sql(f"CREATE TABLE {table} (k BIGINT, d {dtype}) USING iceberg")
    _import_folder(spark, table, src)
    spark.range(100, 110, 1, 1).selectExpr("id AS k", write[1]).writeTo(table).append()  # Iceberg's own file
    [(value,)] = spark.sql(f"SELECT cast(d AS string) FROM {table} WHERE k = 5").collect()
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (d, k)")
    assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 1
    literal = "date" if kind == "date" else "timestamp"
    q = f"SELECT k FROM {table} WHERE d = {literal}'{value}'"
    assert _same(spark, q) == [(5,)]
    kept, total = _kept(spark, q)
    assert kept == total  # the imported file that holds it is not indexed
    [(own,)] = spark.sql(f"SELECT cast(d AS string) FROM {table} WHERE k = 105").collect()
    assert _same(spark, f"SELECT k FROM {table} WHERE d = {literal}'{own}'") == [(105,)]


def test_snapshot_of_a_parquet_table(spark, root, table, tmp_path):
    """Issue 30: Iceberg's `snapshot` procedure imports a Spark Parquet table's files as they are
    (no field ids, read through the name mapping), like add_files: an index over the snapshot
    builds by the mapping, answers as without it and prunes; REFRESH after an append indexes
    the new file. (`migrate` imports the same kind of files in place; it needs Iceberg's
    SparkSessionCatalog as spark_catalog over a Hive metastore: test_iceberg_migrate.py.)"""
    src = str(tmp_path / "src")
    spark.range(0, 4 * PER_FILE, numPartitions=4).selectExpr("id", "concat('key-', id, '-src') AS k") \
        .write.parquet(src)
    spark.sql("DROP TABLE IF EXISTS snap_src")
    spark.sql(f"CREATE TABLE snap_src (id BIGINT, k STRING) USING parquet LOCATION '{src}'")
    try:
        [row] = spark.sql(f"CALL local.system.snapshot(source_table => 'spark_catalog.default.snap_src', "
                          f"table => '{table}')").collect()
        assert row[0] == 4
        spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (k, id)")
        assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 4
        for q, ids in ((f"SELECT id FROM {table} WHERE k = 'key-17-src'", [17]),
                       (f"SELECT id FROM {table} WHERE id = {3 * PER_FILE + 5}", [3 * PER_FILE + 5]),
                       (f"SELECT id FROM {table} WHERE k = 'key-17-absent'", [])):
            assert [r[0] for r in _same(spark, q)] == ids, q
            assert _kept(spark, q)[0] == len(ids), q
        spark.sql(f"INSERT INTO {table} VALUES (900000, 'key-900000-new')")
        spark.sql("REFRESH BLOOM INDEX ix")
        assert _log(root, "ix")[-1]["data"]["indexedFiles"] == 5 == _data_files(spark, table)
        q = f"SELECT id FROM {table} WHERE k = 'key-900000-new'"
        assert [r[0] for r in _same(spark, q)] == [900000]
        kept, total = _kept(spark, q)
        assert kept == 1 and total >= 2, (kept, total)  # Iceberg's min/max metrics may plan fewer than 5
    finally:
        spark.sql("DROP TABLE IF EXISTS snap_src")


# ---------------------------------------------------------------- footers, joins, API


def test_footer_filters_written_by_iceberg(spark, root, table):
    _create_table(spark, table, "'write.parquet.bloom-filter-enabled.column.k'='true', "
                                "'write.parquet.bloom-filter-fpp.column.k'='0.01'")
    _fill(spark, table, files=4)
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")  # footers are matched by field id
    spark.sql(f"CREATE BLOOM INDEX ix ON {table} FOR COLUMNS (key) OPTIONS (fpp = 0.05)")
    data = _log(root, "ix")[-1]["data"]
    assert data["filesFromFooters"] == 4
    for i in (3, 444, 799):
        q = f"SELECT id FROM {table} WHERE key = '{_key(i)}'"
        assert [r[0] for r in _same(spark, q)] == [i]
        assert _kept(spark, q)[0] == 1


def test_a_plan_run_after_the_icu_setting_changed_reads_what_it_skipped(spark, root, table):
    """Spark's lower() reads spark.sql.icu.caseMappings.enabled when it first runs, not when it is
    planned: an Iceberg DataFrame planned under ICU's folding and run under the JDK's reads the
    files its plan skipped (Spark plans an Iceberg batch's partitions with the query, so the run
    reads a copy of the scan)."""
    spark.sql(f"CREATE TABLE {table} (k INT, s STRING) USING iceberg")
    for k, v in [(1, "ΑΣ_Β"), (2, "zzz"), (3, "yyy")]:
        spark.createDataFrame([(k, v)], "k int, s string").coalesce(1).writeTo(table).append()
    spark.sql(f"CREATE BLOOM INDEX icu_run ON {table} FOR COLUMNS (s USING TOKENS OPTIONS (case = 'lower'))")
    assert_icu_change_reads_what_was_skipped(spark, table)


def test_join_filter_either_side(spark, root, table):
    dim = table + "_dim"
    _create_table(spark, table)
    _fill(spark, table, files=4)
    spark.sql(f"CREATE TABLE {dim} (k STRING, name STRING) USING iceberg")
    spark.createDataFrame([(_key(i), f"n{i}") for i in range(0, 800, 40)] + [("nope", "x")], "k STRING, name STRING") \
        .coalesce(1).writeTo(dim).append()
    spark.sql(f"CREATE BLOOM INDEX dim_ix ON {dim} FOR COLUMNS (k) OPTIONS (global = true)")
    spark.sql(f"CREATE BLOOM INDEX fact_ix ON {table} FOR COLUMNS (k) OPTIONS (global = true)")
    try:
        spark.conf.set("spark.bloomindex.joinFilter.enabled", "true")
        for q in (f"SELECT f.id, d.name FROM {table} f JOIN {dim} d ON f.k = d.k",
                  f"SELECT f.id, d.name FROM {dim} d JOIN {table} f ON d.k = f.k"):
            rows = _same(spark, q)
            assert len(rows) == 20
            assert "bloom_might_contain" in spark.sql(q)._jdf.queryExecution().optimizedPlan().toString()
        # The fact table as the indexed side: its global filter pre-filters a non-Iceberg probe side.
        spark.createDataFrame([(_key(5), 1), ("zzz", 2)], "k STRING, w INT").createOrReplaceTempView("probe")
        q = f"SELECT p.w, f.id FROM probe p JOIN {table} f ON p.k = f.k"
        assert _same(spark, q) == [(1, 5)]
        assert "bloom_might_contain" in spark.sql(q)._jdf.queryExecution().optimizedPlan().toString()
        # Stale: a new file of the indexed Iceberg table turns the join filter off (right answer).
        spark.sql(f"INSERT INTO {dim} VALUES ('{_key(7)}', 'late')")
        q = f"SELECT f.id, d.name FROM {table} f JOIN {dim} d ON f.k = d.k"
        assert len(_same(spark, q)) == 21
    finally:
        spark.conf.unset("spark.bloomindex.joinFilter.enabled")
        spark.sql(f"DROP TABLE IF EXISTS {dim}")


def test_incremental_read_gets_no_join_filter(spark, root, table):
    """An incremental read (`start-snapshot-id`/`end-snapshot-id`) reads the files appended over a
    range of snapshots, also one a later DELETE replaced: the current snapshot's index, whose
    global filter no longer holds the deleted key, must not filter the other side of a join."""
    spark.sql(f"CREATE TABLE {table} (k STRING, name STRING) USING iceberg")
    spark.createDataFrame([(f"k{i}", f"n{i}") for i in range(10)], "k STRING, name STRING").coalesce(1) \
        .writeTo(table).append()
    first = _snapshot_id(spark, table)
    spark.createDataFrame([(f"k{i}", f"n{i}") for i in range(10, 20)], "k STRING, name STRING").coalesce(1) \
        .writeTo(table).append()
    second = _snapshot_id(spark, table)
    spark.sql(f"DELETE FROM {table} WHERE k = 'k15'")  # copy-on-write: the second file is replaced
    spark.sql(f"CREATE BLOOM INDEX incr_ix ON {table} FOR COLUMNS (k) OPTIONS (global = true)")
    spark.createDataFrame([("k15", 1), ("k12", 2), ("zzz", 3)], "k STRING, w INT").createOrReplaceTempView("incr_probe")

    def appended():
        return (spark.read.format("iceberg").option("start-snapshot-id", str(first))
                .option("end-snapshot-id", str(second)).load(table))

    spark.conf.set("spark.bloomindex.joinFilter.enabled", "true")
    try:
        join = lambda: spark.table("incr_probe").join(appended(), "k").select("k", "w", "name")
        assert _same_df(join) == [("k12", 2, "n12"), ("k15", 1, "n15")]
        assert "bloom_might_contain" not in join()._jdf.queryExecution().optimizedPlan().toString()
        assert _same_df(lambda: appended().where("k = 'k15'")) == [("k15", "n15")]
        # The same join over the table as it is now is filtered (and has no k15).
        now = lambda: spark.table("incr_probe").join(spark.table(table), "k").select("k", "w", "name")
        assert _same_df(now) == [("k12", 2, "n12")]
        assert "bloom_might_contain" in now()._jdf.queryExecution().optimizedPlan().toString()
    finally:
        spark.conf.unset("spark.bloomindex.joinFilter.enabled")


def test_python_api_and_path_table(spark, root, table, warehouse):
    _create_table(spark, table)
    _fill(spark, table, files=3)
    bi = BloomIndex(spark)
    bi.create("api_ix", spark.table(table), ["k"])
    q = f"SELECT id FROM {table} WHERE k = '{_key(250)}'"
    assert [r[0] for r in _same(spark, q)] == [250]
    assert "index api_ix" in bi.explain(spark.sql(q))
    # The same table read from its folder (Iceberg's data source): the index is over its location.
    catalog, db, name = table.split(".")
    path = str(warehouse / db / name)
    q = f"SELECT id FROM iceberg.`{path}` WHERE k = '{_key(250)}'"
    df = spark.read.format("iceberg").load(path).where(F.col("k") == _key(250))
    assert [r.id for r in df.collect()] == [250]
    assert "index api_ix" in bi.explain(df)
    spark.sql("DROP BLOOM INDEX api_ix")
    spark.sql(f"CREATE BLOOM INDEX path_ix ON iceberg.`{path}` FOR COLUMNS (k)")
    assert "index path_ix" in bi.explain(spark.sql(f"SELECT id FROM {table} WHERE k = '{_key(250)}'"))


# ---------------------------------------------------------------- bad inputs


def test_refuses_metadata_table(spark, root, table):
    _create_table(spark, table)
    _fill(spark, table, files=1)
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_ICEBERG_NOT_INDEXABLE.*metadata table"):
        spark.sql(f"CREATE BLOOM INDEX bad ON {table}.files FOR COLUMNS (file_path)")
    assert not os.path.exists(os.path.join(root, "bad"))


def test_refuses_view(spark, root):
    # Iceberg views need a catalog with views (the Hadoop catalog has none): Iceberg's in-memory one.
    spark.sql("CREATE NAMESPACE IF NOT EXISTS mem.db")
    spark.sql("CREATE TABLE IF NOT EXISTS mem.db.base (id BIGINT, k STRING) USING iceberg")
    spark.sql("INSERT INTO mem.db.base VALUES (1, 'a')")
    spark.sql("CREATE VIEW mem.db.v AS SELECT id, k FROM mem.db.base")
    try:
        with pytest.raises(AnalysisException, match="BLOOM_INDEX_ICEBERG_NOT_INDEXABLE.*view"):
            spark.sql("CREATE BLOOM INDEX bad ON mem.db.v FOR COLUMNS (k)")
        assert not os.path.exists(os.path.join(root, "bad"))
    finally:
        spark.sql("DROP VIEW IF EXISTS mem.db.v")
        spark.sql("DROP TABLE IF EXISTS mem.db.base")


def test_refuses_unsupported_column_type(spark, root, table):
    spark.sql(f"CREATE TABLE {table} (id BIGINT, s STRUCT<a: INT>, t TIMESTAMP_NTZ) USING iceberg")
    spark.sql(f"INSERT INTO {table} VALUES (1, named_struct('a', 1), TIMESTAMP_NTZ'2024-01-01 00:00:00')")
    # A nested column: refused by the index's own type check (before Iceberg's).
    with pytest.raises(AnalysisException, match=r"BLOOM_INDEX_(ICEBERG_COLUMN_TYPE|UNSUPPORTED_COLUMN_TYPE).*\bs\b"):
        spark.sql(f"CREATE BLOOM INDEX bad ON {table} FOR COLUMNS (s)")
    assert not os.path.exists(os.path.join(root, "bad", "_log")) or not _log(root, "bad") or \
        _log(root, "bad")[-1]["state"] != "ACTIVE"
    # A supported type next to it indexes fine.
    spark.sql(f"CREATE BLOOM INDEX good ON {table} FOR COLUMNS (t)")
    assert _same(spark, f"SELECT id FROM {table} WHERE t = TIMESTAMP_NTZ'2024-01-01 00:00:00'") == [(1,)]


def test_iceberg_package_refuses_spark_without_runtime():
    from bloomindex.session import iceberg_package

    assert iceberg_package("4.1.4") == "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
    with pytest.raises(ValueError, match="no Spark runtime for Spark 4.2"):
        iceberg_package("4.2.0")
