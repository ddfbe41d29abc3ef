"""Issue 29: indexes that follow their source's writes (`OPTIONS (refresh = 'on_write' | 'background'
| 'manual')`, default `spark.bloomindex.refresh.default`, which this test session sets to manual).

After every kind of file source write covered here (DataFrame `save` in append and overwrite mode,
`INSERT INTO`, `INSERT OVERWRITE` of a static and of a dynamic partition, `insertInto`,
`saveAsTable` append), an `on_write` index covers exactly the source's current files as soon as
the write returns, a lookup of a value only the new file holds keeps one file, and each query
answers as with the index off. A `manual` index does not move; a `background` one catches up on
the driver's refresher thread; a refresh made to fail leaves the write done, the index as it was
(answers still right) and the failure in DESCRIBE; Delta writes are refreshed after they commit
(the session's query execution listener)."""

from __future__ import annotations

import os
from decimal import Decimal

import pytest

from bloomindex import BloomIndex
from index_helpers import confs, log_entries, table_files
from test_decoding_regressions import kept, report, same

FAULT = "spark.internal.bloomindex.test.failAfterDataWrite"


def _await_refresher(spark) -> None:
    """Waits for Spark's listener bus (the write and streaming listeners are called there), then
    for the background refresher."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    assert spark._jvm.bloomindex.actions.WriteEvents.awaitIdle(60_000), "the background refresher did not finish"


def _files(spark, df) -> set[str]:
    return {os.path.realpath(p.replace("file://", "").replace("file:", "")) for p in df.inputFiles()}


def _covers(root: str, name: str, files: set[str], spark=None) -> dict:
    """The index's newest entry is ACTIVE and holds exactly as many files as the source has."""
    last = log_entries(root, name)[-1]
    why = BloomIndex(spark).describe(name).get("automatic_refresh_failed") if spark is not None else None
    assert last["state"] == "ACTIVE", ([(e["version"], e["state"], e["operation"]) for e in log_entries(root, name)], why)
    assert last["data"]["indexedFiles"] == len(files), (last["data"]["indexedFiles"], len(files))
    return last


def _rows_of(k: str, n: int = 1):
    return [(k + ("" if i == 0 else f"-{i}"), i) for i in range(n)]


def _lookup(spark, make, index: str, expected: list, files: int) -> None:
    """Same rows with the index on and off; the index keeps as many files as hold the value."""
    assert sorted(same(spark, make)) == sorted(expected)
    k = kept(report(spark, make), index)
    assert k is not None and k[0] == (1 if expected else 0) and k[1] == files, k


