"""Issue 29 for Iceberg: indexes with `OPTIONS (refresh = 'on_write' | 'background')` over an
Iceberg table follow the Iceberg writes of this session (the Iceberg session of conftest.py sets
`spark.bloomindex.refresh.default` to manual; these indexes name their mode).

After each kind of write (appends: INSERT INTO, DataFrameWriterV2 append, DataFrameWriter append;
overwrites: INSERT OVERWRITE of a static and of a dynamic partition, overwritePartitions,
overwrite by condition; row-level DELETE, UPDATE and MERGE INTO in copy-on-write and merge-on-read;
the `rewrite_data_files` and `rollback_to_snapshot` procedures; the Iceberg Structured Streaming
sink by table name and by location; the replaces: CREATE OR REPLACE / REPLACE TABLE ... AS SELECT,
DataFrameWriterV2 replace and createOrReplace, DataFrameWriter saveAsTable in overwrite mode, REPLACE
TABLE without a query; TRUNCATE TABLE), once Spark's listener bus and the background refresher are
idle: the index's newest log entry is ACTIVE, of the table's current snapshot, and holds exactly
the snapshot's data files; a lookup of a value only the new data holds keeps exactly the files
holding it; and every query answers as with pruning off. A `manual` index does not move. DROP
TABLE leaves the index ORPHANED in SHOW, and a table created again under the name (at the same
location: a Hadoop catalog's) is another table to it (Iceberg's table UUID): not used, not
refreshed incrementally, until REFRESH BLOOM INDEX ... FULL."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from bloomindex import BloomIndex

# The differential helpers of the main suite (tests/), which this process does not collect.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from index_helpers import confs, index_rows, log_entries, row_path  # noqa: E402
from test_decoding_regressions import kept, report, same  # noqa: E402

PER_FILE = 50
KEY = "concat('key-', cast(id * 7919 % 100003 AS string))"


def _key(i: int) -> str:
    return f"key-{i * 7919 % 100003}"


def _rows(spark, lo: int, n: int = PER_FILE, p: int | None = None):
    """n rows from id lo, in one partition of the DataFrame (one data file per table partition)."""
    df = spark.range(lo, lo + n, numPartitions=1).selectExpr("id", f"{KEY} AS k", "cast(id % 13 AS int) AS v")
    return df if p is None else df.withColumn("p", F.lit(p).cast("int"))


def _create(spark, table: str, partitioned: bool = False, props: str = "") -> None:
    cols = "id BIGINT, k STRING, v INT" + (", p INT" if partitioned else "")
    spark.sql(f"CREATE TABLE {table} ({cols}) USING iceberg {'PARTITIONED BY (p)' if partitioned else ''} "
              f"{f'TBLPROPERTIES ({props})' if props else ''}")


def _fill(spark, table: str, files: int, start: int = 0, partitioned: bool = False) -> None:
    for f in range(start, start + files):
        _rows(spark, f * PER_FILE, p=(f % 2) if partitioned else None).writeTo(table).append()


def _await_refresher(spark) -> None:
    """Waits for Spark's listener bus (the write and streaming listeners are called there), then
    for the background refresher."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    assert spark._jvm.bloomindex.actions.WriteEvents.awaitIdle(60_000), "the background refresher did not finish"


def _data_files(spark, table: str) -> set[str]:
    return {row_path(r[0]) for r in spark.sql(f"SELECT file_path FROM {table}.files WHERE content = 0").collect()}


def _current_snapshot(spark, table: str) -> int | None:
    """The snapshot of the table's main branch (None: no snapshot, as after REPLACE TABLE without a query)."""
    row = spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'").head()
    return None if row is None else row[0]


def _covers(spark, root: str, name: str, table: str) -> dict:
    """The index's newest entry is ACTIVE, of the table's current snapshot, and holds exactly its data files."""
    entries = log_entries(root, name)
    last = entries[-1]
    why = BloomIndex(spark).describe(name).get("automatic_refresh_failed")
    assert last["state"] == "ACTIVE", ([(e["version"], e["state"], e["operation"]) for e in entries], why)
    files = _data_files(spark, table)
    assert last["data"].get("tableVersion") == _current_snapshot(spark, table), (name, why)
    assert last["data"]["indexedFiles"] == len(files), (name, last["data"]["indexedFiles"], len(files), why)
    assert {row_path(r.file_path) for r in index_rows(spark, root, name)} == files, name
    return last


def _lookup(spark, table: str, index: str, key, ids: list[int], column: str = "k") -> tuple[int, int]:
    """Same rows with the index on and off; the index keeps exactly the data files holding `key`."""
    def make():
        return spark.table(table).where(F.col(column) == key).select("id", "k")
    assert sorted(r[0] for r in same(spark, make, str(key))) == sorted(ids)
    with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
        holding = spark.table(table).where(F.col(column) == key).select(F.countDistinct("_file")).head()[0]
    k = kept(report(spark, make), index)
    assert k is not None and k[0] == holding, (key, k, holding)
    return k


def _same_everywhere(spark, table: str, keys: list[str], ids: list[int]) -> None:
    """Lookups by key and by id, an aggregate and a range: the same rows with pruning on and off."""
    for key in keys:
        same(spark, lambda key=key: spark.table(table).where(F.col("k") == key), key)
    for i in ids:
        same(spark, lambda i=i: spark.table(table).where(F.col("id") == i), str(i))
    same(spark, lambda: spark.table(table).where(F.col("k").isin(keys[:3])).groupBy("v").count(), "in")
    same(spark, lambda: spark.table(table).groupBy().agg(F.count("*"), F.sum("id")), "count")


