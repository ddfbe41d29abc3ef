"""Regressions: an index is used only for scans that decode its columns as its build did.

Each test builds an index under one decoding context (session settings, reader options,
column names, physical columns) and queries under another; every answer must equal the
answer with pruning off. Where the context is unchanged, the index must still prune.
tests/test_decoding_context.py is the randomized suite over the same dimensions."""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import json
import os
import re
from typing import Optional

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import Row, types as T

from bloomindex import BloomIndex, might_contain
from index_helpers import confs, entry_text, log_entries

PRUNING = "spark.bloomindex.pruning.enabled"
JOIN_FILTER = "spark.bloomindex.joinFilter.enabled"
TZ = "spark.sql.session.timeZone"
CASE = "spark.sql.caseSensitive"
V1_LIST = "spark.sql.sources.useV1SourceList"
LA = "America/Los_Angeles"


# ---------------------------------------------------------------------------------------------
# helpers


def _sort_key(row: tuple):
    return tuple((v is None, v if v is not None else 0) for v in row)


def _rows(df) -> list:
    return sorted((tuple(r) for r in df.collect()), key=_sort_key)


def outcome(spark, make_df, pruning: bool):
    """("rows", sorted rows) or ("error", exception class name) of `make_df()` (planned anew)."""
    with confs(spark, {PRUNING: "true" if pruning else "false"}):
        try:
            return ("rows", _rows(make_df()))
        except Exception as e:  # AnalysisException, Py4JJavaError, SparkException: any failure
            return ("error", type(e).__name__ + ": " + str(e).split("\n")[0][:300])


def same(spark, make_df, what: str = "") -> list:
    """Asserts the rows with pruning on equal the rows with pruning off (both must succeed)."""
    on, off = outcome(spark, make_df, True), outcome(spark, make_df, False)
    assert off[0] == "rows", f"{what}: pruning off failed: {off[1]}"
    assert on == off, f"{what}: pruning on {on}, pruning off {off}"
    return on[1]


def sql_same(spark, sql: str) -> list:
    return same(spark, lambda: spark.sql(sql), sql)


def report(spark, make_df) -> str:
    with confs(spark, {PRUNING: "true"}):
        return BloomIndex(spark).explain(make_df())


def kept(text: str, index: str):
    """(files kept, files) when `index` pruned the scan, per BloomIndex.explain; else None."""
    m = re.search(rf"index {re.escape(index)} \(log version \d+\) kept (\d+)/(\d+) files", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def assert_prunes(spark, make_df, index: str) -> None:
    text = report(spark, make_df)
    k = kept(text, index)
    assert k is not None and k[0] < k[1], f"expected {index} to skip files:\n{text}"


def assert_not_applied(spark, make_df, index: str, *words: str) -> str:
    """explain says `  not applied: <index>: <reason>` with every one of `words` in the reason."""
    text = report(spark, make_df)
    lines = [ln for ln in text.splitlines() if ln.strip().startswith(f"not applied: {index}:")]
    assert lines, f"expected a 'not applied: {index}: ...' line:\n{text}"
    assert any(all(w.lower() in ln.lower() for w in words) for ln in lines), \
        f"expected {words} in a 'not applied: {index}' line:\n{text}"
    k = kept(text, index)
    assert k is None or k[0] == k[1], text
    return text


def clear_index_cache(spark) -> None:
    """Forgets the driver's loaded indexes (what a new driver would see)."""
    for name in ("bloomindex.catalog.IndexCache", "bloomindex.index.IndexCache"):
        obj = spark._jvm
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
            obj.clear()
            return
        except Exception:
            continue
    raise AssertionError("IndexCache not found in bloomindex.index or bloomindex.catalog")


def newest_active_log_file(root: str, name: str) -> str:
    files = sorted(glob.glob(os.path.join(root, name, "_log", "*.json")))
    active = [f for f in files if json.load(open(f))["state"] == "ACTIVE"]
    assert active, files
    return active[-1]


def rewrite_newest_entry(spark, root: str, name: str, change) -> None:
    """Rewrites the newest ACTIVE entry as `change(entry)` leaves it (as an earlier build wrote it)."""
    path = newest_active_log_file(root, name)
    entry = json.load(open(path))
    change(entry)
    os.remove(path)  # log files are hard links made at commit: write a new file, not through the link
    with open(path, "w") as out:
        out.write(entry_text(entry))
    clear_index_cache(spark)


def make_pre_decoding_entry(spark, root: str, name: str) -> None:
    """Rewrites the newest ACTIVE entry as a build from before decoding contexts existed wrote it:
    format version 1, no data.decoding."""
    def change(entry):
        entry["formatVersion"] = 1
        entry.get("data", {}).pop("decoding", None)
    rewrite_newest_entry(spark, root, name, change)


def write_text_files(path: str, files: list[list[str]], ext: str) -> None:
    os.makedirs(path, exist_ok=True)
    for i, lines in enumerate(files):
        with open(os.path.join(path, f"part-{i:03d}.{ext}"), "w") as f:
            f.write("".join(line + "\n" for line in lines))


def remove_data_file(path: str) -> None:
    os.remove(path)
    crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
    if os.path.exists(crc):
        os.remove(crc)


# ---------------------------------------------------------------------------------------------
# case sensitivity


@pytest.mark.parametrize("indexed,other", [("a", "A"), ("A", "a")])
def test_case_sensitive_columns_a_and_A_of_parquet(spark, root, tmp_path, indexed, other):
    """Files with columns `a` and `A`, index on one: with spark.sql.caseSensitive=true a lookup on
    the other must not be pruned by the indexed one's filters."""
    path = str(tmp_path / "cs")
    src = f"parquet.`{path}`"
    with confs(spark, {CASE: "true"}):
        schema = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("A", T.IntegerType())])
        spark.createDataFrame([(i, 1000 + i) for i in range(40)], schema).repartition(4).write.parquet(path)
        spark.sql(f"CREATE BLOOM INDEX cs_idx ON {src} FOR COLUMNS ({indexed})")
        value_of = {"a": lambda i: i, "A": lambda i: 1000 + i}
        rows = sql_same(spark, f"SELECT * FROM {src} WHERE {other} = {value_of[other](5)}")
        assert rows == [(5, 1005)]
        for where in [f"{other} IN ({value_of[other](5)}, {value_of[other](17)})",
                      f"{other} = {value_of[indexed](5)}", f"{other} IS NULL", f"{other} IS NOT NULL",
                      f"{other} <=> {value_of[other](33)}"]:
            sql_same(spark, f"SELECT * FROM {src} WHERE {where}")
        # The indexed column itself still prunes.
        assert sql_same(spark, f"SELECT * FROM {src} WHERE {indexed} = {value_of[indexed](5)}") == [(5, 1005)]
        assert_prunes(spark, lambda: spark.sql(f"SELECT * FROM {src} WHERE {indexed} = {value_of[indexed](5)}"),
                      "cs_idx")


@pytest.mark.parametrize("build_case,query_case", [("false", "true"), ("true", "false")])
def test_parquet_column_read_case_insensitively(spark, root, tmp_path, build_case, query_case):
    """A Parquet file's column `V` read through a schema spelling it `v`: case-insensitive
    resolution reads the values, case-sensitive reads nulls; an index built one way is not used
    the other way."""
    path = str(tmp_path / "upper")
    spark.range(40).selectExpr("cast(id AS INT) AS id", "cast(id + 100 AS INT) AS V").repartition(4).write.parquet(path)
    read = lambda: spark.read.schema("id INT, v INT").parquet(path)
    with confs(spark, {CASE: build_case}):
        BloomIndex(spark, progress=False).create("upper_idx", read(), ["id", "v"])
    with confs(spark, {CASE: query_case}):
        for where in ["v = 105", "v IS NULL", "v IS NOT NULL", "v IN (101, 139)", "id = 5 AND v IS NULL"]:
            same(spark, lambda: read().where(where), f"caseSensitive {build_case} -> {query_case}: {where}")
        assert_not_applied(spark, lambda: read().where("v = 105"), "upper_idx", "differs")
        assert_not_applied(spark, lambda: read().where("v IS NULL"), "upper_idx", "differs")
    with confs(spark, {CASE: build_case}):
        assert_prunes(spark, lambda: read().where("v = 105" if build_case == "false" else "id = 5"), "upper_idx")


def test_index_column_spelled_in_another_case_still_prunes(spark, root, tmp_path):
    """The recorded name is the source's own spelling, whatever the CREATE statement wrote."""
    path = str(tmp_path / "spelled")
    spark.range(40).selectExpr("cast(id AS INT) AS Id", "cast(id AS STRING) AS s").repartition(4).write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX spelled_idx ON parquet.`{path}` FOR COLUMNS (ID, S)")
    for where in ["id = 7", "ID = 7", "Id = 7", "s = '7'"]:
        q = lambda: spark.sql(f"SELECT * FROM parquet.`{path}` WHERE {where}")
        assert same(spark, q, where) == [(7, "7")]
        assert_prunes(spark, q, "spelled_idx")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_column_read_as_another_type(spark, root, tmp_path, fmt):
    """The same files read through a schema giving the indexed column another type: values hash
    differently (INT32 vs INT64 vs bytes), so the index built for one type is not used for another."""
    path = str(tmp_path / fmt)
    spark.range(40).selectExpr("cast(id AS INT) AS id", "cast(id * 2 AS STRING) AS s").repartition(4) \
        .write.format(fmt).save(path)
    read = lambda schema: spark.read.format(fmt).schema(schema).load(path)
    BloomIndex(spark, progress=False).create("typed_idx", read("id INT, s STRING"), ["id"])
    assert_prunes(spark, lambda: read("id INT, s STRING").where("id = 15"), "typed_idx")
    other_types = {"csv": ["id BIGINT, s STRING", "id STRING, s STRING", "id DOUBLE, s STRING"],
                   "parquet": ["id BIGINT, s STRING", "id DOUBLE, s STRING"]}[fmt]
    for schema in other_types:
        literal = "'15'" if "STRING, s" in schema else "15"
        assert [r[0] for r in same(spark, lambda: read(schema).where(f"id = {literal}"), schema)] in ([15], ["15"], [15.0])
        same(spark, lambda: read(schema).where(f"id IN ({literal}, 33)"), schema)
        assert_not_applied(spark, lambda: read(schema).where(f"id = {literal}"), "typed_idx")


# ---------------------------------------------------------------------------------------------
# time zones and reader options


def _csv_timestamps(path: str) -> None:
    # Timestamps without an offset: read in the session time zone.
    write_text_files(path, [[f"{f * 10 + h},2021-03-0{f + 1} {h:02d}:00:00" for h in range(10)] for f in range(4)], "csv")


def test_csv_timestamp_index_queried_under_another_time_zone(spark, root, tmp_path):
    path = str(tmp_path / "csv_ts")
    _csv_timestamps(path)
    read = lambda: spark.read.csv(path, schema="id INT, ts TIMESTAMP")
    with confs(spark, {TZ: "UTC"}):
        BloomIndex(spark, progress=False).create("csv_ts", read(), ["id", "ts"])
        assert [r[0] for r in same(spark, lambda: read().where("ts = TIMESTAMP'2021-03-02 05:00:00'"))] == [15]
        assert_prunes(spark, lambda: read().where("ts = TIMESTAMP'2021-03-02 05:00:00'"), "csv_ts")
    for zone in (LA, "Asia/Kolkata"):
        with confs(spark, {TZ: zone}):
            q = lambda: read().where("ts = TIMESTAMP'2021-03-02 05:00:00'")
            assert len(same(spark, q, zone)) == 1
            for where in ["ts IN (TIMESTAMP'2021-03-01 00:00:00', TIMESTAMP'2021-03-04 09:00:00')",
                          "ts = TIMESTAMP'2021-03-02 05:00:00Z'", "ts <=> TIMESTAMP'2021-03-03 01:00:00'",
                          "ts = TIMESTAMP'2021-03-02 05:00:00' AND id = 15",
                          "ts = TIMESTAMP'2021-03-02 05:00:00' OR id = 33"]:
                same(spark, lambda: read().where(where), f"{zone}: {where}")
            assert_not_applied(spark, q, "csv_ts", "time zone", "differs")
            # The other column of the same index does not depend on the zone: it still prunes.
            assert same(spark, lambda: read().where("id = 15"))[0][0] == 15
            assert_prunes(spark, lambda: read().where("id = 15"), "csv_ts")
            # A V2 scan of the same files, too.
            with confs(spark, {V1_LIST: ""}):
                assert len(same(spark, q, f"{zone} V2")) == 1
                same(spark, lambda: read().where("ts IS NULL OR ts = TIMESTAMP'2021-03-04 09:00:00'"), f"{zone} V2")