def test_on_write_follows_path_writes_in_every_mode(spark, root, tmp_path):
    p = str(tmp_path / "events")
    for i in range(3):
        spark.createDataFrame(_rows_of(f"k{i}", 5), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    spark.sql(f"CREATE BLOOM INDEX ow ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    assert BloomIndex(spark).describe("ow")["refresh"] == "on_write"
    read = lambda: spark.read.parquet(p)  # noqa: E731
    for i in range(3, 6):
        before = len(log_entries(root, "ow"))
        spark.createDataFrame(_rows_of(f"k{i}", 5), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
        entry = _covers(root, "ow", _files(spark, read()), spark)
        assert entry["operation"] == "REFRESH INCREMENTAL" and len(log_entries(root, "ow")) > before
        _lookup(spark, lambda i=i: read().where(f"k = 'k{i}'"), "ow", [(f"k{i}", 0)], i + 1)
    # A write whose query has a shuffle (adaptive execution under the planned write).
    spark.createDataFrame(_rows_of("shuffled", 40), "k STRING, v INT").repartition(2, "v").write.mode("append").parquet(p)
    _covers(root, "ow", _files(spark, read()))
    assert same(spark, lambda: read().where("k = 'shuffled-7'")) == [("shuffled-7", 7)]
    # Overwrite: the old files are gone from the index, the new ones in it.
    spark.createDataFrame(_rows_of("new", 3), "k STRING, v INT").coalesce(1).write.mode("overwrite").parquet(p)
    _covers(root, "ow", _files(spark, read()))
    _lookup(spark, lambda: read().where("k = 'new'"), "ow", [("new", 0)], 1)
    assert same(spark, lambda: read().where("k = 'k1'")) == []


def test_on_write_follows_writes_into_a_partition_folder_by_path(spark, root, tmp_path):
    """Writes by path into one partition's folder of an indexed folder (append, then overwrite of
    that partition) refresh the folder's index: it covers the folder's files after each, and a
    lookup of a value only the new file holds keeps one file, through the folder and through the
    partition's folder."""
    p = str(tmp_path / "parts")
    for part in ("a", "b"):
        spark.createDataFrame(_rows_of(f"{part}0", 4), "k STRING, v INT").coalesce(1).write.parquet(os.path.join(p, f"part={part}"))
    spark.sql(f"CREATE BLOOM INDEX owp ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    read = lambda: spark.read.parquet(p)  # noqa: E731
    inside = lambda: spark.read.parquet(os.path.join(p, "part=b"))  # noqa: E731
    spark.createDataFrame(_rows_of("b1", 4), "k STRING, v INT").coalesce(1).write.mode("append").parquet(os.path.join(p, "part=b"))
    entry = _covers(root, "owp", _files(spark, read()), spark)
    assert entry["operation"] == "REFRESH INCREMENTAL", entry["operation"]
    _lookup(spark, lambda: read().where("k = 'b1'"), "owp", [("b1", 0, "b")], 3)
    _lookup(spark, lambda: inside().where("k = 'b1'"), "owp", [("b1", 0)], 2)
    spark.createDataFrame(_rows_of("b2", 4), "k STRING, v INT").coalesce(1).write.mode("overwrite").parquet(os.path.join(p, "part=b"))
    _covers(root, "owp", _files(spark, read()), spark)
    _lookup(spark, lambda: inside().where("k = 'b2-3'"), "owp", [("b2-3", 3)], 1)
    assert same(spark, lambda: read().where("k IN ('b1', 'b0', 'a0-1')")) == [("a0-1", 1, "a")]


def test_on_write_follows_inserts_into_a_catalog_table(spark, root, tmp_path):
    spark.sql("DROP TABLE IF EXISTS ow_t")
    spark.sql(f"CREATE TABLE ow_t (k STRING, v INT, p INT) USING parquet PARTITIONED BY (p) "
              f"LOCATION '{tmp_path / 'ow_t'}'")
    try:
        spark.sql("INSERT INTO ow_t VALUES ('a', 1, 1), ('b', 2, 2)")
        spark.sql("CREATE BLOOM INDEX ow_t_ix ON ow_t FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
        table = lambda: spark.table("ow_t")  # noqa: E731

        def check(key: str, rows: list) -> None:
            files = table_files(spark, "ow_t")
            _covers(root, "ow_t_ix", files)
            _lookup(spark, lambda: table().where(f"k = '{key}'"), "ow_t_ix", rows, len(files))

        spark.sql("INSERT INTO ow_t VALUES ('c', 3, 1)")
        check("c", [("c", 3, 1)])
        spark.sql("INSERT OVERWRITE ow_t PARTITION (p = 1) SELECT 'd', 4")  # static: p=1's a and c gone
        check("d", [("d", 4, 1)])
        assert same(spark, lambda: table().where("k = 'a'")) == []
        with confs(spark, {"spark.sql.sources.partitionOverwriteMode": "dynamic"}):
            spark.sql("INSERT OVERWRITE ow_t SELECT 'e', 5, 2")  # dynamic: only p=2 replaced
        check("e", [("e", 5, 2)])
        assert same(spark, lambda: table().where("k IN ('b', 'd')")) == [("d", 4, 1)]
        spark.createDataFrame([("f", 6, 3)], "k STRING, v INT, p INT").write.insertInto("ow_t")
        check("f", [("f", 6, 3)])
        spark.createDataFrame([("g", 7, 3)], "k STRING, v INT, p INT").write.mode("append").partitionBy("p").saveAsTable("ow_t")
        check("g", [("g", 7, 3)])
    finally:
        spark.sql("DROP TABLE IF EXISTS ow_t")


def test_a_manual_index_does_not_move(spark, root, tmp_path):
    p = str(tmp_path / "manual")
    spark.createDataFrame(_rows_of("m0", 3), "k STRING, v INT").coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX man ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    entries = log_entries(root, "man")
    spark.createDataFrame(_rows_of("m1", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    assert log_entries(root, "man") == entries
    assert BloomIndex(spark).describe("man")["refresh"] == "manual"
    # The new file is read whole: found, and the index keeps it.
    assert same(spark, lambda: spark.read.parquet(p).where("k = 'm1'")) == [("m1", 0)]


def test_background_refresh_catches_up_and_queries_stay_right(spark, root, tmp_path):
    p = str(tmp_path / "bg")
    spark.createDataFrame(_rows_of("b0", 3), "k STRING, v INT").coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX bg ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'background')")
    for i in range(1, 5):
        spark.createDataFrame(_rows_of(f"b{i}", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
        # A query while the refresher may be at work answers as without the index.
        assert same(spark, lambda i=i: spark.read.parquet(p).where(f"k = 'b{i}'")) == [(f"b{i}", 0)]
    _await_refresher(spark)
    _covers(root, "bg", _files(spark, spark.read.parquet(p)))
    _lookup(spark, lambda: spark.read.parquet(p).where("k = 'b4'"), "bg", [("b4", 0)], 5)


TZ = "spark.sql.session.timeZone"


def _recorded_tz(root: str, name: str):
    """The newest ACTIVE version of `name` and the session time zone its column `ts` records."""
    e = [x for x in log_entries(root, name) if x["state"] == "ACTIVE"][-1]
    col = next(c for c in e["data"]["decoding"]["columns"] if c["name"] == "ts")
    return e, col.get("settings", {}).get(TZ)


def _wrong_lookups(spark, table: str) -> list:
    """Each distinct `ts` of `table` looked up with the index on and off: the ones that differ."""
    with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
        micros = [r[0] for r in spark.sql(f"SELECT DISTINCT unix_micros(ts) FROM {table} WHERE ts IS NOT NULL").collect()]
    assert micros
    bad = []
    for m in micros:
        q = f"SELECT count(*) FROM {table} WHERE ts = timestamp_micros({m})"
        with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
            off = spark.sql(q).collect()[0][0]
        on = spark.sql(q).collect()[0][0]
        if on != off:
            bad.append((m, on, off))
    return bad


def test_a_background_refresh_builds_with_the_settings_its_write_had(spark, root, tmp_path):
    """A CSV table of timestamps written without an offset (what they are depends on the session
    time zone), indexed with refresh = 'background'. The user's next statement after a write
    changes the time zone while the refresh is queued or running. The refresh used the session's
    live settings: queued behind another, it ran under the new zone and failed its decoding check
    (the index stayed behind); racing a SET (here a thread switching the zone to and fro), it
    recorded one zone over filters built under the other, and lookups under the recorded zone lost
    rows (wrong answers in every trial of an audit's run). It runs on the settings of its write."""
    p = tmp_path / "tz_csv"
    p.mkdir()

    def hand_written(i: int) -> None:
        (p / f"hand-{i:03d}.csv").write_text(f"{i},2024-01-{1 + i % 27:02d}T{i % 24:02d}:00:00\n")

    for i in range(3):
        hand_written(i)
    spark.sql(f"CREATE TABLE tz_csv (k INT, ts TIMESTAMP) USING csv LOCATION '{p}'")
    spark.sql("CREATE BLOOM INDEX tz_ix ON tz_csv FOR COLUMNS (ts) OPTIONS (refresh = 'background')")
    blocker = str(tmp_path / "blocker")
    spark.createDataFrame(_rows_of("x", 2), "k STRING, v INT").coalesce(1).write.parquet(blocker)
    spark.sql(f"CREATE BLOOM INDEX tz_blocker ON parquet.`{blocker}` FOR COLUMNS (k) OPTIONS (refresh = 'background')")
    try:
        # Queued behind a slow refresh (its build's tasks wait 3 s), then the zone changes.
        with confs(spark, {"spark.internal.bloomindex.test.buildTaskDelayMs": "3000"}):
            spark.createDataFrame(_rows_of("y", 2), "k STRING, v INT").coalesce(1).write.mode("append").parquet(blocker)
        hand_written(10)
        spark.sql("INSERT INTO tz_csv VALUES (100, NULL)")
        spark.conf.set(TZ, "Asia/Tokyo")
        _await_refresher(spark)
        spark.conf.set(TZ, "UTC")
        entry, tz = _recorded_tz(root, "tz_ix")
        assert BloomIndex(spark).describe("tz_ix").get("automatic_refresh_failed") is None
        assert entry["operation"] == "REFRESH INCREMENTAL" and entry["data"]["indexedFiles"] == 5, entry["data"]
        assert tz in (None, "UTC"), tz
        assert _wrong_lookups(spark, "tz_csv") == []
        # Racing: a thread switches the zone while the refresh runs.
        import threading
        import time

        for trial in range(3):
            spark.conf.set(TZ, "UTC")
            hand_written(20 + trial)
            stop = threading.Event()
            spark.sql(f"INSERT INTO tz_csv VALUES ({200 + trial}, NULL)")

            def switch():
                n = 0
                while not stop.is_set():
                    spark.conf.set(TZ, ("Asia/Tokyo", "UTC")[n % 2])
                    n += 1
                    time.sleep(0.003)

            t = threading.Thread(target=switch)
            t.start()
            try:
                _await_refresher(spark)
            finally:
                stop.set()
                t.join()
            entry, tz = _recorded_tz(root, "tz_ix")
            spark.conf.set(TZ, tz or "UTC")
            assert entry["data"]["indexedFiles"] == 7 + 2 * trial, (trial, entry["data"])
            assert _wrong_lookups(spark, "tz_csv") == [], (trial, tz)
    finally:
        spark.conf.set(TZ, "UTC")
        spark.sql("DROP TABLE IF EXISTS tz_csv")


def test_a_failed_refresh_never_fails_the_write(spark, root, tmp_path):
    p = str(tmp_path / "fails")
    spark.createDataFrame(_rows_of("f0", 3), "k STRING, v INT").coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX fl ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    with confs(spark, {FAULT: "true"}):
        spark.createDataFrame(_rows_of("f1", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    assert "failed" not in BloomIndex(spark).describe("fl")["state"].lower()
    failure = BloomIndex(spark).describe("fl").get("automatic_refresh_failed", "")
    assert "failAfterDataWrite" in failure, failure
    # The write is there and found: the new file is not covered, so it is read.
    assert same(spark, lambda: spark.read.parquet(p).where("k = 'f1'")) == [("f1", 0)]
    # The next write catches up (the query above, finding the index behind, may have queued a
    # background refresh that caught up first: the two do not run at once).
    spark.createDataFrame(_rows_of("f2", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    _await_refresher(spark)
    _covers(root, "fl", _files(spark, spark.read.parquet(p)), spark)
    assert "automatic_refresh_failed" not in BloomIndex(spark).describe("fl")
    _lookup(spark, lambda: spark.read.parquet(p).where("k = 'f1'"), "fl", [("f1", 0)], 3)


def test_files_written_by_another_engine_queue_a_refresh(spark, root, tmp_path):
    """Files the session did not write (copied in by another engine): a query that finds a
    following index covering too few of the scan's files queues a background refresh; a manual
    index is left alone."""
    import shutil
    p, other = str(tmp_path / "elsewhere"), str(tmp_path / "other")
    spark.createDataFrame(_rows_of("e0", 3), "k STRING, v INT").coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX eng ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX eng_manual ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    manual = log_entries(root, "eng_manual")
    spark.createDataFrame(_rows_of("e1", 3), "k STRING, v INT").coalesce(1).write.parquet(other)
    for f in os.listdir(other):
        if f.endswith(".parquet"):
            shutil.copy(os.path.join(other, f), os.path.join(p, "part-99999-copied.parquet"))
    assert same(spark, lambda: spark.read.parquet(p).where("k = 'e1'")) == [("e1", 0)]
    _await_refresher(spark)
    _covers(root, "eng", _files(spark, spark.read.parquet(p)), spark)
    assert log_entries(root, "eng_manual") == manual
    # e0's file: the refreshed index skips the copied file, which the manual one does not cover.
    assert kept(report(spark, lambda: spark.read.parquet(p).where("k = 'e0'")), "eng") == (1, 2)


def test_the_mode_is_changed_with_alter(spark, root, tmp_path):
    """ALTER BLOOM INDEX ... SET OPTIONS (refresh = ...) and BloomIndex.set_refresh: a new log
    entry, the data kept, the next write followed or not as the new mode says."""
    from pyspark.errors import AnalysisException
    p = str(tmp_path / "alter")
    spark.createDataFrame(_rows_of("a0", 3), "k STRING, v INT").coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX alt ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
    [row] = spark.sql("ALTER BLOOM INDEX alt SET OPTIONS (refresh = 'on_write')").collect()
    entry = log_entries(root, "alt")[-1]
    assert row[0] == entry["version"] == 2 and entry["operation"] == "ALTER"
    assert entry["data"] == log_entries(root, "alt")[1]["data"]
    spark.createDataFrame(_rows_of("a1", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    _covers(root, "alt", _files(spark, spark.read.parquet(p)), spark)
    bi = BloomIndex(spark)
    bi.set_refresh("alt", "On_Write")  # any case, as SQL takes it
    assert bi.describe("alt")["refresh"] == "on_write"
    bi.set_refresh("alt", "manual")
    assert bi.describe("alt")["refresh"] == "manual"
    entries = log_entries(root, "alt")
    spark.createDataFrame(_rows_of("a2", 3), "k STRING, v INT").coalesce(1).write.mode("append").parquet(p)
    assert log_entries(root, "alt") == entries
    for sql, condition in (("ALTER BLOOM INDEX alt SET OPTIONS (fpp = 0.1)", "BLOOM_INDEX_UNKNOWN_OPTION"),
                           ("ALTER BLOOM INDEX alt SET OPTIONS (refresh = 'often')", "BLOOM_INDEX_INVALID_OPTION_VALUE"),
                           ("ALTER BLOOM INDEX nope SET OPTIONS (refresh = 'manual')", "BLOOM_INDEX_NOT_FOUND")):
        with pytest.raises(AnalysisException) as e:
            spark.sql(sql)
        assert e.value.getCondition() == condition, (sql, e.value)
    assert log_entries(root, "alt") == entries


def test_refresh_option_is_checked(spark, root, tmp_path):
    p = str(tmp_path / "opt")
    spark.createDataFrame(_rows_of("o", 2), "k STRING, v INT").write.parquet(p)
    from pyspark.errors import AnalysisException
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_INVALID_OPTION_VALUE") as e:
        spark.sql(f"CREATE BLOOM INDEX bad ON parquet.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'sometimes')")
    assert "on_write" in str(e.value)
    # The Python form and the session default.
    BloomIndex(spark).create("py_ow", p, ["k"], source_format="parquet", refresh="on_write")
    assert BloomIndex(spark).describe("py_ow")["refresh"] == "on_write"
    with confs(spark, {"spark.bloomindex.refresh.default": "background"}):
        spark.sql(f"CREATE BLOOM INDEX dflt ON parquet.`{p}` FOR COLUMNS (k)")
    assert BloomIndex(spark).describe("dflt")["refresh"] == "background"


@pytest.mark.delta
def test_delta_writes_refresh_the_index_after_they_commit(spark, root, tmp_path):
    p = str(tmp_path / "delta_ow")
    for i in range(2):
        spark.createDataFrame(_rows_of(f"d{i}", 3), "k STRING, v INT").coalesce(1).write.format("delta") \
            .mode("append").save(p)
    spark.sql(f"CREATE BLOOM INDEX dow ON delta.`{p}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    read = lambda: spark.read.format("delta").load(p)  # noqa: E731
    spark.createDataFrame(_rows_of("d2", 3), "k STRING, v INT").coalesce(1).write.format("delta").mode("append").save(p)
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    assert same(spark, lambda: read().where("k = 'd2'")) == [("d2", 0)]
    assert kept(report(spark, lambda: read().where("k = 'd2'")), "dow")[0] == 1
    spark.sql(f"INSERT INTO delta.`{p}` VALUES ('d3', 0)")
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    spark.sql(f"DELETE FROM delta.`{p}` WHERE k = 'd0-1'")
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    spark.sql(f"UPDATE delta.`{p}` SET v = 7 WHERE k = 'd1'")
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    spark.createDataFrame([("d1-1", 8), ("m0", 9)], "k STRING, v INT").createOrReplaceTempView("ow_src")
    spark.sql(f"MERGE INTO delta.`{p}` t USING ow_src s ON t.k = s.k "
              "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    spark.sql(f"OPTIMIZE delta.`{p}`")
    _await_refresher(spark)
    _covers(root, "dow", _files(spark, read()))
    for k, rows in (("d3", [("d3", 0)]), ("d0-1", []), ("d0-2", [("d0-2", 2)]), ("d1", [("d1", 7)]),
                    ("d1-1", [("d1-1", 8)]), ("m0", [("m0", 9)])):
        assert same(spark, lambda k=k: read().where(f"k = '{k}'")) == rows


@pytest.mark.parametrize("fmt", ["parquet", pytest.param("delta", marks=pytest.mark.delta)])
def test_a_streaming_sink_refreshes_after_its_batches(spark, root, tmp_path, fmt):
    """Structured Streaming: a file or Delta sink's micro-batches queue a refresh of the indexes
    over its folder (the sink's description in the query's progress)."""
    src, out, ckpt = str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "ckpt")

    def add_input(i: int) -> None:
        spark.createDataFrame(_rows_of(f"s{i}", 3), "k STRING, v INT").coalesce(1).write.mode("append").json(src)

    def run_stream() -> None:
        q = (spark.readStream.schema("k STRING, v INT").json(src).writeStream.format(fmt)
             .option("checkpointLocation", ckpt).trigger(availableNow=True).start(out))
        q.awaitTermination(120)

    add_input(0)
    run_stream()
    spark.sql(f"CREATE BLOOM INDEX sink_ix ON {fmt}.`{out}` FOR COLUMNS (k) OPTIONS (refresh = 'background')")
    read = lambda: spark.read.format(fmt).load(out)  # noqa: E731
    before = _files(spark, read())
    add_input(1)
    run_stream()
    _await_refresher(spark)
    files = _files(spark, read())
    assert len(files) > len(before)
    _covers(root, "sink_ix", files, spark)
    assert same(spark, lambda: read().where("k = 's1'")) == [("s1", 0)]
    assert kept(report(spark, lambda: read().where("k = 's1'")), "sink_ix")[0] == 1


def _from_write(spark, name: str) -> int:
    """Files whose filters the last automatic refresh of `name` took from the write's own tasks."""
    return spark._jvm.bloomindex.actions.WriteEvents.filesFromWriteTasks(spark._jsparkSession, name)


def _filters(spark, root: str, name: str) -> dict:
    """(file, column) -> (rows, nulls, distinct values, filter bytes) of the index's ACTIVE data."""
    from index_helpers import index_rows
    return {(os.path.realpath(r["file_path"].replace("file://", "").replace("file:", "")), r["column"]):
            (r["row_count"], r["null_count"], r["ndv"], bytes(r["filter"]), r["built_from"]) for r in index_rows(spark, root, name)}


_WT_COLUMNS = "k, s, d, b, s USING TOKENS"


def test_write_tasks_build_the_filters_a_refresh_reads_bit_for_bit(spark, root, tmp_path):
    """A Parquet write builds the new files' filters in its own tasks (the on-write refresh reads
    no data): the same bytes, row, null and distinct counts, file by file and column by column, as
    an index that read the same files; a column of a type the write's tasks do not hash (double)
    makes its index read the new files, and the setting at 0 turns it off."""
    p = str(tmp_path / "wt")
    schema = "k BIGINT, s STRING, d DECIMAL(12, 2), b BINARY, x DOUBLE"

    def rows(start: int, n: int) -> list:
        return [(i if i % 7 else None, None if i % 5 == 0 else f"word{i % 11} key {i}",
                 None if i % 3 == 0 else Decimal(i) / 4, None if i % 4 == 0 else bytes([i % 256, 7]), i / 3)
                for i in range(start, start + n)]

    spark.createDataFrame(rows(0, 30), schema).coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX wt ON parquet.`{p}` FOR COLUMNS ({_WT_COLUMNS}) OPTIONS (refresh = 'on_write')")
    spark.sql(f"CREATE BLOOM INDEX wt_x ON parquet.`{p}` FOR COLUMNS (k, x) OPTIONS (refresh = 'on_write')")
    read = lambda: spark.read.parquet(p)  # noqa: E731
    # Three files (one holds a single row of nulls only but for x), then one without rows in a column.
    spark.createDataFrame(rows(30, 60) + [(None, None, None, None, 1.5)], schema).repartition(3).write.mode("append").parquet(p)
    assert _from_write(spark, "wt") == 3, _from_write(spark, "wt")
    assert _from_write(spark, "wt_x") == 0  # x (double) is read: every new file of wt_x
    _covers(root, "wt", _files(spark, read()))
    _covers(root, "wt_x", _files(spark, read()))
    _lookup(spark, lambda: read().where("k = 44"), "wt", [(44, "word0 key 44", Decimal(11), None, 44 / 3)],
            len(_files(spark, read())))
    spark.createDataFrame(rows(100, 10), schema).coalesce(1).write.mode("append").parquet(p)
    assert _from_write(spark, "wt") == 1
    with confs(spark, {"spark.bloomindex.refresh.writeTaskFilters": "0"}):
        spark.createDataFrame(rows(200, 10), schema).coalesce(1).write.mode("append").parquet(p)
    assert _from_write(spark, "wt") == 0
    _covers(root, "wt", _files(spark, read()))
    # The reference: an index that read every file.
    spark.sql(f"CREATE BLOOM INDEX wt_ref ON parquet.`{p}` FOR COLUMNS ({_WT_COLUMNS})")
    built, ref = _filters(spark, root, "wt"), _filters(spark, root, "wt_ref")
    assert len(built) == 6 * 5 and built.keys() == ref.keys()
    assert {k: v for k, v in built.items() if v != ref[k]} == {}
    for q in ("k = 44", "s = 'word3 key 58'", "d = 11.5", "b = X'4807'", "s LIKE '%word3%'", "k IN (1, 205, 105)"):
        same(spark, lambda q=q: read().where(q))


def test_write_tasks_build_the_filters_of_partitioned_writes(spark, root, tmp_path):
    """INSERT INTO, DataFrame insertInto and INSERT OVERWRITE of dynamic partitions of a
    partitioned table: the files their tasks wrote (under partition folders, moved into place by
    the commit) get the filters a read builds, and answers stay those of the index off."""
    spark.sql("DROP TABLE IF EXISTS wt_p")
    spark.sql(f"CREATE TABLE wt_p (k BIGINT, s STRING, p INT) USING parquet PARTITIONED BY (p) "
              f"LOCATION '{tmp_path / 'wt_p'}'")
    try:
        spark.sql("INSERT INTO wt_p VALUES (1, 'a', 1), (2, 'b', 2)")
        spark.sql("CREATE BLOOM INDEX wt_p_ix ON wt_p FOR COLUMNS (k, s) OPTIONS (refresh = 'on_write')")
        table = lambda: spark.table("wt_p")  # noqa: E731
        spark.sql("INSERT INTO wt_p VALUES (3, 'c', 1), (4, 'd', 3), (5, NULL, 3)")
        assert _from_write(spark, "wt_p_ix") == 2  # p=1 and p=3, one file each
        spark.createDataFrame([(6, "e", 4), (7, "f", 1)], "k BIGINT, s STRING, p INT").coalesce(1).write.insertInto("wt_p")
        assert _from_write(spark, "wt_p_ix") == 2
        with confs(spark, {"spark.sql.sources.partitionOverwriteMode": "dynamic"}):
            spark.sql("INSERT OVERWRITE wt_p SELECT 8, 'g', 3")  # p=3 replaced
        assert _from_write(spark, "wt_p_ix") == 1
        files = table_files(spark, "wt_p")
        _covers(root, "wt_p_ix", files)
        _lookup(spark, lambda: table().where("k = 8"), "wt_p_ix", [(8, "g", 3)], len(files))
        assert same(spark, lambda: table().where("k IN (4, 5, 7)")) == [(7, "f", 1)]
        spark.sql("CREATE BLOOM INDEX wt_p_ref ON wt_p FOR COLUMNS (k, s)")
        built, ref = _filters(spark, root, "wt_p_ix"), _filters(spark, root, "wt_p_ref")
        assert len(built) == len(files) * 2 and built.keys() == ref.keys()
        assert {k: v for k, v in built.items() if v != ref[k]} == {}
    finally:
        spark.sql("DROP TABLE IF EXISTS wt_p")


def _written_schema(spark, name: str) -> bool:
    """Whether the last automatic refresh of `name` listed the source with the schema its write
    wrote (no schema inference), not as a query infers it."""
    return spark._jvm.bloomindex.actions.WriteEvents.listedWithWrittenSchema(spark._jsparkSession, name)


def test_the_refresh_lists_the_folder_with_the_schema_the_write_wrote(spark, root, tmp_path):
    """After a Parquet write whose tasks built the filters, the on-write refresh lists the folder
    with the schema the write wrote instead of inferring it, partitioned folders too: the index
    then holds every file of the folder (the listing is the same) and answers as with it off."""
    p = str(tmp_path / "ws")
    schema = "k BIGINT, s STRING, p INT"
    spark.createDataFrame([(i, f"v{i}", i % 2) for i in range(10)], schema).coalesce(1).write.partitionBy("p").parquet(p)
    spark.sql(f"CREATE BLOOM INDEX ws ON parquet.`{p}` FOR COLUMNS (k, s) OPTIONS (refresh = 'on_write')")
    read = lambda: spark.read.parquet(p)  # noqa: E731
    spark.createDataFrame([(i, f"v{i}", i % 3) for i in range(10, 20)], schema).coalesce(1).write.mode("append") \
        .partitionBy("p").parquet(p)
    assert _written_schema(spark, "ws") and _from_write(spark, "ws") == 3
    files = _files(spark, read())
    _covers(root, "ws", files)
    _lookup(spark, lambda: read().where("k = 14"), "ws", [(14, "v14", 2)], len(files))
    assert sorted(same(spark, lambda: read().where("s IN ('v3', 'v17', 'v40')"))) == [(3, "v3", 1), (17, "v17", 2)]
    for q in ("k = 3", "s = 'v17'", "k IN (1, 12, 40)"):
        same(spark, lambda q=q: read().where(q))


def test_a_write_whose_columns_decode_otherwise_takes_the_inferred_schema(spark, root, tmp_path):
    """The written schema is taken only where the indexed columns as written decode as the index
    recorded them: a write of an indexed column at another type (INT into a BIGINT index), or
    under another Parquet field id than the index's, is checked against the folder's schema as a
    query infers it, as before, and every answer stays the one with the index off."""
    from pyspark.sql import functions as F
    p = str(tmp_path / "wd")
    with_id = lambda df, i: df.select(F.col("k").alias("k", metadata={"parquet.field.id": i}), "s")  # noqa: E731
    with_id(spark.createDataFrame([(i, f"v{i}") for i in range(10)], "k BIGINT, s STRING"), 7) \
        .coalesce(1).write.parquet(p)
    spark.sql(f"CREATE BLOOM INDEX wd ON parquet.`{p}` FOR COLUMNS (k, s) OPTIONS (refresh = 'on_write')")
    recorded = log_entries(root, "wd")[-1]["data"]["decoding"]
    assert any(c["name"] == "k" and c["physical"].get("fieldId") == "7" for c in recorded["columns"]), recorded
    read = lambda: spark.read.schema("k BIGINT, s STRING").parquet(p)  # noqa: E731
    # The same schema, the same field id: the written schema is taken.
    with_id(spark.createDataFrame([(i, f"v{i}") for i in range(10, 15)], "k BIGINT, s STRING"), 7) \
        .coalesce(1).write.mode("append").parquet(p)
    assert _written_schema(spark, "wd") and _from_write(spark, "wd") == 1
    _covers(root, "wd", _files(spark, read()))
    # Another field id for k: the folder's schema is inferred, as before.
    with_id(spark.createDataFrame([(i, f"v{i}") for i in range(20, 25)], "k BIGINT, s STRING"), 8) \
        .coalesce(1).write.mode("append").parquet(p)
    assert not _written_schema(spark, "wd")
    # k written as INT: no filters from the write (the index's columns are not all as written),
    # and the folder's schema is inferred. (Which file's schema Spark infers is not fixed: the
    # refresh either reads the new files as BIGINT or is refused, the index as it was.)
    spark.createDataFrame([(i, f"v{i}") for i in range(30, 35)], "k INT, s STRING").coalesce(1).write.mode("append").parquet(p)
    assert not _written_schema(spark, "wd") and _from_write(spark, "wd") == 0
    for q in ("k = 12", "k = 22", "k = 32", "s = 'v33'", "s = 'v21'", "k IN (3, 13, 23, 33)"):
        assert len(same(spark, lambda q=q: read().where(q))) >= 1, q