# ---------------------------------------------------------------- appends


def test_appends_refresh_on_write_and_background_indexes(spark, root, table):
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_ow ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX ice_bg ON {table} FOR COLUMNS (id) OPTIONS (refresh = 'background')")
    writes = [
        ("INSERT INTO", lambda lo: spark.sql(
            f"INSERT INTO {table} SELECT id, {KEY} AS k, cast(id % 13 AS int) AS v FROM range({lo}, {lo + PER_FILE}, 1, 1)")),
        ("DataFrameWriterV2 append", lambda lo: _rows(spark, lo).writeTo(table).append()),
        ("DataFrameWriter append", lambda lo: _rows(spark, lo).write.format("iceberg").mode("append").save(table)),
    ]
    for n, (what, write) in enumerate(writes):
        lo = (3 + n) * PER_FILE
        write(lo)
        _await_refresher(spark)
        for name in ("ice_ow", "ice_bg"):
            assert _covers(spark, root, name, table)["data"]["indexedFiles"] == 4 + n, what
        k = _lookup(spark, table, "ice_ow", _key(lo + 7), [lo + 7])
        assert k[0] == 1 and k[1] > 1, (what, k)  # the index, not Iceberg's metrics, left one file
        assert _lookup(spark, table, "ice_bg", lo + 8, [lo + 8], column="id")[0] == 1, what
        _same_everywhere(spark, table, [_key(lo + 1), _key(3), "absent"], [lo + 2, 4])


# ---------------------------------------------------------------- overwrites


def test_overwrites_refresh_the_index(spark, root, table):
    _create(spark, table, partitioned=True)
    _fill(spark, table, files=4, partitioned=True)
    spark.sql(f"CREATE BLOOM INDEX ice_ov ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")

    def select(lo: int, p: str = "") -> str:
        return f"SELECT id, {KEY} AS k, cast(id % 13 AS int) AS v{p} FROM range({lo}, {lo + PER_FILE}, 1, 1)"

    # Files 0 and 2 of the fill are partition p = 0 (ids 0-49, 100-149), files 1 and 3 p = 1.
    writes = [
        # A static partition: OverwriteByExpression of p = 1 (ids 50-99 and 150-199 go).
        ("INSERT OVERWRITE PARTITION", 55, lambda lo: spark.sql(f"INSERT OVERWRITE {table} PARTITION (p = 1) {select(lo)}")),
        # Dynamic partition overwrite: OverwritePartitionsDynamic of p = 0 (ids 0-49 and 100-149 go).
        ("INSERT OVERWRITE dynamic", 5, lambda lo: _dynamic(spark, lambda: spark.sql(
            f"INSERT OVERWRITE {table} {select(lo, ', 0 AS p')}"))),
        ("overwritePartitions", 10 * PER_FILE + 5, lambda lo: _rows(spark, lo, p=1).writeTo(table).overwritePartitions()),
        ("overwrite by condition", 11 * PER_FILE + 5,
         lambda lo: _rows(spark, lo, p=0).writeTo(table).overwrite(F.col("p") == 0)),
    ]
    gone = []
    for n, (what, gone_id, write) in enumerate(writes):
        lo = (10 + n) * PER_FILE
        before = _data_files(spark, table)
        write(lo)
        _await_refresher(spark)
        _covers(spark, root, "ice_ov", table)
        assert _data_files(spark, table) != before, what
        _lookup(spark, table, "ice_ov", _key(lo + 3), [lo + 3])
        assert same(spark, lambda gone_id=gone_id: spark.table(table).where(F.col("k") == _key(gone_id))) == [], what
        gone.append(_key(gone_id))
        _same_everywhere(spark, table, [_key(lo + 9), *gone, "absent"], [lo + 1, gone_id])
    # Every partition was overwritten: the first fill's keys are gone.
    assert same(spark, lambda: spark.table(table).where(F.col("k") == _key(PER_FILE + 1))) == []


def _dynamic(spark, write) -> None:
    with confs(spark, {"spark.sql.sources.partitionOverwriteMode": "dynamic"}):
        write()


# ---------------------------------------------------------------- row-level operations


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_operations_refresh_the_index(spark, root, table, mode):
    props = (f"'format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
             f"'write.merge.mode'='{mode}'")
    _create(spark, table, props=props)
    _fill(spark, table, files=4)
    spark.sql(f"CREATE BLOOM INDEX ice_rl ON {table} FOR COLUMNS (k, id) OPTIONS (refresh = 'on_write')")
    keys = [_key(i) for i in (1, 33, 60, 77, 120, 199)] + ["absent"]

    spark.sql(f"DELETE FROM {table} WHERE id IN (33, 120)")
    _await_refresher(spark)
    _covers(spark, root, "ice_rl", table)
    assert same(spark, lambda: spark.table(table).where(F.col("k") == _key(33))) == []
    _same_everywhere(spark, table, keys, [33, 120, 121])

    spark.sql(f"UPDATE {table} SET k = 'updated-60' WHERE id = 60")
    _await_refresher(spark)
    _covers(spark, root, "ice_rl", table)
    assert _lookup(spark, table, "ice_rl", "updated-60", [60])[0] == 1
    keys.append("updated-60")
    _same_everywhere(spark, table, keys, [60])

    spark.createDataFrame([(77, "merged-77", 1), (9001, "merged-new", 2)], "id BIGINT, k STRING, v INT") \
        .createOrReplaceTempView("ice_updates")
    spark.sql(f"""MERGE INTO {table} t USING ice_updates u ON t.id = u.id
                  WHEN MATCHED THEN UPDATE SET k = u.k
                  WHEN NOT MATCHED THEN INSERT *""")
    _await_refresher(spark)
    _covers(spark, root, "ice_rl", table)
    assert _lookup(spark, table, "ice_rl", "merged-77", [77])[0] == 1
    assert _lookup(spark, table, "ice_rl", "merged-new", [9001])[0] == 1
    keys.extend(["merged-77", "merged-new", _key(77)])
    _same_everywhere(spark, table, keys, [77, 9001])

    # A whole file's rows: a metadata-only delete (the plan Spark analysed is still a ReplaceData).
    spark.sql(f"DELETE FROM {table} WHERE id >= {3 * PER_FILE} AND id < {4 * PER_FILE}")
    _await_refresher(spark)
    _covers(spark, root, "ice_rl", table)
    _same_everywhere(spark, table, keys + [_key(3 * PER_FILE + 1)], [3 * PER_FILE + 1, 1])