def test_csv_timestamp_table_queried_under_another_time_zone(spark, root, tmp_path):
    path = str(tmp_path / "csv_ts_table")
    _csv_timestamps(path)
    spark.sql("DROP TABLE IF EXISTS csv_ts_t")
    spark.sql(f"CREATE TABLE csv_ts_t (id INT, ts TIMESTAMP) USING csv LOCATION '{path}'")
    try:
        with confs(spark, {TZ: "UTC"}):
            spark.sql("CREATE BLOOM INDEX csv_ts_t_idx ON csv_ts_t FOR COLUMNS (ts)")
        with confs(spark, {TZ: LA}):
            assert len(sql_same(spark, "SELECT * FROM csv_ts_t WHERE ts = TIMESTAMP'2021-03-02 05:00:00'")) == 1
            assert_not_applied(spark, lambda: spark.sql(
                "SELECT * FROM csv_ts_t WHERE ts = TIMESTAMP'2021-03-02 05:00:00'"), "csv_ts_t_idx", "time zone")
        with confs(spark, {TZ: "UTC"}):
            assert_prunes(spark, lambda: spark.sql(
                "SELECT * FROM csv_ts_t WHERE ts = TIMESTAMP'2021-03-02 05:00:00'"), "csv_ts_t_idx")
    finally:
        spark.sql("DROP TABLE IF EXISTS csv_ts_t")


def test_json_timestamp_index_queried_under_another_time_zone(spark, root, tmp_path):
    path = str(tmp_path / "json_ts")
    write_text_files(path, [[json.dumps({"id": f * 10 + h, "ts": f"2021-03-0{f + 1} {h:02d}:00:00"}) for h in range(10)]
                            for f in range(4)], "json")
    read = lambda: spark.read.schema("id INT, ts TIMESTAMP").json(path)
    with confs(spark, {TZ: "UTC"}):
        BloomIndex(spark, progress=False).create("json_ts", read(), ["id", "ts"])
    with confs(spark, {TZ: LA}):
        q = lambda: read().where("ts = TIMESTAMP'2021-03-02 05:00:00'")
        assert len(same(spark, q)) == 1
        assert_not_applied(spark, q, "json_ts", "time zone")
        assert_prunes(spark, lambda: read().where("id = 15"), "json_ts")


def test_parquet_timestamp_index_keeps_pruning_under_another_time_zone(spark, root, tmp_path):
    """Parquet timestamps are instants: the session zone does not change them."""
    path = str(tmp_path / "pq_ts")
    spark.range(40).selectExpr("cast(id AS INT) AS id", "timestamp_seconds(1600000000 + id * 3600) AS ts") \
        .repartition(4).write.parquet(path)
    read = lambda: spark.read.parquet(path)
    with confs(spark, {TZ: "UTC"}):
        BloomIndex(spark, progress=False).create("pq_ts", read(), ["ts"])
    for zone in ("UTC", LA, "Asia/Kolkata"):
        with confs(spark, {TZ: zone}):
            q = lambda: read().where(f"ts = timestamp_seconds({1600000000 + 5 * 3600})")
            assert [r[0] for r in same(spark, q, zone)] == [5]
            assert_prunes(spark, q, "pq_ts")
            same(spark, lambda: read().where("ts = TIMESTAMP'2020-09-13 17:26:40'"), zone)
            with confs(spark, {V1_LIST: ""}):
                assert [r[0] for r in same(spark, q, zone + " V2")] == [5]
                assert_prunes(spark, q, "pq_ts")


@contextlib.contextmanager
def jvm_default_zone(spark):
    """Yields `set(zone)`, which sets the session JVM's default time zone (`TimeZone.setDefault`);
    the zone it had is set again on leaving, whatever happened."""
    zones = spark._jvm.java.util.TimeZone
    original = zones.getDefault()
    try:
        yield lambda zone: zones.setDefault(zones.getTimeZone(zone))
    finally:
        zones.setDefault(original)


def test_orc_timestamps_of_hives_writer_are_read_in_the_jvm_time_zone(spark, root, tmp_path):
    """ORC's `timestamp` type (Hive's writer) holds local times, which the readers make instants in
    the JVM's default zone, whatever the session's: an index built in a JVM of one zone does not
    answer for a JVM of another."""
    path = str(tmp_path / "orc_hive_ts")
    read = lambda: spark.read.orc(path)
    with jvm_default_zone(spark) as set_zone:
        set_zone("UTC")
        with confs(spark, {TZ: "UTC", "spark.sql.orc.impl": "hive"}):
            spark.range(40).selectExpr("CAST(id AS INT) AS k", "timestamp_seconds(1707696000 + id * 3600) AS ts") \
                .repartition(4).write.orc(path)
        with confs(spark, {TZ: "UTC"}):
            BloomIndex(spark, progress=False).create("orc_hive_ts", read(), ["k", "ts"])
            q = lambda: read().where("ts = TIMESTAMP'2024-02-12 05:00:00'")
            assert [r[0] for r in same(spark, q)] == [5]
            assert_prunes(spark, q, "orc_hive_ts")
        set_zone(LA)
        with confs(spark, {TZ: "UTC"}):
            # The same row reads 8 hours later in this JVM: the filters hold the other instant.
            now = read().where("k = 5").selectExpr("CAST(ts AS STRING)").head()[0]
            assert now == "2024-02-12 13:00:00"
            q = lambda: read().where(f"ts = TIMESTAMP'{now}'")
            assert [r[0] for r in same(spark, q)] == [5]
            assert_not_applied(spark, q, "orc_hive_ts", "JVM default time zone", "differs")
            assert_prunes(spark, lambda: read().where("k = 5"), "orc_hive_ts")  # not a timestamp: answers


def _ancient_avro(spark, path: str, metadata: Optional[dict] = None) -> None:
    """Avro files written by Avro's own Java writer (no Spark metadata unless `metadata` is given),
    ids 0..39 in 4 files, odd ids' timestamps ancient: Spark reads them with the session's Avro
    rebase mode."""
    jvm = spark._jvm
    os.makedirs(path, exist_ok=True)
    schema = jvm.org.apache.avro.Schema.Parser().parse(
        '{"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}, '
        '{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}}]}')
    for f in range(4):
        writer = jvm.org.apache.avro.file.DataFileWriter(jvm.org.apache.avro.generic.GenericDatumWriter(schema))
        for k, v in (metadata or {}).items():
            writer.setMeta(k, v)
        writer.create(schema, jvm.java.io.File(os.path.join(path, f"part-{f}.avro")))
        for i in range(f * 10, f * 10 + 10):
            # The early 1500s plus 5 hours a row (before the Gregorian switch), or 2020-03-01 plus an hour a row.
            micros = (-14667048000 + 5 * 3600 * i if i % 2 else 1583020800 + 3600 * i) * 1_000_000
            record = jvm.org.apache.avro.generic.GenericData.Record(schema)
            record.put("id", jvm.java.lang.Integer(i))
            record.put("ts", jvm.java.lang.Long(micros))
            writer.append(record)
        writer.close()


def _ts_micros(read, i: int) -> int:
    """Row `i`'s ts as this JVM and session read it, in microseconds."""
    return read().where(f"id = {i}").selectExpr("unix_micros(ts)").head()[0]


def _ts_lookup(read):
    """micros -> a function making the lookup of ts = that instant (the ids)."""
    return lambda micros: (lambda: read().where(f"ts = timestamp_micros({micros})").select("id"))


def _answers_only_in_the_build_zone(spark, read, other: str, index: str, settings: dict, *why: str) -> None:
    """`index` (on id and ts of `read()`, ids 0..39, odd ids' ts ancient) built in a UTC JVM under
    session `settings`: the lookup of row 1's ts as read answers and prunes there; in an
    America/Los_Angeles JVM that row's ts reads otherwise, and the lookup and the join filter (the
    other side, written to `other`, holds the values as this JVM reads them) answer as without the
    index, which is not applied for ts (`why` in the reason) but still for id; in UTC again it
    prunes."""
    lookup = _ts_lookup(read)
    with jvm_default_zone(spark) as set_zone:
        set_zone("UTC")
        with confs(spark, settings):
            built = _ts_micros(read, 1)
            assert same(spark, lookup(built)) == [(1,)]
            assert_prunes(spark, lookup(built), index)
        set_zone(LA)
        with confs(spark, settings):
            now = _ts_micros(read, 1)
            assert now != built  # the same stored value, rebased in another zone
            assert same(spark, lookup(now)) == [(1,)]
            assert_not_applied(spark, lookup(now), index, *why)
            assert_prunes(spark, lambda: read().where("id = 1"), index)  # not a timestamp: answers
            read().selectExpr("id + 100 AS oid", "ts").write.parquet(other)
            join = lambda: spark.read.parquet(other).join(read(), "ts").select("oid", "id")
            with confs(spark, {JOIN_FILTER: "true"}):
                on = _rows(join())
            with confs(spark, {JOIN_FILTER: "false", PRUNING: "false"}):
                off = _rows(join())
            assert on == off and len(off) == 40
        set_zone("UTC")
        with confs(spark, settings):
            assert_prunes(spark, lookup(built), index)


def _create_in_utc(spark, sql: str, settings: dict) -> None:
    """Runs `sql` in a JVM whose default zone is UTC, under session `settings`."""
    with jvm_default_zone(spark) as set_zone, confs(spark, settings):
        set_zone("UTC")
        spark.sql(sql)


@pytest.mark.parametrize("kind", ["parquet", "parquet-int96", "avro"])
def test_timestamps_rebased_legacy_are_read_in_the_jvm_time_zone(spark, root, tmp_path, kind):
    """Another writer's Parquet and Avro files (no Spark metadata) read LEGACY are rebased in the
    JVM's default zone, not the session's: an index built in a JVM of one zone answers neither a
    lookup nor the join filter in a JVM of another (an audit: the lookup lost the ancient row in
    each kind), and answers again in the build's zone."""
    path = str(tmp_path / "ancient")
    fmt = kind.split("-")[0]
    if fmt == "avro":
        _ancient_avro(spark, path)
    else:
        _ancient_parquet(path, kind.endswith("int96"))
    legacy = {TZ: "UTC", "spark.sql.parquet.datetimeRebaseModeInRead": "LEGACY",
              "spark.sql.parquet.int96RebaseModeInRead": "LEGACY", "spark.sql.avro.datetimeRebaseModeInRead": "LEGACY"}
    _create_in_utc(spark, f"CREATE BLOOM INDEX legacy_jvm ON {fmt}.`{path}` FOR COLUMNS (id, ts) OPTIONS (global = true)",
                   legacy)
    _answers_only_in_the_build_zone(spark, lambda: spark.read.format(fmt).load(path), str(tmp_path / "other"),
                                    "legacy_jvm", legacy, "JVM default time zone", "differs")


SPARK_24 = {"org.apache.spark.version": "2.4.5"}


@pytest.mark.parametrize("kind", ["parquet", "parquet-int96", "avro"])
def test_timestamps_of_files_marked_legacy_are_rebased_in_the_jvm_time_zone(spark, root, tmp_path, kind):
    """Files whose own metadata says legacy (written by Spark 2.4, or by Spark 3.0 or 3.1 writing
    LEGACY, without the zone Spark 3.2 records) are rebased whatever the session's mode, in the
    JVM's default zone: an index built under the default CORRECTED in a JVM of one zone answers
    neither a lookup nor the join filter in a JVM of another (before the fix: the lookup gave []
    for [(1,)]), and answers again in its own zone."""
    path = str(tmp_path / "marked")
    fmt = kind.split("-")[0]
    # Spark 3.0 wrote the version into Avro files (2.4 did not), and marked LEGACY writes.
    marks = {"org.apache.spark.version": "3.0.3", "org.apache.spark.legacyDateTime": ""} if fmt == "avro" else SPARK_24
    if fmt == "avro":
        _ancient_avro(spark, path, marks)
    else:
        _ancient_parquet(path, kind.endswith("int96"), marks)
    _create_in_utc(spark, f"CREATE BLOOM INDEX marked_legacy ON {fmt}.`{path}` FOR COLUMNS (id, ts) OPTIONS (global = true)",
                   {TZ: "UTC"})
    _answers_only_in_the_build_zone(spark, lambda: spark.read.format(fmt).load(path), str(tmp_path / "other"),
                                    "marked_legacy", {TZ: "UTC"}, "rebases in the JVM's default time zone",
                                    f"built in Z, this JVM's is {LA}")


@pytest.mark.parametrize("v2", [False, True])
def test_a_plan_kept_and_run_again_after_the_jvm_zone_changed_reads_what_it_skipped(spark, root, tmp_path, v2):
    """Spark reads the JVM's default zone as it reads each file, so the same DataFrame collected
    again after `TimeZone.setDefault` returns rows of the new zone: with the index it reads the
    files its decision skipped, and answers as that DataFrame does without the index (before the
    fix: [] for [(1,)], V1 and V2). V1 with Parquet filter pushdown off: with it on, Spark's own
    rerun keeps its first run's zone for its pushed filters and returns [] (docs/limitations.md)."""
    path = str(tmp_path / "kept")
    _ancient_parquet(path, False, SPARK_24)
    read = lambda: spark.read.parquet(path)
    settings = {TZ: "UTC", V1_LIST: "" if v2 else None, "spark.sql.parquet.filterPushdown": None if v2 else "false"}
    with jvm_default_zone(spark) as set_zone, confs(spark, settings):
        set_zone("UTC")
        spark.sql(f"CREATE BLOOM INDEX kept_zone ON parquet.`{path}` FOR COLUMNS (ts)")
        set_zone(LA)
        in_la = _ts_micros(read, 1)
        set_zone("UTC")
        plans = {}
        for pruning in ("true", "false"):
            with confs(spark, {PRUNING: pruning}):
                plans[pruning] = read().where(f"ts = timestamp_micros({in_la})").select("id")
                assert plans[pruning].collect() == []  # in UTC no row has the value
        assert kept(report(spark, lambda: plans["true"]), "kept_zone")[0] == 0  # every file skipped
        set_zone(LA)
        on, off = ([tuple(r) for r in plans[k].collect()] for k in ("true", "false"))
        assert on == off == [(1,)]


@pytest.mark.parametrize("v2", [False, True])
def test_a_join_filter_kept_and_run_again_after_the_jvm_zone_changed_fails_instead_of_losing_rows(
        spark, root, tmp_path, v2):
    """A join whose other side an earlier run filtered (and kept, a broadcast) under one JVM zone,
    run again after `TimeZone.setDefault` reads the indexed side's values in the new zone: it fails
    with BLOOM_INDEX_JOIN_FILTER_OUTDATED naming the zone, as for files changed on storage (an
    audit: 7 rows where Spark without the index returns 20); a new plan answers."""
    path, other = str(tmp_path / "indexed"), str(tmp_path / "other")
    _ancient_parquet(path, False, SPARK_24)
    read = lambda: spark.read.parquet(path)
    with jvm_default_zone(spark) as set_zone, confs(spark, {TZ: "UTC", V1_LIST: "" if v2 else None}):
        set_zone("UTC")
        spark.sql(f"CREATE BLOOM INDEX rerun_join ON parquet.`{path}` FOR COLUMNS (ts) OPTIONS (global = true)")
        set_zone(LA)  # the other side holds the values as a JVM of LA reads them
        with confs(spark, {PRUNING: "false"}):
            read().where("id % 3 = 0").selectExpr("id + 100 AS oid", "ts").write.parquet(other)
        set_zone("UTC")
        join = lambda: spark.read.parquet(other).join(read(), "ts").select("oid", "id")
        with confs(spark, {JOIN_FILTER: "true"}):
            df = join()
            first = _rows(df)
            assert first == _rows_off(spark, join)
            set_zone(LA)
            with pytest.raises(Exception, match="BLOOM_INDEX_JOIN_FILTER_OUTDATED") as e:
                df.collect()
            assert "JVM's default time zone was Z" in str(e.value)
            assert _rows(join()) == _rows_off(spark, join) and len(_rows_off(spark, join)) > len(first)


def _rows_off(spark, make_df) -> list:
    with confs(spark, {JOIN_FILTER: "false", PRUNING: "false"}):
        return _rows(make_df())


def test_files_marked_legacy_with_their_zone_answer_in_any_jvm_zone_and_a_refresh_that_adds_one_without(
        spark, root, tmp_path):
    """A legacy file that records its zone (Spark 3.2 and later writing LEGACY) is rebased in that
    zone in any JVM: the index answers in a JVM of another zone. An incremental REFRESH that adds
    a file marked legacy without a zone records the JVM's zone from then on."""
    path = str(tmp_path / "zoned")
    _ancient_parquet(path, False, {**SPARK_24, "org.apache.spark.legacyDateTime": "",
                                   "org.apache.spark.timeZone": "UTC"}, files=range(3))
    read = lambda: spark.read.parquet(path)
    lookup = _ts_lookup(read)
    with jvm_default_zone(spark) as set_zone, confs(spark, {TZ: "UTC"}):
        set_zone("UTC")
        spark.sql(f"CREATE BLOOM INDEX zoned_legacy ON parquet.`{path}` FOR COLUMNS (ts)")
        assert _legacy_files_zone(root, "zoned_legacy") == "none"
        built = _ts_micros(read, 1)
        set_zone(LA)
        assert _ts_micros(read, 1) == built
        assert same(spark, lookup(built)) == [(1,)]
        assert_prunes(spark, lookup(built), "zoned_legacy")
        set_zone("UTC")
        _ancient_parquet(path, False, SPARK_24, files=range(3, 4))
        spark.sql("REFRESH BLOOM INDEX zoned_legacy")
        late = _ts_micros(read, 31)
        assert_prunes(spark, lookup(late), "zoned_legacy")
        set_zone(LA)
        late_la = _ts_micros(read, 31)
        assert late_la != late
        assert same(spark, lookup(late_la)) == [(31,)]
        assert_not_applied(spark, lookup(late_la), "zoned_legacy", "rebases in the JVM's default time zone")
        assert _legacy_files_zone(root, "zoned_legacy") == "Z"


def _legacy_files_zone(root: str, index: str):
    """What the newest ACTIVE version of `index` records of ts's files marked legacy (None: nothing)."""
    entry = json.load(open(newest_active_log_file(root, index)))
    column = next(c for c in entry["data"]["decoding"]["columns"] if c["name"] == "ts")
    return column["settings"].get("jvm.timeZone.legacyFiles")