# ---------------------------------------------------------------- procedures


def test_procedures_refresh_the_index(spark, root, table):
    """CALL runs during analysis (Spark's InvokeProcedures): seen by the session's check rule."""
    _create(spark, table)
    _fill(spark, table, files=6)
    spark.sql(f"CREATE BLOOM INDEX ice_call ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    before = _current_snapshot(spark, table)
    short = table.split(".", 1)[1]  # db.tN: relative to the procedure's catalog
    # The result is not collected: the procedure ran when the CALL was analysed.
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{short}', options => map('min-input-files', '2'))")
    _await_refresher(spark)
    assert len(_data_files(spark, table)) < 6
    last = _covers(spark, root, "ice_call", table)
    assert last["data"]["tableVersion"] != before
    _lookup(spark, table, "ice_call", _key(2 * PER_FILE + 4), [2 * PER_FILE + 4])
    _same_everywhere(spark, table, [_key(1), _key(5 * PER_FILE + 1), "absent"], [1, 5 * PER_FILE + 1])

    # Another procedure, the table named with its catalog, positional arguments: back to the six files.
    spark.sql(f"CALL local.system.rollback_to_snapshot('{table}', {before})").collect()
    _await_refresher(spark)
    assert len(_data_files(spark, table)) == 6
    assert _covers(spark, root, "ice_call", table)["data"]["tableVersion"] == before
    k = _lookup(spark, table, "ice_call", _key(2 * PER_FILE + 4), [2 * PER_FILE + 4])
    assert k[0] == 1 and k[1] > 1, k
    _same_everywhere(spark, table, [_key(1), _key(5 * PER_FILE + 1), "absent"], [1, 5 * PER_FILE + 1])


# ---------------------------------------------------------------- streaming


@pytest.mark.parametrize("target", ["toTable", "path"])
def test_streaming_sink_refreshes_the_index(spark, root, table, tmp_path, target):
    """Iceberg's streaming sink is described in the query's progress by the table's name
    (`toTable`) or by its location (the `path` option)."""
    _create(spark, table)
    src, ckpt = str(tmp_path / "in"), str(tmp_path / "ckpt")
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").head()[1]

    def add_input(i: int) -> None:
        _rows(spark, i * PER_FILE).coalesce(1).write.mode("append").json(src)

    def run_stream() -> None:
        w = (spark.readStream.schema("id BIGINT, k STRING, v INT").json(src).writeStream.format("iceberg")
             .option("checkpointLocation", ckpt).trigger(availableNow=True))
        q = w.toTable(table) if target == "toTable" else w.option("path", location).start()
        q.awaitTermination(120)
        assert q.exception() is None
        if target == "path":
            # Committed through a table object loaded from the path, not the one the catalog
            # caches: the session sees the new snapshot after REFRESH TABLE (Iceberg's caching
            # catalog); the index's refresh loads the table anew, whatever the cache holds.
            spark.sql(f"REFRESH TABLE {table}")

    add_input(0)
    run_stream()
    spark.sql(f"CREATE BLOOM INDEX ice_sink ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    for i in (1, 2):
        files = len(_data_files(spark, table))
        add_input(i)
        run_stream()
        _await_refresher(spark)
        assert _covers(spark, root, "ice_sink", table)["data"]["indexedFiles"] > files
        k = _lookup(spark, table, "ice_sink", _key(i * PER_FILE + 6), [i * PER_FILE + 6])
        assert k[0] == 1 and k[1] > 1, k
        _same_everywhere(spark, table, [_key(1), _key(i * PER_FILE + 2), "absent"], [1, i * PER_FILE + 2])


# ---------------------------------------------------------------- manual, DROP TABLE


def test_a_manual_index_does_not_move(spark, root, table):
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_manual ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    spark.sql(f"CREATE BLOOM INDEX ice_follows ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    entries = log_entries(root, "ice_manual")
    _rows(spark, 3 * PER_FILE).writeTo(table).append()
    spark.sql(f"DELETE FROM {table} WHERE id = 1")
    spark.sql(f"CALL local.system.rewrite_data_files(table => '{table}', options => map('min-input-files', '2'))")
    _await_refresher(spark)
    assert log_entries(root, "ice_manual") == entries
    _covers(spark, root, "ice_follows", table)
    # The manual index answers for the files it covers (none now: compacted); the rest are read whole.
    key = _key(3 * PER_FILE + 8)
    assert same(spark, lambda: spark.table(table).where(F.col("k") == key).select("id")) == [(3 * PER_FILE + 8,)]
    _same_everywhere(spark, table, [_key(1), _key(2), key, "absent"], [1, 2])
    spark.sql("REFRESH BLOOM INDEX ice_manual")
    _covers(spark, root, "ice_manual", table)


def test_drop_table_leaves_the_index_orphaned(spark, root, table):
    """DROP TABLE of an Iceberg table is not seen (Iceberg's catalogs post no session catalog
    events): SHOW shows the index ORPHANED while no table has the name, REFRESH refuses it. A
    table created again under the name (here at the same location) is another table (another
    Iceberg table UUID): its scans do not use the index, an incremental refresh (the one a
    write queues) refuses it, and answers stay right; REFRESH ... FULL builds it for the new table."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_dropped ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").head()[1]
    spark.sql(f"DROP TABLE {table}")
    _await_refresher(spark)
    shown = {r.name: r.state for r in spark.sql("SHOW BLOOM INDEXES").collect()}
    assert shown["ice_dropped"] == "ORPHANED"
    with pytest.raises(AnalysisException) as e:
        spark.sql("REFRESH BLOOM INDEX ice_dropped")
    assert e.value.getCondition() == "BLOOM_INDEX_ORPHANED"
    versions = len(log_entries(root, "ice_dropped"))

    # Created again, the same columns and rows, at the same location.
    _create(spark, table)
    assert spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").head()[1] == location
    _fill(spark, table, files=3)
    _await_refresher(spark)
    assert len(log_entries(root, "ice_dropped")) == versions
    failed = BloomIndex(spark).describe("ice_dropped").get("automatic_refresh_failed", "")
    assert "created again" in failed, failed

    def make():
        return spark.table(table).where(F.col("k") == _key(7)).select("id")
    assert same(spark, make) == [(7,)]
    text = report(spark, make)
    assert kept(text, "ice_dropped") is None, text
    assert "not applied: ice_dropped:" in text and "created again" in text, text
    with pytest.raises(Exception, match="created again"):
        spark.sql("REFRESH BLOOM INDEX ice_dropped")

    spark.sql("REFRESH BLOOM INDEX ice_dropped FULL")
    _covers(spark, root, "ice_dropped", table)
    assert _lookup(spark, table, "ice_dropped", _key(7), [7])[0] == 1
    # And it follows the new table's writes again.
    _rows(spark, 3 * PER_FILE).writeTo(table).append()
    _await_refresher(spark)
    _covers(spark, root, "ice_dropped", table)
    assert "automatic_refresh_failed" not in BloomIndex(spark).describe("ice_dropped")


def test_rename_of_a_hadoop_catalog_table_is_refused_and_the_index_stays(spark, root, table):
    """ALTER TABLE ... RENAME TO: Iceberg's Hadoop catalog refuses it; the index is as it was,
    follows the table's writes and prunes. (Catalogs that rename: the next test.)"""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_renamed ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    entries = log_entries(root, "ice_renamed")
    with pytest.raises(Exception, match="(?i)rename"):
        spark.sql(f"ALTER TABLE {table} RENAME TO {table}_renamed")
    _await_refresher(spark)
    assert log_entries(root, "ice_renamed") == entries
    assert {r.name: r.state for r in spark.sql("SHOW BLOOM INDEXES").collect()}["ice_renamed"] == "ACTIVE"
    _rows(spark, 3 * PER_FILE).writeTo(table).append()
    _await_refresher(spark)
    _covers(spark, root, "ice_renamed", table)
    assert _lookup(spark, table, "ice_renamed", _key(3 * PER_FILE + 1), [3 * PER_FILE + 1])[0] == 1


_mem = [0]


@pytest.fixture(scope="module")
def renaming_catalog(spark, tmp_path_factory) -> str:
    """`hv`: Iceberg's Hive catalog (which renames tables and keeps their location) over an
    embedded metastore in a Derby database of a temporary folder, added to the session now (Spark
    loads a catalog on first use; Iceberg takes `hadoop.*` catalog options as the catalog's
    Hadoop settings). Iceberg's Hive commits lock through tables an embedded Derby metastore does
    not create: off, as in test_iceberg_migrate.py."""
    tmp = tmp_path_factory.mktemp("iceberg-hive")
    spark._jvm.java.lang.System.setProperty("derby.stream.error.file", str(tmp / "derby.log"))
    prefix = "spark.sql.catalog.hv"
    for k, v in {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "hive", ".warehouse": str(tmp / "warehouse"),
                 ".hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={tmp / 'metastore_db'};create=true",
                 ".hadoop.datanucleus.schema.autoCreateAll": "true",
                 ".hadoop.hive.metastore.schema.verification": "false",
                 ".hadoop.hive.metastore.warehouse.dir": str(tmp / "warehouse"),
                 ".hadoop.iceberg.engine.hive.lock-enabled": "false"}.items():
        spark.conf.set(prefix + k, v)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS hv.db")
    return "hv"


@pytest.fixture()
def mem_table(spark, renaming_catalog):
    """A fresh Iceberg table name in the renaming catalog, dropped after the test (under either name)."""
    _mem[0] += 1
    name = f"{renaming_catalog}.db.rn{_mem[0]}"
    yield name
    for t in (name, f"{name}_renamed"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def _lookup_id(spark, table: str, index: str, column: str, key, ids: list[int]) -> tuple[int, int]:
    """As _lookup, selecting only `id` (the table's k may be called otherwise now)."""
    def make():
        return spark.table(table).where(F.col(column) == key).select("id")
    assert sorted(r[0] for r in same(spark, make, str(key))) == sorted(ids)
    with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
        holding = spark.table(table).where(F.col(column) == key).select(F.countDistinct("_file")).head()[0]
    k = kept(report(spark, make), index)
    assert k is not None and k[0] == holding, (key, k, holding, report(spark, make))
    return k


def test_rename_of_a_table_keeps_its_indexes_attached(spark, root, mem_table):
    """ALTER TABLE ... RENAME TO through a catalog that renames (Iceberg's Hive catalog):
    right after the rename, in the same thread, each index over the table by name gets one log
    entry naming the new table (at its location, the same); SHOW shows it ACTIVE, queries on the
    new name prune, REFRESH and the refresh a write queues work. A table created afterwards under
    the old name is another table to the index."""
    table, renamed = mem_table, f"{mem_table}_renamed"
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX mem_rn ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX mem_rn_manual ON {table} FOR COLUMNS (k, v)")
    before = log_entries(root, "mem_rn")
    spark.sql(f"ALTER TABLE {table} RENAME TO {renamed}")
    for name in ("mem_rn", "mem_rn_manual"):
        entries = log_entries(root, name)
        last = entries[-1]
        assert last["operation"] == "RENAME TABLE" and last["state"] == "ACTIVE", last
        assert last["spec"]["source"]["table"] == renamed, last["spec"]["source"]
        assert last["spec"]["source"]["paths"] == entries[-2]["spec"]["source"]["paths"]
    assert len(log_entries(root, "mem_rn")) == len(before) + 1
    shown = {r.name: (r.state, r.source) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
    assert shown["mem_rn"][0] == "ACTIVE" and renamed in shown["mem_rn"][1], shown
    assert _lookup(spark, renamed, "mem_rn", _key(7), [7])[0] == 1

    # A write through the new name: the on_write index follows; REFRESH of the manual one works.
    _rows(spark, 3 * PER_FILE).writeTo(renamed).append()
    _await_refresher(spark)
    _covers(spark, root, "mem_rn", renamed)
    spark.sql("REFRESH BLOOM INDEX mem_rn_manual")
    _covers(spark, root, "mem_rn_manual", renamed)
    assert _lookup(spark, renamed, "mem_rn", _key(3 * PER_FILE + 1), [3 * PER_FILE + 1])[0] == 1
    _same_everywhere(spark, renamed, [_key(i) for i in (1, 60, 120, 170)], [1, 170])

    # Another table under the old name: not answered by the renamed table's index.
    _create(spark, table)
    _fill(spark, table, files=2)

    def make():
        return spark.table(table).where(F.col("k") == _key(7)).select("id")
    assert same(spark, make) == [(7,)]
    assert kept(report(spark, make), "mem_rn") is None
    assert {r.name: r.state for r in spark.sql("SHOW BLOOM INDEXES").collect()}["mem_rn"] == "ACTIVE"
    _covers(spark, root, "mem_rn", renamed)


def _rename_in_catalog(spark, old: str, new: str) -> None:
    """A rename this session's planner never sees (as another engine's): Spark's catalog plugin
    (Iceberg's SparkCatalog) asked directly, `TableCatalog.renameTable`, no ALTER TABLE planned."""
    jvm = spark._jvm
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog(old.split(".")[0])

    def ident(name: str):
        parts = name.split(".")[1:]
        ns = spark.sparkContext._gateway.new_array(jvm.java.lang.String, len(parts) - 1)
        for i, p in enumerate(parts[:-1]):
            ns[i] = p
        return jvm.org.apache.spark.sql.connector.catalog.Identifier.of(ns, parts[-1])
    catalog.renameTable(ident(old), ident(new))


def test_a_table_renamed_by_another_engine_is_followed_by_its_uuid(spark, root, mem_table):
    """A rename through Iceberg's catalog alone (no ALTER TABLE in this session): the index still
    names the old name, where another table is created at once (another UUID, at the same location
    in Iceberg's Hive catalog). SHOW finds the index's table by its UUID among the namespace's tables
    and follows it (one RENAME TABLE entry; ACTIVE under the new name); the renamed table's lookups
    are pruned and answer as without the index, the new table under the old name is never pruned by
    it; REFRESH builds the renamed table's new files."""
    table, renamed = mem_table, f"{mem_table}_renamed"
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ext_rn ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    before = log_entries(root, "ext_rn")
    _rename_in_catalog(spark, table, renamed)
    assert log_entries(root, "ext_rn") == before  # nothing heard
    # Another table under the old name, the same rows (the same keys in other files).
    _create(spark, table)
    _fill(spark, table, files=2)

    shown = {r.name: (r.state, r.source) for r in spark.sql("SHOW BLOOM INDEXES").collect()}
    assert shown["ext_rn"] == ("ACTIVE", renamed), shown
    entries = log_entries(root, "ext_rn")
    assert len(entries) == len(before) + 1
    last = entries[-1]
    assert last["operation"] == "RENAME TABLE" and last["state"] == "ACTIVE", last
    assert last["spec"]["source"]["table"] == renamed and last["data"] == before[-1]["data"]
    assert _lookup(spark, renamed, "ext_rn", _key(7), [7])[0] == 1
    _same_everywhere(spark, renamed, [_key(i) for i in (1, 60, 120)], [1, 120])

    def old_name():
        return spark.table(table).where(F.col("k") == _key(7)).select("id")
    assert same(spark, old_name) == [(7,)]
    assert kept(report(spark, old_name), "ext_rn") is None

    _rows(spark, 3 * PER_FILE).writeTo(renamed).append()
    spark.sql("REFRESH BLOOM INDEX ext_rn")
    _covers(spark, root, "ext_rn", renamed)
    assert _lookup(spark, renamed, "ext_rn", _key(3 * PER_FILE + 1), [3 * PER_FILE + 1])[0] == 1
    assert kept(report(spark, old_name), "ext_rn") is None
    assert BloomIndex(spark).describe("ext_rn").get("orphaned") is None


def test_a_table_renamed_and_dropped_by_another_engine_stays_orphaned(spark, root, mem_table):
    """Renamed through Iceberg's catalog, then REFRESH (which follows it first) works on the new
    name; dropped there afterwards: no table in the namespace has the UUID, so the index is ORPHANED
    (SHOW, DESCRIBE says why, REFRESH refuses it)."""
    table, renamed = mem_table, f"{mem_table}_renamed"
    _create(spark, table)
    _fill(spark, table, files=2)
    spark.sql(f"CREATE BLOOM INDEX ext_gone ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    _rename_in_catalog(spark, table, renamed)
    _rows(spark, 2 * PER_FILE).writeTo(renamed).append()
    spark.sql("REFRESH BLOOM INDEX ext_gone")
    assert log_entries(root, "ext_gone")[-1]["spec"]["source"]["table"] == renamed
    _covers(spark, root, "ext_gone", renamed)

    spark.sql(f"DROP TABLE {renamed}")
    assert {r.name: r.state for r in spark.sql("SHOW BLOOM INDEXES").collect()}["ext_gone"] == "ORPHANED"
    why = BloomIndex(spark).describe("ext_gone").get("orphaned", "")
    assert "no table of namespace hv.db" in why, why
    with pytest.raises(AnalysisException) as e:
        spark.sql("REFRESH BLOOM INDEX ext_gone")
    assert e.value.getCondition() == "BLOOM_INDEX_ORPHANED"


def test_refresh_after_a_column_rename(spark, root, table):
    """RENAME COLUMN k TO key: REFRESH (and the on-write refresh) builds the new files' column
    by its field id, under the index's column k; queries on key prune old and new files alike."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX col_rn ON {table} FOR COLUMNS (k)")
    spark.sql(f"CREATE BLOOM INDEX col_rn_ow ON {table} FOR COLUMNS (k, v) OPTIONS (refresh = 'on_write')")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")
    _rows(spark, 3 * PER_FILE).withColumnRenamed("k", "key").writeTo(table).append()
    _await_refresher(spark)
    assert "automatic_refresh_failed" not in BloomIndex(spark).describe("col_rn_ow")
    _covers(spark, root, "col_rn_ow", table)
    spark.sql("REFRESH BLOOM INDEX col_rn")
    last = _covers(spark, root, "col_rn", table)
    assert [c["name"] for c in last["data"]["decoding"]["columns"]] == ["k"]
    # (Both indexes prune alike; the report names the first: col_rn, then, once it is dropped, col_rn_ow.)
    for name in ("col_rn", "col_rn_ow"):
        assert _lookup_id(spark, table, name, "key", _key(3 * PER_FILE + 4), [3 * PER_FILE + 4])[0] == 1
        assert _lookup_id(spark, table, name, "key", _key(4), [4])[0] == 1
        # Nothing new: a refresh commits nothing.
        versions = len(log_entries(root, name))
        spark.sql(f"REFRESH BLOOM INDEX {name}")
        assert len(log_entries(root, name)) == versions
        if name == "col_rn":
            spark.sql("DROP BLOOM INDEX col_rn")
    # A full rebuild follows the rename too.
    spark.sql("REFRESH BLOOM INDEX col_rn_ow FULL")
    _covers(spark, root, "col_rn_ow", table)
    assert _lookup_id(spark, table, "col_rn_ow", "key", _key(3 * PER_FILE + 9), [3 * PER_FILE + 9])[0] == 1
    assert _lookup_id(spark, table, "col_rn_ow", "key", _key(9), [9])[0] == 1


def test_refresh_after_a_rename_and_a_new_column_under_the_old_name(spark, root, table):
    """k renamed to key, then a new column k added and given the old values: the index's k (the
    field id of key) never answers for the new k, and an incremental REFRESH builds key's new
    files, not the new k's. A column dropped and added again (no rename) is still refused by an
    incremental REFRESH (tests/iceberg/test_iceberg.py, test_rename_keeps_index_drop_and_readd_does_not)."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX col_re ON {table} FOR COLUMNS (k)")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN k STRING")
    # New rows: key holds new values, the new k holds values of the old k (of ids 0..49).
    spark.range(3 * PER_FILE, 4 * PER_FILE, numPartitions=1) \
        .selectExpr("id", f"{KEY} AS key", "cast(id % 13 AS int) AS v",
                    f"concat('key-', cast((id - {3 * PER_FILE}) * 7919 % 100003 AS string)) AS k") \
        .writeTo(table).append()
    spark.sql("REFRESH BLOOM INDEX col_re")
    _covers(spark, root, "col_re", table)
    # The new k: 'key-(7*7919)' is in the new file only (and in key of the first file).
    def new_k():
        return spark.table(table).where(F.col("k") == _key(7)).select("id")
    assert same(spark, new_k) == [(3 * PER_FILE + 7,)]
    assert kept(report(spark, new_k), "col_re") is None
    assert _lookup_id(spark, table, "col_re", "key", _key(7), [7])[0] == 1
    assert _lookup_id(spark, table, "col_re", "key", _key(3 * PER_FILE + 7), [3 * PER_FILE + 7])[0] == 1


# ---------------------------------------------------------------- replaces, TRUNCATE TABLE


def _select(lo: int, files: int = 3, k: str = f"{KEY} AS k", ident: str = "id") -> str:
    """`files` data files of PER_FILE rows from id lo (one task each: range's partitions)."""
    return (f"SELECT {ident}, {k}, cast(id % 13 AS int) AS v "
            f"FROM range({lo}, {lo + files * PER_FILE}, 1, {files})")


def _uuid(spark, table: str) -> str:
    return str(spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table).uuid())


def test_replaces_refresh_the_index(spark, root, table):
    """CREATE OR REPLACE / REPLACE TABLE ... AS SELECT, DataFrameWriterV2 replace and
    createOrReplace, DataFrameWriter saveAsTable in overwrite mode: Spark plans each as a
    ReplaceTableAsSelect. Iceberg's replace keeps the table's UUID (and a column's field id where
    a column of its name was there): the index is the same table's and follows it."""
    _create(spark, table)
    _fill(spark, table, files=3)
    uuid = _uuid(spark, table)
    spark.sql(f"CREATE BLOOM INDEX ice_rp ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX ice_rp_bg ON {table} FOR COLUMNS (id) OPTIONS (refresh = 'background')")

    def frame(lo: int):
        return spark.range(lo, lo + 3 * PER_FILE, numPartitions=3).selectExpr("id", f"{KEY} AS k", "cast(id % 13 AS int) AS v")

    writes = [
        ("CREATE OR REPLACE TABLE AS SELECT", lambda lo: spark.sql(
            f"CREATE OR REPLACE TABLE {table} USING iceberg AS {_select(lo)}")),
        # Another column order: the columns keep their field ids (by name).
        ("REPLACE TABLE AS SELECT, columns reordered", lambda lo: spark.sql(
            f"REPLACE TABLE {table} USING iceberg AS SELECT k, id, v FROM ({_select(lo)})")),
        ("DataFrameWriterV2 replace", lambda lo: frame(lo).writeTo(table).using("iceberg").replace()),
        ("DataFrameWriterV2 createOrReplace", lambda lo: frame(lo).writeTo(table).createOrReplace()),
        ("DataFrameWriter saveAsTable overwrite", lambda lo: frame(lo).write.format("iceberg").mode("overwrite")
         .saveAsTable(table)),
    ]
    previous = 1
    for n, (what, write) in enumerate(writes):
        lo = (20 + 3 * n) * PER_FILE
        write(lo)
        _await_refresher(spark)
        assert _uuid(spark, table) == uuid, what
        for name in ("ice_rp", "ice_rp_bg"):
            assert _covers(spark, root, name, table)["data"]["indexedFiles"] == 3, what
            assert "automatic_refresh_failed" not in BloomIndex(spark).describe(name), what
        k = _lookup(spark, table, "ice_rp", _key(lo + PER_FILE + 7), [lo + PER_FILE + 7])
        assert k[0] == 1 and k[1] > 1, (what, k)  # the index, not Iceberg's metrics, left one file
        assert _lookup(spark, table, "ice_rp_bg", lo + 8, [lo + 8], column="id")[0] == 1, what
        # The rows the replace replaced are gone.
        assert same(spark, lambda p=previous: spark.table(table).where(F.col("k") == _key(p))) == [], what
        _same_everywhere(spark, table, [_key(lo + 1), _key(lo + 2 * PER_FILE + 3), _key(previous), "absent"],
                         [lo + 2, previous])
        previous = lo + 1


def test_replace_changing_a_column_type_answers_right(spark, root, table):
    """A REPLACE that gives an indexed column another type (the column keeps its field id: its
    name was there): the index's refresh refuses it (DESCRIBE shows why), its scans do not use
    it, and every query answers as with pruning off; back to the indexed type, it follows again."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_tk ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX ice_ti ON {table} FOR COLUMNS (id) OPTIONS (refresh = 'on_write')")

    # id: BIGINT -> STRING. k's index follows; id's refresh is refused.
    lo = 10 * PER_FILE
    spark.sql(f"REPLACE TABLE {table} USING iceberg AS {_select(lo, ident='cast(id AS string) AS id')}")
    _await_refresher(spark)
    assert dict((f.name, f.dataType.simpleString()) for f in spark.table(table).schema.fields)["id"] == "string"
    _covers(spark, root, "ice_tk", table)
    failed = BloomIndex(spark).describe("ice_ti").get("automatic_refresh_failed", "")
    assert "BLOOM_INDEX_SOURCE_COLUMN_TYPE_CHANGED" in failed or "type was changed" in failed, failed
    assert _lookup(spark, table, "ice_tk", _key(lo + 7), [str(lo + 7)])[0] == 1  # id reads as a string now
    for i in (lo + 4, 4, 9999):
        for value in (str(i), i):
            same(spark, lambda value=value: spark.table(table).where(F.col("id") == value), f"id {value!r}")
    text = report(spark, lambda: spark.table(table).where(F.col("id") == str(lo + 4)))
    assert kept(text, "ice_ti") is None, text
    _same_everywhere(spark, table, [_key(lo + 1), _key(1), "absent"], [])

    # k: STRING -> INT. Now k's refresh is refused too; answers stay right.
    lo = 20 * PER_FILE
    spark.sql(f"REPLACE TABLE {table} USING iceberg AS {_select(lo, k='cast(id % 1000 AS int) AS k')}")
    _await_refresher(spark)
    failed = BloomIndex(spark).describe("ice_tk").get("automatic_refresh_failed", "")
    assert "BLOOM_INDEX_SOURCE_COLUMN_TYPE_CHANGED" in failed or "type was changed" in failed, failed
    for value in (lo % 1000 + 5, 17, 999999):
        same(spark, lambda value=value: spark.table(table).where(F.col("k") == value), f"k {value}")
    text = report(spark, lambda: spark.table(table).where(F.col("k") == 17))
    assert kept(text, "ice_tk") is None, text
    for i in (lo + 3, 3):
        same(spark, lambda i=i: spark.table(table).where(F.col("id") == i), str(i))

    # Back to the indexed types: both indexes follow again.
    lo = 30 * PER_FILE
    spark.sql(f"CREATE OR REPLACE TABLE {table} USING iceberg AS {_select(lo)}")
    _await_refresher(spark)
    for name in ("ice_tk", "ice_ti"):
        assert _covers(spark, root, name, table)["data"]["indexedFiles"] == 3
        assert "automatic_refresh_failed" not in BloomIndex(spark).describe(name), name
    k = _lookup(spark, table, "ice_tk", _key(lo + 7), [lo + 7])
    assert k[0] == 1 and k[1] > 1, k
    assert _lookup(spark, table, "ice_ti", lo + 8, [lo + 8], column="id")[0] == 1
    _same_everywhere(spark, table, [_key(lo + 1), _key(20 * PER_FILE + 1), _key(1), "absent"], [lo + 2, 2])


def test_truncate_and_replace_without_a_query_empty_the_index(spark, root, table):
    """TRUNCATE TABLE (Spark's TruncateTable: Iceberg deletes every row) and REPLACE TABLE
    without a query (ReplaceTable): afterwards the index holds no file, queries answer as without
    it, and the next write's files are indexed."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX ice_tr ON {table} FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    uuid = _uuid(spark, table)
    for n, (what, empty) in enumerate([
            ("TRUNCATE TABLE", lambda: spark.sql(f"TRUNCATE TABLE {table}")),
            ("REPLACE TABLE", lambda: spark.sql(f"REPLACE TABLE {table} (id BIGINT, k STRING, v INT) USING iceberg"))]):
        empty()
        _await_refresher(spark)
        assert _uuid(spark, table) == uuid, what
        assert _data_files(spark, table) == set(), what
        # TRUNCATE commits a snapshot without files; REPLACE TABLE leaves the table without one.
        assert (_current_snapshot(spark, table) is None) == (what == "REPLACE TABLE"), what
        assert _covers(spark, root, "ice_tr", table)["data"]["indexedFiles"] == 0, what
        assert same(spark, lambda: spark.table(table).where(F.col("k") == _key(1))) == [], what
        _same_everywhere(spark, table, [_key(1), _key(3 * PER_FILE + 1), "absent"], [1, 3 * PER_FILE + 1])
        # The next writes are indexed.
        lo = (3 + 2 * n) * PER_FILE
        _fill(spark, table, files=2, start=3 + 2 * n)
        _await_refresher(spark)
        assert _covers(spark, root, "ice_tr", table)["data"]["indexedFiles"] == 2, what
        k = _lookup(spark, table, "ice_tr", _key(lo + 7), [lo + 7])
        assert k[0] == 1 and k[1] > 1, (what, k)
        _same_everywhere(spark, table, [_key(lo + 1), _key(1), "absent"], [lo + 2, 1])


def test_join_filter_after_a_column_rename(spark, root, table):
    """A join on the renamed column uses the index's global filter of the column it was (the
    same field id): the other side's rows with no match are dropped, the answer is the same."""
    _create(spark, table)
    _fill(spark, table, files=3)
    spark.sql(f"CREATE BLOOM INDEX col_rn_g ON {table} FOR COLUMNS (k) OPTIONS (global = true)")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN k TO key")
    spark.createDataFrame([(_key(5), 1), ("zzz", 2)], "k STRING, w INT").createOrReplaceTempView("probe_rn")
    q = f"SELECT p.w, f.id FROM probe_rn p JOIN {table} f ON p.k = f.key"
    with confs(spark, {"spark.bloomindex.joinFilter.enabled": "true"}):
        assert same(spark, lambda: spark.sql(q), q) == [(1, 5)]
        assert "bloom_might_contain" in spark.sql(q)._jdf.queryExecution().optimizedPlan().toString()
    with confs(spark, {"spark.bloomindex.joinFilter.enabled": "false"}):
        assert [tuple(r) for r in spark.sql(q).collect()] == [(1, 5)]
    # bloom_might_contain names the column as it was indexed.
    with confs(spark, {"spark.bloomindex.joinFilter.enabled": "false"}):
        got = spark.sql(f"SELECT bloom_might_contain('col_rn_g', 'k', '{_key(5)}') AS a, "
                        "bloom_might_contain('col_rn_g', 'k', 'zzz') AS b").head()
        assert got.a is True and got.b is False, got