def test_an_index_built_before_files_were_asked_asks_every_file_at_its_next_refresh(spark, root, tmp_path):
    """An index built before builds asked files for Spark's legacy marks records nothing of them:
    the next REFRESH that builds asks every file the index holds, not only the new ones, and
    records the zone where a carried file is marked."""
    path = str(tmp_path / "before")
    _ancient_parquet(path, False, SPARK_24, files=range(3))
    read = lambda: spark.read.parquet(path)
    lookup = _ts_lookup(read)
    with jvm_default_zone(spark) as set_zone, confs(spark, {TZ: "UTC"}):
        set_zone("UTC")
        spark.sql(f"CREATE BLOOM INDEX asked_late ON parquet.`{path}` FOR COLUMNS (ts)")
        assert _legacy_files_zone(root, "asked_late") == "Z"

        def as_built_before(entry):
            for c in entry["data"]["decoding"]["columns"]:
                c["settings"].pop("jvm.timeZone.legacyFiles", None)
        rewrite_newest_entry(spark, root, "asked_late", as_built_before)
        clear_index_cache(spark)
        _ancient_parquet(path, False, None, files=range(3, 4))  # another writer's file: not marked
        spark.sql("REFRESH BLOOM INDEX asked_late")
        assert _legacy_files_zone(root, "asked_late") == "Z"
        set_zone(LA)
        now = _ts_micros(read, 1)
        assert same(spark, lookup(now)) == [(1,)]
        assert_not_applied(spark, lookup(now), "asked_late", "rebases in the JVM's default time zone")


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_a_column_added_with_a_default_answers_only_where_read_with_it(spark, root, tmp_path, fmt):
    """`ALTER TABLE ... ADD COLUMN b ... DEFAULT 'zz'`: the table reads b as 'zz' in the files
    written before, a read of its folder by path as NULL. An index of the folder does not answer
    for the table; one of the table does, also one built before defaults were recorded."""
    table, location = f"dflt_{fmt}", str(tmp_path / "dflt")
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    try:
        spark.sql(f"CREATE TABLE {table} (id INT) USING {fmt} LOCATION '{location}'")
        spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
        spark.sql(f"ALTER TABLE {table} ADD COLUMN b STRING DEFAULT 'zz'")
        spark.sql(f"INSERT INTO {table} VALUES (3, 'q')")
        by_path = lambda: spark.read.schema("id INT, b STRING").format(fmt).load(location)
        BloomIndex(spark, progress=False).create(f"{table}_path", by_path(), ["b"])
        q = lambda: spark.sql(f"SELECT id FROM {table} WHERE b = 'zz'")
        assert [r[0] for r in same(spark, q)] == [1, 2]
        for where in ["b IN ('zz', 'x')", "b <=> 'zz'", "b = 'q'"]:
            same(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE {where}"), where)
        assert_not_applied(spark, q, f"{table}_path", "default", "'zz'", "create the index on the table")
        # By path those rows are NULL, and the folder's index answers.
        assert same(spark, lambda: by_path().where("b = 'zz'")) == []
        assert_prunes(spark, lambda: by_path().where("b = 'zz'"), f"{table}_path")
        spark.sql(f"CREATE BLOOM INDEX {table}_t ON {table} FOR COLUMNS (b)")
        assert [r[0] for r in same(spark, q)] == [1, 2]
        assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE b = 'q'"), f"{table}_t")
        # Its entry as a build before this change wrote it (no default recorded): it read the rows
        # through the table, with the default, and still answers.
        path = newest_active_log_file(root, f"{table}_t")
        entry = json.load(open(path))
        for col in entry["data"]["decoding"]["columns"]:
            assert col["physical"].pop("existsDefault") == "'zz'"
        os.remove(path)
        with open(path, "w") as out:
            out.write(entry_text(entry))
        clear_index_cache(spark)
        assert [r[0] for r in same(spark, q)] == [1, 2]
        assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE b = 'q'"), f"{table}_t")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_csv_reader_option_timestamp_format_differs(spark, root, tmp_path):
    path = str(tmp_path / "fmt")
    write_text_files(path, [[f"{f * 10 + h},2021/0{f + 1}/0{h % 9 + 1} {h:02d}:30" for h in range(10)] for f in range(4)], "csv")
    schema = "id INT, ts TIMESTAMP"
    built = lambda: spark.read.option("timestampFormat", "yyyy/MM/dd HH:mm").csv(path, schema=schema)
    swapped = lambda: spark.read.option("timestampFormat", "yyyy/dd/MM HH:mm").csv(path, schema=schema)
    BloomIndex(spark, progress=False).create("fmt_idx", built(), ["id", "ts"])
    # "2021/02/06 05:30" is Feb 6 as built, Jun 2 as the other format reads it.
    assert [r[0] for r in same(spark, lambda: built().where("ts = TIMESTAMP'2021-02-06 05:30:00'"))] == [15]
    assert_prunes(spark, lambda: built().where("ts = TIMESTAMP'2021-02-06 05:30:00'"), "fmt_idx")
    q = lambda: swapped().where("ts = TIMESTAMP'2021-06-02 05:30:00'")
    assert [r[0] for r in same(spark, q)] == [15]
    for where in ["ts IN (TIMESTAMP'2021-06-02 05:30:00', TIMESTAMP'2021-01-01 00:30:00')", "ts IS NULL",
                  "ts = TIMESTAMP'2021-02-06 05:30:00'"]:
        same(spark, lambda: swapped().where(where), where)
    assert_not_applied(spark, q, "fmt_idx", "timestampformat", "differs")
    # The option key's case is no difference.
    lower = lambda: spark.read.option("timestampformat", "yyyy/MM/dd HH:mm").csv(path, schema=schema)
    assert_prunes(spark, lambda: lower().where("ts = TIMESTAMP'2021-02-06 05:30:00'"), "fmt_idx")
    # No option at all: the default format does not parse these.
    plain = lambda: spark.read.csv(path, schema=schema)
    same(spark, lambda: plain().where("ts IS NULL"))
    same(spark, lambda: plain().where("ts = TIMESTAMP'2021-02-06 05:30:00'"))


def test_csv_null_value_option_differs(spark, root, tmp_path):
    path = str(tmp_path / "nulls")
    write_text_files(path, [[f"{f * 10 + i},{'NA' if i == 3 else 's' + str(f * 10 + i)}" for i in range(10)]
                            for f in range(4)], "csv")
    plain = lambda: spark.read.csv(path, schema="id INT, s STRING")
    na = lambda: spark.read.option("nullValue", "NA").csv(path, schema="id INT, s STRING")
    BloomIndex(spark, progress=False).create("nulls_idx", plain(), ["s"])
    assert len(same(spark, lambda: na().where("s IS NULL"))) == 4
    assert same(spark, lambda: na().where("s = 'NA'")) == []
    assert len(same(spark, lambda: plain().where("s = 'NA'"))) == 4
    assert_not_applied(spark, lambda: na().where("s IS NULL"), "nulls_idx", "nullvalue", "differs")
    assert_prunes(spark, lambda: plain().where("s = 's12'"), "nulls_idx")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_time_parser_policy_and_datetime_fallback(spark, root, tmp_path, fmt):
    """Dates that only the legacy parser or the fallback parser reads: an index built under one
    policy is not used under another."""
    path = str(tmp_path / fmt)
    texts = ["2021-03-04", "2021-3-5", "2021-02-30", "2021-03-06T10:00:00", "2021-03-07 junk"]
    lines = [[(f"{f * 10 + i},{t}" if fmt == "csv" else json.dumps({"id": f * 10 + i, "d": t}))
              for i, t in enumerate(texts)] for f in range(4)]
    write_text_files(path, lines, fmt)
    read = lambda: spark.read.format(fmt).schema("id INT, d DATE").load(path)
    fallback = f"spark.sql.legacy.{fmt}.enableDateTimeParsingFallback"
    policy = "spark.sql.legacy.timeParserPolicy"
    BloomIndex(spark, progress=False).create("dates_idx", read(), ["id", "d"])
    contexts = [{policy: "LEGACY"}, {fallback: "false"}, {fallback: "true"}, {policy: "LEGACY", fallback: "false"}]
    for ctx in contexts:
        with confs(spark, ctx):
            for where in ["d = DATE'2021-03-05'", "d = DATE'2021-03-02'", "d IS NULL", "d IS NOT NULL",
                          "d IN (DATE'2021-03-04', DATE'2021-03-06', DATE'2021-03-07')", "id = 13"]:
                same(spark, lambda: read().where(where), f"{ctx}: {where}")
    assert_prunes(spark, lambda: read().where("id = 13"), "dates_idx")
    assert_prunes(spark, lambda: read().where("d = DATE'2021-03-04'").where("id = 12"), "dates_idx")


# ---------------------------------------------------------------------------------------------
# Parquet: rebase, INT96, field ids


def _ancient_parquet(path: str, int96: bool, metadata: Optional[dict] = None, files: range = range(4)) -> None:
    """Files written by pyarrow (no Spark metadata unless `metadata` is given), ids 0..39 in 4 files
    (`files`: which of them): Spark reads their ancient dates and timestamps with the session's
    rebase modes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(path, exist_ok=True)
    base = dt.datetime(1500, 3, 1, 12, tzinfo=dt.timezone.utc)
    for f in files:
        ids = list(range(f * 10, f * 10 + 10))
        d = [dt.date(1500, 3, 1) + dt.timedelta(days=3 * i) if i % 2 else dt.date(2020, 3, 1) + dt.timedelta(days=i)
             for i in ids]
        ts = [base + dt.timedelta(hours=5 * i) if i % 2 else dt.datetime(2020, 3, 1, tzinfo=dt.timezone.utc)
              + dt.timedelta(hours=i) for i in ids]
        table = pa.table({"id": pa.array(ids, pa.int32()), "d": pa.array(d, pa.date32()),
                          "ts": pa.array(ts, pa.timestamp("us", tz="UTC"))})
        if metadata:
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
        pq.write_table(table, os.path.join(path, f"part-{f}.parquet"), use_deprecated_int96_timestamps=int96)


def _probe_values(spark, read, ids=(1, 8, 15)) -> dict:
    """For each of d and ts, the values of rows `ids` (ancient: odd ids) as the current session
    decodes them, as literals."""
    with confs(spark, {PRUNING: "false"}):
        rows = read().selectExpr("id", "unix_date(d) AS d", "unix_micros(ts) AS ts") \
            .where(f"id IN ({', '.join(map(str, ids))})").collect()
    return {"d": [f"date_from_unix_date({r.d})" for r in rows if r.d is not None],
            "ts": [f"timestamp_micros({r.ts})" for r in rows if r.ts is not None]}


@pytest.mark.parametrize("int96", [False, True])
def test_parquet_rebase_modes(spark, root, tmp_path, int96):
    path = str(tmp_path / "ancient")
    _ancient_parquet(path, int96)
    read = lambda: spark.read.parquet(path)
    rebase, rebase96 = "spark.sql.parquet.datetimeRebaseModeInRead", "spark.sql.parquet.int96RebaseModeInRead"
    contexts = [{rebase: "CORRECTED", rebase96: "CORRECTED"}, {rebase: "LEGACY", rebase96: "LEGACY"},
                {rebase: "LEGACY", rebase96: "CORRECTED"} if int96 else {rebase: "CORRECTED", rebase96: "LEGACY"}]
    probes = []
    for ctx in contexts:
        with confs(spark, ctx):
            p = _probe_values(spark, read)
            probes += [f"d = {v}" for v in p["d"]] + [f"ts = {v}" for v in p["ts"]]
    probes = sorted(set(probes))
    # Legacy rebasing of timestamps goes through the session zone.
    contexts.append({rebase: "LEGACY", rebase96: "LEGACY", TZ: LA})
    for build in [contexts[0] if int96 else contexts[1]]:
        with confs(spark, build):
            BloomIndex(spark, progress=False).create("rebase_idx", read(), ["d", "ts"])
        for ctx in contexts:
            with confs(spark, ctx):
                for where in probes:
                    same(spark, lambda: read().where(where), f"built {build}, queried {ctx}: {where}")
        with confs(spark, build):
            assert_prunes(spark, lambda: read().where(probes[0]).where("id = 1"), "rebase_idx")
        # The reader option overrides the setting: an index built under one is not used under the other.
        legacy = lambda: spark.read.option("datetimeRebaseMode", "LEGACY").option("int96RebaseMode", "LEGACY").parquet(path)
        for where in probes:
            same(spark, lambda: legacy().where(where), f"built {build}, option LEGACY: {where}")
        BloomIndex(spark, progress=False).drop("rebase_idx")


def test_footer_filters_follow_the_readers_rebase_option(spark, root, tmp_path):
    """Files written by pyarrow (no Spark metadata) with Bloom filters in their footers for an
    ancient DATE column: Spark rebases their days when the reader's `datetimeRebaseMode`
    option says LEGACY, whatever the session's setting. A footer filter holds the stored days,
    so it may stand for the column only where the read rebases nothing: the build reads the
    option as Spark's reader does and builds such files from the data."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "ancient_footers")
    os.makedirs(path)
    for f in range(2):
        # Days 37 apart: a rebased day never lands on another stored one.
        days = [dt.date(1400, 1, 1) + dt.timedelta(days=37 * (f * 50 + i)) for i in range(50)]
        pq.write_table(pa.table({"id": pa.array(range(f * 50, f * 50 + 50), pa.int32()), "d": pa.array(days, pa.date32())}),
                       os.path.join(path, f"part-{f}.parquet"), bloom_filter_options={"d": {"ndv": 50, "fpp": 0.001}})
    legacy = lambda: spark.read.option("datetimeRebaseMode", "LEGACY").parquet(path)
    with confs(spark, {"spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED"}):
        BloomIndex(spark, progress=False).create("ancient_footers", legacy(), ["d"])
        with confs(spark, {PRUNING: "false"}):
            days = [r.d for r in legacy().where("id IN (7, 63)").collect()]
        assert len(days) == 2
        for day in days:
            assert same(spark, lambda: legacy().where(f"d = DATE'{day}'").select("id"), str(day))
        d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX ancient_footers").collect()}
        assert d["column.d.files_from_footer"] == "0" and d["column.d.files_from_data"] == "2", d
        assert_prunes(spark, lambda: legacy().where(f"d = DATE'{days[0]}'"), "ancient_footers")
        # Read as the session says (no rebase), the same files' footers stand for the column.
        BloomIndex(spark, progress=False).create("ancient_plain", spark.read.parquet(path), ["d"])
        d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX ancient_plain").collect()}
        assert d["column.d.files_from_footer"] == "2", d
    for name in ("ancient_footers", "ancient_plain"):
        BloomIndex(spark, progress=False).drop(name)


def test_parquet_int96_timestamp_conversion_depends_on_the_time_zone(spark, root, tmp_path):
    """INT96 timestamps of files not written by parquet-mr are shifted by the session zone when
    spark.sql.parquet.int96TimestampConversion is on: then the zone matters for Parquet too."""
    path = str(tmp_path / "int96")
    _ancient_parquet(path, int96=True)
    read = lambda: spark.read.parquet(path)
    conv = "spark.sql.parquet.int96TimestampConversion"
    contexts = [{conv: "false", TZ: "UTC"}, {conv: "true", TZ: "UTC"}, {conv: "true", TZ: LA},
                {conv: "true", TZ: "Asia/Kolkata"}]
    probes = []
    for ctx in contexts:
        with confs(spark, ctx):
            probes += [f"ts = {v}" for v in _probe_values(spark, read, ids=(1, 8))["ts"]]
    probes = sorted(set(probes))
    for build in contexts[1:3]:
        with confs(spark, build):
            BloomIndex(spark, progress=False).create("int96_idx", read(), ["ts"])
        for ctx in contexts:
            with confs(spark, ctx):
                for where in probes + ["ts IS NULL"]:
                    same(spark, lambda: read().where(where), f"built {build}, queried {ctx}: {where}")
        BloomIndex(spark, progress=False).drop("int96_idx")


def test_parquet_field_ids(spark, root, tmp_path):
    """With spark.sql.parquet.fieldId.read.enabled a column is read by its field id, not its name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "ids")
    os.makedirs(path)
    schema = pa.schema([pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": b"1"}),
                        pa.field("x", pa.int32(), metadata={b"PARQUET:field_id": b"2"})])
    for f in range(4):
        ids = list(range(f * 10, f * 10 + 10))
        pq.write_table(pa.table({"a": ids, "x": [1000 + i for i in ids]}, schema=schema),
                       os.path.join(path, f"part-{f}.parquet"))
    # Column x of the read schema carries field id 1: by id it is the file's `a`, by name its `x`.
    read_schema = T.StructType([T.StructField("x", T.IntegerType(), True, {"parquet.field.id": 1})])
    read = lambda: spark.read.schema(read_schema).parquet(path)
    # Spark pushes filters to Parquet by name even when it reads by id (its own answers would
    # then be wrong with pruning off): not what this test is about.
    no_pushdown = {"spark.sql.parquet.filterPushdown": "false"}
    ids_on = {"spark.sql.parquet.fieldId.read.enabled": "true", **no_pushdown}
    ids_off = {"spark.sql.parquet.fieldId.read.enabled": "false", **no_pushdown}
    for build, query in [(ids_off, ids_on), (ids_on, ids_off)]:
        with confs(spark, build):
            BloomIndex(spark, progress=False).create("fid_idx", read(), ["x"])
        with confs(spark, query):
            for where in ["x = 5", "x = 1005", "x IN (5, 1017)", "x IS NULL"]:
                same(spark, lambda: read().where(where), f"built {build}, queried {query}: {where}")
            assert same(spark, lambda: read().where("x = 5" if query is ids_on else "x = 1005")) != []
        with confs(spark, build):
            assert_prunes(spark, lambda: read().where("x = 5" if build is ids_on else "x = 1005"), "fid_idx")
        BloomIndex(spark, progress=False).drop("fid_idx")


# ---------------------------------------------------------------------------------------------
# parse modes: builds read text PERMISSIVE, so no query in any mode loses a row


MODES = ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"]


def _record(fmt: str, id_, v) -> str:
    """One record of `id` and `v` (either may be malformed text) in `fmt`."""
    if fmt == "csv":
        return f"{id_},{v}"
    if fmt == "xml":
        return f"<r><id>{id_}</id><v>{v}</v></r>"
    return json.dumps({"id": id_, "v": v})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", ["csv", "json", "xml"])
def test_malformed_row_in_one_column_under_each_parse_mode(spark, root, tmp_path, fmt, mode):
    """A malformed value in one column: a query reading only the others keeps the row in every
    mode, so a build reads PERMISSIVE whatever the table says (XML too: an XML build under the
    table's DROPMALFORMED lost the row, `id = 5` gave [] against [(5,)])."""
    path = str(tmp_path / fmt)
    files = [[_record(fmt, f * 10 + i, f * 10 + i) for i in range(5)] for f in range(3)]
    files[0].append(_record(fmt, 5, "oops"))
    if fmt == "xml":  # one root element a file (Spark's XML reader reads no more than one record of a file without)
        files = [["<rows>"] + f + ["</rows>"] for f in files]
    write_text_files(path, files, fmt)
    table = f"pm_{fmt}_{mode.lower()}"
    row_tag = ", rowTag 'r'" if fmt == "xml" else ""
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"CREATE TABLE {table} (id INT, v INT) USING {fmt} OPTIONS (mode '{mode}'{row_tag}) LOCATION '{path}'")
    try:
        spark.sql(f"CREATE BLOOM INDEX {table}_idx ON {table} FOR COLUMNS (id, v)")
        # Only the good column is read: every mode keeps the row.
        assert sql_same(spark, f"SELECT id FROM {table} WHERE id = 5") == [(5,)]
        assert sql_same(spark, f"SELECT id FROM {table} WHERE id IN (5, 12)") == [(5,), (12,)]
        assert sql_same(spark, f"SELECT count(*) FROM {table} WHERE id = 5") == [(1,)]
        bad_column = [f"SELECT * FROM {table} WHERE id = 5", f"SELECT id, v FROM {table} WHERE v IS NULL",
                      f"SELECT id FROM {table} WHERE id = 5 AND v IS NULL"]
        if mode == "FAILFAST":
            for sql in bad_column:
                on, off = outcome(spark, lambda: spark.sql(sql), True), outcome(spark, lambda: spark.sql(sql), False)
                assert on[0] == "error" and off[0] == "error", f"{sql}: pruning on {on}, off {off}"
        else:
            expected = [(5, None)] if mode == "PERMISSIVE" else []
            assert sql_same(spark, bad_column[0]) == expected
            assert sql_same(spark, bad_column[1]) == expected
            assert sql_same(spark, bad_column[2]) == ([(5,)] if mode == "PERMISSIVE" else [])
            assert sql_same(spark, f"SELECT * FROM {table} WHERE v = 12") == [(12, 12)]
            sql_same(spark, f"SELECT * FROM {table} WHERE v IN (3, 13, 23) OR id = 5")
        # The context is unchanged: a point lookup of a good value still prunes.
        assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE id = 12"), f"{table}_idx")
        assert_prunes(spark, lambda: spark.sql(f"SELECT id FROM {table} WHERE id = 5"), f"{table}_idx")
    finally:
        spark.sql(f"DROP BLOOM INDEX IF EXISTS {table}_idx")
        spark.sql(f"DROP TABLE IF EXISTS {table}")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_path_source_parse_mode_at_query_differs_from_build(spark, root, tmp_path, fmt):
    """Index built from a DROPMALFORMED reader, queried PERMISSIVE and the other way round."""
    path = str(tmp_path / fmt)
    files = [[(f"{f * 10 + i},{f * 10 + i}" if fmt == "csv" else json.dumps({"id": f * 10 + i, "v": f * 10 + i}))
              for i in range(5)] for f in range(3)]
    files[1].append("15,oops" if fmt == "csv" else '{"id": 15, "v": "oops"}')
    write_text_files(path, files, fmt)
    read = lambda mode: spark.read.format(fmt).option("mode", mode).schema("id INT, v INT").load(path)
    for build in ("DROPMALFORMED", "PERMISSIVE"):
        BloomIndex(spark, progress=False).create("mode_idx", read(build), ["id", "v"])
        for query in ("PERMISSIVE", "DROPMALFORMED"):
            assert same(spark, lambda: read(query).select("id").where("id = 15"), f"{build}->{query}") == [(15,)]
            same(spark, lambda: read(query).where("id = 15"), f"{build}->{query}")
            same(spark, lambda: read(query).where("v IS NULL"), f"{build}->{query}")
            assert_prunes(spark, lambda: read(query).select("id").where("id = 15"), "mode_idx")
            assert_prunes(spark, lambda: read(query).select("id").where("id = 3"), "mode_idx")
        BloomIndex(spark, progress=False).drop("mode_idx")


def test_the_xml_wildcard_column_is_refused_and_never_answers(spark, root, tmp_path):
    """XML's wildcard column (`wildcardColName`, `xs_any` by default) holds the elements the read's
    schema does not name, so its value depends on the columns a query reads (`SELECT *` and
    `SELECT xs_any` differ): CREATE refuses it, and a column indexed as data under another
    wildcard name is not used once a query reads it as the wildcard. Before: an index on it
    skipped the row `SELECT * ... WHERE xs_any = 'zz'` returns."""
    path = str(tmp_path / "xml_wild")
    write_text_files(path, [["<r><c>zz</c><a>5</a><xs_any>p</xs_any></r>"], ["<r><a>6</a><xs_any>q</xs_any></r>"],
                            ["<r><a>7</a><xs_any>s</xs_any></r>"]], "xml")
    read = lambda **o: (spark.read.format("xml").option("rowTag", "r").options(**o)
                        .schema("a INT, xs_any STRING").load(path))
    for make in (read, lambda: read(wildcardColName="a")):
        column = "xs_any" if make is read else "a"
        with pytest.raises(AnalysisException) as e:
            BloomIndex(spark, progress=False).create("wild_idx", make(), [column])
        assert e.value.getCondition() == "BLOOM_INDEX_XML_WILDCARD_COLUMN", str(e.value)
        assert column in str(e.value)
    # Under another wildcard name, xs_any is an element like any other: indexed, and it prunes.
    BloomIndex(spark, progress=False).create("wild_idx", read(wildcardColName="other"), ["a", "xs_any"])
    try:
        as_data = lambda v: read(wildcardColName="other").where(f"xs_any = '{v}'")
        assert same(spark, lambda: as_data("q")) == [(6, "q")]
        assert_prunes(spark, lambda: as_data("q"), "wild_idx")
        # Read as the wildcard: never answered by the filters of the element.
        for v in ("zz", "p", "q", "5"):
            same(spark, lambda: read().where(f"xs_any = '{v}'"), v)
            same(spark, lambda: read().select("xs_any").where(f"xs_any = '{v}'"), v)
        assert_not_applied(spark, lambda: read().where("xs_any = 'zz'"), "wild_idx", "wildcard")
    finally:
        BloomIndex(spark, progress=False).drop("wild_idx")


def test_a_schema_file_rewritten_under_the_same_option_is_a_new_context(spark, root, tmp_path):
    """Avro's `avroSchemaUrl` and XML's `rowValidationXSDPath` name a file whose content changes
    values (a field's default, which rows are valid): the index records the content's fingerprint
    with the option, so a file rewritten in place is not read through filters of the old one.
    Before: the option's text alone was recorded, and `b = 'y'` after the default changed from
    'x' to 'y' gave [] against both rows."""
    path = str(tmp_path / "avro_url")
    spark.range(0, 40, 1, 4).selectExpr("CAST(id AS INT) AS a").write.format("avro").save(path)
    avsc = tmp_path / "reader.avsc"

    def reader_schema(default: str) -> str:
        avsc.write_text(json.dumps({"type": "record", "name": "t", "fields": [
            {"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": default}]}))
        return str(avsc)

    read = lambda: spark.read.format("avro").option("avroSchemaUrl", avsc.as_uri()).load(path)
    reader_schema("x")
    BloomIndex(spark, progress=False).create("url_idx", read(), ["a", "b"])
    try:
        assert len(same(spark, lambda: read().where("b = 'x'"))) == 40
        assert_prunes(spark, lambda: read().where("a = 3"), "url_idx")
        reader_schema("y")
        assert len(same(spark, lambda: read().where("b = 'y'"))) == 40
        assert same(spark, lambda: read().where("a = 3")) == [(3, "y")]
        assert_not_applied(spark, lambda: read().where("b = 'y'"), "url_idx", "avroschemaurl")
        reader_schema("x")  # the same content again: the same context
        assert_prunes(spark, lambda: read().where("a = 3"), "url_idx")
    finally:
        BloomIndex(spark, progress=False).drop("url_idx")

    xml = str(tmp_path / "xml_xsd")
    write_text_files(xml, [[f"<r><a>{f * 100 + 50}</a></r>"] for f in range(4)], "xml")
    xsd = tmp_path / "rows.xsd"

    def xsd_with_max(n: int) -> None:
        xsd.write_text('<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
                       '<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a">'
                       f'<xs:simpleType><xs:restriction base="xs:int"><xs:maxInclusive value="{n}"/>'
                       '</xs:restriction></xs:simpleType></xs:element></xs:sequence></xs:complexType>'
                       '</xs:element></xs:schema>')

    read_xml = lambda: (spark.read.format("xml").option("rowTag", "r").option("rowValidationXSDPath", str(xsd))
                        .schema("a INT").load(xml))
    xsd_with_max(1000)
    BloomIndex(spark, progress=False).create("xsd_idx", read_xml(), ["a"])
    try:
        # No fingerprint says which XSD a read validates with (Spark keeps each parsed XSD per path
        # in each JVM, a build's tasks too; an XSD may include others): never used, even unchanged.
        for max_value in (1000, 100):
            xsd_with_max(max_value)
            same(spark, lambda: read_xml().where("a = 150"))
            assert_not_applied(spark, lambda: read_xml().where("a = 150"), "xsd_idx", "rowvalidationxsdpath")
    finally:
        BloomIndex(spark, progress=False).drop("xsd_idx")


def test_avro_files_without_the_extension_are_indexed_whatever_the_setting(spark, root, tmp_path):
    """Under Avro's `avro.mapred.ignore.inputs.without.extension` (a Hadoop setting, or the
    reader's `ignoreExtension = false`) a file not named `*.avro` reads no rows. Builds read every
    file, so the index holds a superset and answers under either. Before: built under the
    setting, the index skipped that file once it was unset: `a IN (1, 2)` gave [(2,)] against
    [(1,), (2,)]."""
    path = str(tmp_path / "avro_ext")
    spark.createDataFrame([(1,), (2,)], "a INT").repartition(2, "a").write.format("avro").save(path)
    holding_1 = [f for f in glob.glob(os.path.join(path, "*.avro"))
                 if [r.a for r in spark.read.format("avro").load(f).collect()] == [1]][0]
    os.rename(holding_1, os.path.join(path, "part-without-extension"))
    setting = "avro.mapred.ignore.inputs.without.extension"
    read = lambda: spark.read.format("avro").load(path)
    try:
        with confs(spark, {setting: "true"}):
            BloomIndex(spark, progress=False).create("ext_idx", read(), ["a"])
            assert same(spark, lambda: read().where("a IN (1, 2)")) == [(2,)]
            assert_prunes(spark, lambda: read().where("a = 2"), "ext_idx")
        assert same(spark, lambda: read().where("a IN (1, 2)")) == [(1,), (2,)]
        assert same(spark, lambda: read().where("a = 1")) == [(1,)]
        assert same(spark, lambda: spark.read.format("avro").option("ignoreExtension", "false").load(path)
                    .where("a = 1")) == []
        assert_prunes(spark, lambda: read().where("a = 2"), "ext_idx")
        # An index built before builds read every file recorded nothing of it, and may have read
        # none of such a file: not used until rebuilt.
        def unmark(node):
            if isinstance(node, dict):
                node.pop("bloomindex.avro.filesWithoutExtension", None)
                for v in node.values():
                    unmark(v)
            elif isinstance(node, list):
                for v in node:
                    unmark(v)
        rewrite_newest_entry(spark, root, "ext_idx", unmark)
        assert same(spark, lambda: read().where("a IN (1, 2)")) == [(1,), (2,)]
        assert_not_applied(spark, lambda: read().where("a = 2"), "ext_idx", "without the .avro extension")
    finally:
        BloomIndex(spark, progress=False).drop("ext_idx")


# ---------------------------------------------------------------------------------------------
# refresh under another context


@contextlib.contextmanager
def csv_ts_table(spark, name: str, path: str):
    """A catalog table over `_csv_timestamps` files (a table keeps its schema for REFRESH)."""
    _csv_timestamps(path)
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id INT, ts TIMESTAMP) USING csv LOCATION '{path}'")
    try:
        yield lambda: spark.table(name)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_incremental_refresh_under_another_context_is_refused(spark, root, tmp_path):
    path = str(tmp_path / "refresh")
    probe = "ts = TIMESTAMP'2021-03-02 05:00:00'"
    with csv_ts_table(spark, "rf_t", path) as read:
        with confs(spark, {TZ: "UTC"}):
            spark.sql("CREATE BLOOM INDEX rf_idx ON rf_t FOR COLUMNS (id, ts)")
        before = log_entries(root, "rf_idx")
        # A file added meanwhile: an incremental refresh would index it under the new zone only.
        write_text_files(str(tmp_path / "more"), [["100,2021-03-02 05:00:00"]], "csv")
        os.replace(str(tmp_path / "more" / "part-000.csv"), os.path.join(path, "part-new.csv"))
        spark.catalog.refreshTable("rf_t")
        with confs(spark, {TZ: LA}):
            with pytest.raises(AnalysisException, match=re.escape("REFRESH BLOOM INDEX rf_idx FULL")):
                spark.sql("REFRESH BLOOM INDEX rf_idx")
            with pytest.raises(AnalysisException, match=re.escape("REFRESH BLOOM INDEX rf_idx FULL")):
                BloomIndex(spark, progress=False).refresh("rf_idx")
            assert log_entries(root, "rf_idx") == before
            assert sorted(r[0] for r in same(spark, lambda: read().where(probe))) == [15, 100]
        # Nothing stored was lost: the old index still answers, and prunes, for UTC queries.
        with confs(spark, {TZ: "UTC"}):
            assert sorted(r[0] for r in same(spark, lambda: read().where(probe))) == [15, 100]
            assert_prunes(spark, lambda: read().where("id = 33"), "rf_idx")
            assert_prunes(spark, lambda: read().where(probe), "rf_idx")  # the new file is read, others skipped
        # FULL rebuilds under the session's zone; then queries in that zone prune again.
        with confs(spark, {TZ: LA}):
            spark.sql("REFRESH BLOOM INDEX rf_idx FULL")
            assert sorted(r[0] for r in same(spark, lambda: read().where(probe))) == [15, 100]
            assert_prunes(spark, lambda: read().where(probe), "rf_idx")
            assert_prunes(spark, lambda: read().where("id = 100"), "rf_idx")
            for where in ["ts IN (TIMESTAMP'2021-03-01 00:00:00', TIMESTAMP'2021-03-04 09:00:00')", "id = 100",
                          "ts IS NULL"]:
                same(spark, lambda: read().where(where), where)
            # And an incremental refresh in the same zone is fine.
            spark.sql("REFRESH BLOOM INDEX rf_idx")
        with confs(spark, {TZ: "UTC"}):
            assert sorted(r[0] for r in same(spark, lambda: read().where(probe))) == [15, 100]
            assert_not_applied(spark, lambda: read().where(probe), "rf_idx", "time zone")


def test_incremental_refresh_of_a_parquet_index_under_another_time_zone(spark, root, tmp_path):
    """The zone is no part of a Parquet timestamp's decoding: the refresh is incremental."""
    path = str(tmp_path / "pq")
    spark.range(40).selectExpr("cast(id AS INT) AS id", "timestamp_seconds(1600000000 + id * 3600) AS ts") \
        .repartition(4).write.parquet(path)
    with confs(spark, {TZ: "UTC"}):
        spark.sql(f"CREATE BLOOM INDEX pq_rf ON parquet.`{path}` FOR COLUMNS (id, ts)")
    spark.range(100, 110).selectExpr("cast(id AS INT) AS id", "timestamp_seconds(1600000000 + id * 3600) AS ts") \
        .coalesce(1).write.mode("append").parquet(path)
    with confs(spark, {TZ: LA}):
        spark.sql("REFRESH BLOOM INDEX pq_rf")
        assert log_entries(root, "pq_rf")[-1]["operation"] == "REFRESH INCREMENTAL"
        q = lambda: spark.read.parquet(path).where(f"ts = timestamp_seconds({1600000000 + 105 * 3600})")
        assert [r[0] for r in same(spark, q)] == [105]
        assert_prunes(spark, q, "pq_rf")


def test_refresh_of_a_table_whose_options_changed(spark, root, tmp_path):
    """ALTER TABLE ... SET SERDEPROPERTIES / OPTIONS changes the reader options of a table."""
    path = str(tmp_path / "opt_table")
    write_text_files(path, [[f"{f * 10 + i},{'NA' if i == 2 else 's' + str(f * 10 + i)}" for i in range(10)]
                            for f in range(4)], "csv")
    spark.sql("DROP TABLE IF EXISTS opt_t")
    spark.sql(f"CREATE TABLE opt_t (id INT, s STRING) USING csv LOCATION '{path}'")
    try:
        spark.sql("CREATE BLOOM INDEX opt_t_idx ON opt_t FOR COLUMNS (s)")
        spark.sql("ALTER TABLE opt_t SET SERDEPROPERTIES ('nullValue' = 'NA')")
        assert len(sql_same(spark, "SELECT * FROM opt_t WHERE s IS NULL")) == 4
        assert sql_same(spark, "SELECT * FROM opt_t WHERE s = 'NA'") == []
        with pytest.raises(AnalysisException, match=re.escape("REFRESH BLOOM INDEX opt_t_idx FULL")):
            spark.sql("REFRESH BLOOM INDEX opt_t_idx")
        spark.sql("REFRESH BLOOM INDEX opt_t_idx FULL")
        assert len(sql_same(spark, "SELECT * FROM opt_t WHERE s IS NULL")) == 4
        assert sql_same(spark, "SELECT * FROM opt_t WHERE s = 's15'") == [(15, "s15")]
        assert_prunes(spark, lambda: spark.sql("SELECT * FROM opt_t WHERE s = 's15'"), "opt_t_idx")
    finally:
        spark.sql("DROP BLOOM INDEX IF EXISTS opt_t_idx")
        spark.sql("DROP TABLE IF EXISTS opt_t")


# ---------------------------------------------------------------------------------------------
# entries written before decoding contexts were recorded


def test_index_written_before_decoding_contexts_is_not_used_until_rebuilt(spark, root, tmp_path):
    """An entry of log format 1 says nothing of how its values were decoded. Here they were
    decoded in Asia/Kolkata; the refresh runs in UTC and must rebuild everything, not stamp the
    old filters with UTC."""
    probe = "ts = TIMESTAMP'2021-03-02 05:00:00'"
    with csv_ts_table(spark, "old_t", str(tmp_path / "old")) as read:
        with confs(spark, {TZ: "Asia/Kolkata"}):
            spark.sql("CREATE BLOOM INDEX old_idx ON old_t FOR COLUMNS (id, ts)")
            entry = json.load(open(newest_active_log_file(root, "old_idx")))
            assert "decoding" in entry["data"], entry
            make_pre_decoding_entry(spark, root, "old_idx")
            # Even in the build's own zone it is not used: nothing says which zone that was.
            assert_not_applied(spark, lambda: read().where("id = 15"), "old_idx", "REFRESH BLOOM INDEX old_idx FULL")
            assert len(same(spark, lambda: read().where(probe))) == 1
        with confs(spark, {TZ: "UTC"}):
            for where in [probe, "id = 15", "ts IS NULL"]:
                same(spark, lambda: read().where(where), where)
            assert_not_applied(spark, lambda: read().where(probe), "old_idx", "REFRESH BLOOM INDEX old_idx FULL")
            version = BloomIndex(spark, progress=False).refresh("old_idx")  # incremental: rebuilds in full
            entries = log_entries(root, "old_idx")
            assert entries[-1]["version"] == version and entries[-1]["state"] == "ACTIVE"
            assert "decoding" in entries[-1]["data"]
            clear_index_cache(spark)
            assert [r[0] for r in same(spark, lambda: read().where(probe))] == [15]
            assert_prunes(spark, lambda: read().where(probe), "old_idx")
            for where in ["ts IN (TIMESTAMP'2021-03-01 00:00:00', TIMESTAMP'2021-03-04 09:00:00')", "id = 15"]:
                same(spark, lambda: read().where(where), where)
                assert_prunes(spark, lambda: read().where(where), "old_idx")
        spark.sql("DROP BLOOM INDEX old_idx")


def test_old_parquet_table_index_is_rebuilt_by_an_incremental_refresh(spark, root):
    spark.sql("DROP TABLE IF EXISTS old_pq")
    spark.range(40).selectExpr("cast(id AS INT) AS id", "cast(id AS STRING) AS s").repartition(4) \
        .write.saveAsTable("old_pq")
    try:
        spark.sql("CREATE BLOOM INDEX old_pq_idx ON old_pq FOR COLUMNS (id, s)")
        assert_prunes(spark, lambda: spark.sql("SELECT * FROM old_pq WHERE id = 7"), "old_pq_idx")
        make_pre_decoding_entry(spark, root, "old_pq_idx")
        assert sql_same(spark, "SELECT * FROM old_pq WHERE id = 7") == [(7, "7")]
        assert_not_applied(spark, lambda: spark.sql("SELECT * FROM old_pq WHERE id = 7"), "old_pq_idx",
                           "REFRESH BLOOM INDEX old_pq_idx FULL")
        spark.sql("REFRESH BLOOM INDEX old_pq_idx")
        assert "decoding" in log_entries(root, "old_pq_idx")[-1]["data"]
        assert sql_same(spark, "SELECT * FROM old_pq WHERE s = '7'") == [(7, "7")]
        assert_prunes(spark, lambda: spark.sql("SELECT * FROM old_pq WHERE s = '7'"), "old_pq_idx")
    finally:
        spark.sql("DROP BLOOM INDEX IF EXISTS old_pq_idx")
        spark.sql("DROP TABLE IF EXISTS old_pq")


# ---------------------------------------------------------------------------------------------
# global filters


@pytest.mark.parametrize("added", [False, True], ids=["delete", "delete-and-add"])
def test_global_index_incremental_refresh_after_a_deleted_file(spark, root, tmp_path, added):
    dim, fact = str(tmp_path / "dim"), str(tmp_path / "fact")
    spark.range(200).selectExpr("id * 3 AS k", "cast(id AS STRING) AS s").repartition(4).write.parquet(dim)
    spark.range(800).selectExpr("id AS k", "id AS v").repartition(2).write.parquet(fact)
    spark.sql(f"CREATE BLOOM INDEX g_idx ON parquet.`{dim}` FOR COLUMNS (k) OPTIONS (global = true)")
    remove_data_file(sorted(glob.glob(os.path.join(dim, "*.parquet")))[0])
    if added:
        spark.range(1000, 1010).selectExpr("id AS k", "cast(id AS STRING) AS s").coalesce(1) \
            .write.mode("append").parquet(dim)
    spark.sql("REFRESH BLOOM INDEX g_idx")
    # No current key is certainly absent.
    assert spark.sql(f"SELECT count(*) FROM parquet.`{dim}` WHERE NOT bloom_might_contain('g_idx', 'k', k)") \
        .collect()[0][0] == 0
    keys = sorted(r.k for r in spark.read.parquet(dim).collect())
    assert sorted(r.k for r in BloomIndex(spark).prefilter(spark.read.parquet(dim), "k", "g_idx", "k").collect()) == keys
    spark.read.parquet(fact).createOrReplaceTempView("g_fact")
    spark.read.parquet(dim).createOrReplaceTempView("g_dim")
    for sql in ["SELECT f.v, d.s FROM g_fact f JOIN g_dim d ON f.k = d.k",
                "SELECT f.v FROM g_fact f LEFT SEMI JOIN g_dim d ON f.k = d.k",
                "SELECT count(*) FROM g_fact WHERE bloom_might_contain('g_idx', 'k', k) AND k IN (SELECT k FROM g_dim)"]:
        with confs(spark, {JOIN_FILTER: "true"}):
            on = _rows(spark.sql(sql))
        with confs(spark, {JOIN_FILTER: "false"}):
            off = _rows(spark.sql(sql))
        assert on == off, sql
    joined = spark.sql("SELECT f.k FROM g_fact f JOIN g_dim d ON f.k = d.k").collect()
    assert sorted(r.k for r in joined) == [k for k in keys if k < 800]
    # The refreshed index covers the current files: a point lookup prunes.
    assert_prunes(spark, lambda: spark.read.parquet(dim).where(f"k = {keys[len(keys) // 2]}"), "g_idx")


def test_bloom_might_contain_on_a_stale_index_needs_an_opt_in(spark, root, tmp_path):
    dim = str(tmp_path / "dim")
    spark.range(100).selectExpr("id * 2 AS k").repartition(2).write.parquet(dim)
    spark.sql(f"CREATE BLOOM INDEX st_idx ON parquet.`{dim}` FOR COLUMNS (k) OPTIONS (global = true)")
    dim_df = lambda: spark.read.parquet(dim)
    assert spark.sql(f"SELECT count(*) FROM parquet.`{dim}` WHERE bloom_might_contain('st_idx', 'k', k)").collect()[0][0] == 100
    assert dim_df().filter(might_contain("st_idx", "k", "k")).count() == 100
    spark.range(500, 505).selectExpr("id AS k").coalesce(1).write.mode("append").parquet(dim)

    def refused(run):
        with pytest.raises(AnalysisException) as e:
            run()
        assert "st_idx" in str(e.value) and "stale" in str(e.value).lower(), str(e.value)

    refused(lambda: spark.sql(f"SELECT * FROM parquet.`{dim}` WHERE bloom_might_contain('st_idx', 'k', k)").collect())
    refused(lambda: spark.sql("SELECT bloom_might_contain('st_idx', 'k', 4L)").collect())
    refused(lambda: dim_df().filter(might_contain("st_idx", "k", "k")).collect())
    refused(lambda: BloomIndex(spark).prefilter(dim_df(), "k", "st_idx", "k").collect())
    # Opted in: the stale filter is used (the new file's keys are certainly absent from it).
    n = spark.sql(f"SELECT count(*) FROM parquet.`{dim}` WHERE bloom_might_contain('st_idx', 'k', k, true)").collect()[0][0]
    assert 100 <= n <= 105
    assert 100 <= dim_df().filter(might_contain("st_idx", "k", "k", allow_stale=True)).count() <= 105
    assert 100 <= BloomIndex(spark).prefilter(dim_df(), "k", "st_idx", "k", allow_stale=True).count() <= 105
    refused(lambda: spark.sql("SELECT bloom_might_contain('st_idx', 'k', 4L, false)").collect())
    # Refreshed: no opt-in needed.
    spark.sql("REFRESH BLOOM INDEX st_idx")
    assert dim_df().filter(might_contain("st_idx", "k", "k")).count() == 105


# ---------------------------------------------------------------------------------------------
# Delta Lake: column mapping changes which physical column a name reads


def _delta_table(spark, path: str) -> str:
    spark.range(40).selectExpr("id AS k", "cast(id + 100 AS INT) AS v").repartition(4) \
        .write.format("delta").save(path)
    return f"delta.`{path}`"


def _enable_column_mapping(spark, t: str) -> None:
    spark.sql(f"""ALTER TABLE {t} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name',
                  'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')""")


@pytest.mark.delta
def test_delta_column_dropped_and_added_again(spark, root, tmp_path):
    t = _delta_table(spark, str(tmp_path / "delta"))
    spark.sql(f"CREATE BLOOM INDEX dm_idx ON {t} FOR COLUMNS (k, v)")
    _enable_column_mapping(spark, t)
    assert sql_same(spark, f"SELECT * FROM {t} WHERE k = 5") == [(5, 105)]
    spark.sql(f"ALTER TABLE {t} DROP COLUMN k")
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (k INT)")
    assert sql_same(spark, f"SELECT count(*) FROM {t} WHERE k IS NULL") == [(40,)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE k = 5") == []
    assert sql_same(spark, f"SELECT count(*) FROM {t} WHERE k IS NOT NULL") == [(0,)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v = 105") == [(105, None)]
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN v TO w")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN k TO v")
    assert sql_same(spark, f"SELECT count(*) FROM {t} WHERE v IS NULL") == [(40,)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v = 105") == []
    assert sql_same(spark, f"SELECT * FROM {t} WHERE w = 105") == [(105, None)]
    assert sql_same(spark, f"SELECT count(*) FROM {t} WHERE w IS NULL") == [(0,)]


@pytest.mark.delta
def test_delta_columns_renamed_across(spark, root, tmp_path):
    t = _delta_table(spark, str(tmp_path / "delta"))
    spark.sql(f"CREATE BLOOM INDEX dr_idx ON {t} FOR COLUMNS (k, v)")
    _enable_column_mapping(spark, t)
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN v TO w")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN k TO v")
    # `v` now reads the files' `k`; the index's `v` holds the old `v`.
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v = 5") == [(5, 105)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v = 105") == []
    assert sql_same(spark, f"SELECT * FROM {t} WHERE w = 105") == [(5, 105)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v IN (5, 17) AND w IS NOT NULL") == [(5, 105), (17, 117)]
    assert sql_same(spark, f"SELECT count(*) FROM {t} WHERE v IS NULL") == [(0,)]
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN v TO k")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN w TO v")
    # Back to the names the index was built with, on the same physical columns.
    assert sql_same(spark, f"SELECT * FROM {t} WHERE k = 5") == [(5, 105)]
    assert sql_same(spark, f"SELECT * FROM {t} WHERE v = 105") == [(5, 105)]


@pytest.mark.parametrize("statement", ["create", "refresh"])
def test_a_build_under_ignore_corrupt_files_never_indexes_part_of_a_file(spark, root, tmp_path, statement):
    # Under spark.sql.files.ignoreCorruptFiles Spark's scan ends a file quietly at its first
    # unreadable part and keeps the rows before it. A build that read so would store a filter of
    # the rows before the damage under the whole file's identity: k = 2500, in the row group
    # after the damaged one, which a query's own read reaches (the statistics skip the first
    # two row groups), would be skipped. The build reads every file whole or fails, naming it;
    # nothing stored is lost.
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "cut"
    p.mkdir()
    pq.write_table(pa.table({"k": pa.array([5000, 5001], pa.int64())}), str(p / "a.parquet"))
    bad = str(p / "b.parquet")

    def damaged():
        pq.write_table(pa.table({"k": pa.array(range(3000), pa.int64())}), bad,
                       row_group_size=1000, compression="NONE", use_dictionary=False)
        off = pq.ParquetFile(bad).metadata.row_group(1).column(0).data_page_offset
        with open(bad, "r+b") as fh:  # same size: row group 1's page header is junk
            fh.seek(off)
            fh.write(b"\xff" * 16)

    name = f"cut_{statement}_ix"
    query = lambda: spark.read.parquet(str(p)).where("k IN (2500, 5001)")  # noqa: E731
    with confs(spark, {"spark.sql.files.ignoreCorruptFiles": "true", PRUNING: "true"}):
        if statement == "refresh":
            spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{p}` FOR COLUMNS (k)")
            damaged()
        else:
            damaged()
        # Spark itself reads past the damage: row group 2 holds 2500.
        with confs(spark, {PRUNING: "false"}):
            assert sorted(r.k for r in query().collect()) == [2500, 5001]
        sql = f"REFRESH BLOOM INDEX {name}" if statement == "refresh" else f"CREATE BLOOM INDEX {name} ON parquet.`{p}` FOR COLUMNS (k)"
        with pytest.raises(Exception, match="b.parquet"):
            spark.sql(sql)
        assert same(spark, query) == [(2500,), (5001,)]
        point = lambda: spark.read.parquet(str(p)).where("k = 2500")  # noqa: E731
        assert same(spark, point) == [(2500,)]
        if statement == "refresh":
            # The version before still answers: b.parquet is new to it and read whole, a.parquet skipped.
            assert kept(report(spark, point), name) == (1, 2)
        else:
            assert kept(report(spark, point), name) is None


# ---------------------------------------------------------------------------------------------
# settings Spark's readers take from elsewhere: the Hadoop configuration, XML's parser, the
# corrupt-record column


ORC_POSITIONAL = "orc.force.positional.evolution"


@pytest.mark.parametrize("where", ["session", "hadoop"])
def test_orc_read_by_position_under_a_setting_does_not_use_an_index_built_by_name(spark, root, tmp_path, where):
    """`orc.force.positional.evolution` makes ORC read every file's columns by position: set in the
    session or in the cluster's Hadoop configuration, the reader takes it without any reader option.
    A file whose columns are stored in another order then reads other values than the build read."""
    path = str(tmp_path / "orc_pos")
    spark.createDataFrame([(1, 100)], "a INT, b INT").coalesce(1).write.orc(path)
    spark.createDataFrame([(200, 2)], "b INT, a INT").coalesce(1).write.mode("append").orc(path)
    read = lambda: spark.read.schema("a INT, b INT").orc(path)
    BloomIndex(spark, progress=False).create("orc_pos", read(), ["a"])
    assert same(spark, lambda: read().where("a = 2")) == [(2, 200)]
    assert_prunes(spark, lambda: read().where("a = 2"), "orc_pos")
    hadoop = spark._jsc.hadoopConfiguration()
    try:
        with confs(spark, {ORC_POSITIONAL: "true" if where == "session" else None}):
            if where == "hadoop":
                hadoop.set(ORC_POSITIONAL, "true")
            # Read by position, the second file's first column (its b) is a.
            assert same(spark, lambda: read().where("a = 200")) == [(200, 2)]
            assert same(spark, lambda: read().where("a IN (1, 200)")) == [(1, 100), (200, 2)]
            assert_not_applied(spark, lambda: read().where("a = 200"), "orc_pos", ORC_POSITIONAL)
    finally:
        hadoop.unset(ORC_POSITIONAL)
    assert_prunes(spark, lambda: read().where("a = 2"), "orc_pos")
    BloomIndex(spark, progress=False).drop("orc_pos")


def test_xml_dates_read_under_another_parser_policy(spark, root, tmp_path):
    """Spark's XML reader parses dates under the session's `spark.sql.legacy.timeParserPolicy`:
    LEGACY reads `2020-1-5` with the pattern `yyyy-MM-dd`, which the default policy reads as NULL."""
    path = str(tmp_path / "xml_dates")
    os.makedirs(path)
    for i, d in enumerate(["2020-1-5", "2021-02-03", "2022-03-04"]):
        with open(os.path.join(path, f"part-{i}.xml"), "w") as f:
            f.write(f"<rows><r><id>{i + 1}</id><d>{d}</d></r></rows>\n")
    spark.sql("DROP TABLE IF EXISTS xml_dates")
    spark.sql(f"CREATE TABLE xml_dates (id INT, d DATE) USING xml OPTIONS (rowTag 'r', dateFormat 'yyyy-MM-dd') "
              f"LOCATION '{path}'")
    try:
        spark.sql("CREATE BLOOM INDEX xml_dates_idx ON xml_dates FOR COLUMNS (id, d)")
        q = lambda: spark.sql("SELECT * FROM xml_dates WHERE d = DATE'2020-01-05'")
        assert same(spark, q) == []
        assert_prunes(spark, lambda: spark.sql("SELECT * FROM xml_dates WHERE d = DATE'2021-02-03'"), "xml_dates_idx")
        with confs(spark, {"spark.sql.legacy.timeParserPolicy": "LEGACY"}):
            assert same(spark, q) == [(1, dt.date(2020, 1, 5))]
            assert_not_applied(spark, q, "xml_dates_idx", "timeParserPolicy", "differs")
            assert_prunes(spark, lambda: spark.sql("SELECT * FROM xml_dates WHERE id = 2"), "xml_dates_idx")
    finally:
        spark.sql("DROP BLOOM INDEX IF EXISTS xml_dates_idx")
        spark.sql("DROP TABLE IF EXISTS xml_dates")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_corrupt_record_column_is_refused_and_never_answers(spark, root, tmp_path, fmt):
    """The corrupt-record column holds the whole record where a column the query reads fails to
    parse, so its values depend on the columns each query reads: no index may hold it. CREATE
    refuses it (named by the session or by the reader's option); a column indexed as data under a
    session naming another corrupt-record column is not used once a query reads it as that column."""
    path = str(tmp_path / f"corrupt_{fmt}")
    if fmt == "csv":
        write_text_files(path, [["1,abc,x"], ["2,3,y"], ["3,4,z"]], fmt)
    else:
        write_text_files(path, [[json.dumps({"id": i, "v": v, "_corrupt_record": c})]
                                for i, v, c in [(1, "abc", "x"), (2, 3, "y"), (3, 4, "z")]], fmt)
    schema = "id INT, v INT, _corrupt_record STRING"
    read = lambda: spark.read.format(fmt).schema(schema).load(path)
    for make in (read, lambda: spark.read.format(fmt).option("columnNameOfCorruptRecord", "bad")
                 .schema("id INT, v INT, bad STRING").load(path)):
        column = make().columns[-1]
        with pytest.raises(AnalysisException) as e:
            BloomIndex(spark, progress=False).create("corrupt_idx", make(), ["id", column])
        assert e.value.getCondition() == "BLOOM_INDEX_CORRUPT_RECORD_COLUMN", str(e.value)
        assert column in str(e.value)
    with confs(spark, {"spark.sql.columnNameOfCorruptRecord": "_bad"}):
        # Here _corrupt_record is a column of the data: x, y, z.
        BloomIndex(spark, progress=False).create("corrupt_idx", read(), ["id", "_corrupt_record"])
        assert same(spark, lambda: read().where("_corrupt_record = 'y'")) == [(2, 3, "y")]
        assert_prunes(spark, lambda: read().where("_corrupt_record = 'y'"), "corrupt_idx")
    # Now it is the corrupt-record column: the first record, malformed in v, is its value there.
    line = open(glob.glob(os.path.join(path, f"part-000.{fmt}"))[0]).read().rstrip("\n")
    q = lambda: spark.read.format(fmt).schema(schema).load(path).where(f"_corrupt_record = '{line}'")
    assert same(spark, q) == [(1, None, line)]
    assert_not_applied(spark, q, "corrupt_idx", "corrupt-record column")
    assert_prunes(spark, lambda: read().where("id = 2"), "corrupt_idx")
    BloomIndex(spark, progress=False).drop("corrupt_idx")


# ---------------------------------------------------------------------------------------------
# text and ORC readers' settings an audit found unrecorded or unpassed (session of 2026-11-30)


def _text_files(path, files: list[list[str]], ext: str) -> None:
    os.makedirs(path, exist_ok=True)
    for i, lines in enumerate(files):
        with open(os.path.join(path, f"part-{i:03d}.{ext}"), "w") as f:
            f.write("\n".join(lines) + "\n")


def test_an_api_build_parses_csv_dates_under_the_session_settings_it_records(spark, tmp_path):
    """Spark's CSV parser reads spark.sql.legacy.timeParserPolicy inside its tasks. A build through
    the Python API (not a statement, which runs in an SQL execution that passes the session's
    settings to its tasks) parsed at the defaults while the version recorded LEGACY: `2020-1-5`
    under the pattern yyyy-MM-dd is a date to LEGACY and null to the default parser, so the lookup
    under LEGACY was pruned away ([] against the row)."""
    p = str(tmp_path / "legacy_csv")
    _text_files(p, [["1,2020-1-5"], ["2,2021-02-03"], ["3,2022-03-04"]], "csv")

    def read():
        return spark.read.schema("id INT, d DATE").option("dateFormat", "yyyy-MM-dd").csv(p)

    with confs(spark, {"spark.sql.legacy.timeParserPolicy": "LEGACY"}):
        BloomIndex(spark, progress=False).create("legacy_api", read(), ["d"])
        assert same(spark, lambda: read().where("d = DATE'2020-01-05'")) == [(1, dt.date(2020, 1, 5))]
        assert_prunes(spark, lambda: read().where("d = DATE'2021-02-03'"), "legacy_api")
    BloomIndex(spark, progress=False).drop("legacy_api")


def test_json_partial_results_built_off_are_not_used_with_them_on(spark, tmp_path):
    """spark.sql.json.enablePartialResults = false nulls a whole line whose array holds a malformed
    element; the default (true) keeps the other elements. An index built under false lacked the
    value `1` that a query at the default reads ([] against the row)."""
    p = str(tmp_path / "partial_json")
    _text_files(p, [['[{"a": 1}, {"a": "x"}]'], ['{"a": 2}'], ['{"a": 3}']], "json")
    try:
        spark.sql(f"CREATE TABLE partial_json (a INT) USING json LOCATION '{p}'")
        with confs(spark, {"spark.sql.json.enablePartialResults": "false"}):
            spark.sql("CREATE BLOOM INDEX partial_ix ON partial_json FOR COLUMNS (a)")
            assert_prunes(spark, lambda: spark.table("partial_json").where("a = 2"), "partial_ix")
        assert same(spark, lambda: spark.table("partial_json").where("a = 1")) == [(1,)]
    finally:
        spark.sql("DROP TABLE IF EXISTS partial_json")


def test_a_line_length_limit_of_the_build_is_recorded(spark, tmp_path):
    """Hadoop's line reader skips lines longer than mapreduce.input.linerecordreader.line.maxlength
    without a word. An index built under a limit lacked the long line's key, which a query
    without the limit reads ([] against the row)."""
    p = str(tmp_path / "long_lines")
    _text_files(p, [["1,short", "2,a-much-longer-line-value"], ["3,x"], ["4,y"]], "csv")
    limit = "mapreduce.input.linerecordreader.line.maxlength"
    try:
        spark.sql(f"CREATE TABLE long_lines (id INT, s STRING) USING csv LOCATION '{p}'")
        with confs(spark, {limit: "12"}):
            spark.sql("CREATE BLOOM INDEX long_ix ON long_lines FOR COLUMNS (id)")
            assert_prunes(spark, lambda: spark.table("long_lines").where("id = 3"), "long_ix")
        assert same(spark, lambda: spark.table("long_lines").where("id = 2")) == [(2, "a-much-longer-line-value")]
    finally:
        spark.sql("DROP TABLE IF EXISTS long_lines")


def test_orc_proleptic_calendar_setting_is_recorded(spark, tmp_path):
    """orc.proleptic.gregorian has ORC's reader convert dates before 1582 out of the old calendar
    (Spark then converts them again): a date of year 1000 reads otherwise under it. An index built
    under it lacked the date a query at the defaults reads ([] against the row)."""
    p = str(tmp_path / "orc_dates")
    for i, d in enumerate(["1000-01-01", "2021-02-03", "2022-03-04"]):
        spark.sql(f"SELECT {i} AS id, DATE'{d}' AS d").coalesce(1).write.mode("append").orc(p)
    with confs(spark, {"orc.proleptic.gregorian": "true"}):
        spark.sql(f"CREATE BLOOM INDEX orc_cal ON orc.`{p}` FOR COLUMNS (d)")
        assert_prunes(spark, lambda: spark.read.orc(p).where("d = DATE'2021-02-03'"), "orc_cal")
    with confs(spark, {"spark.sql.orc.filterPushdown": "false"}):
        assert same(spark, lambda: spark.read.orc(p).where("d = DATE'1000-01-01'")) == [(0, dt.date(1000, 1, 1))]
    assert same(spark, lambda: spark.read.orc(p).where("d = DATE'1000-01-01'")) == [(0, dt.date(1000, 1, 1))]
    BloomIndex(spark, progress=False).drop("orc_cal")
