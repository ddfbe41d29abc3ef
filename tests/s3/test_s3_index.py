"""Issue 17: an index whose root and source data are on s3a://, against a moto S3 server.

Lifecycle (CREATE, pruned query, incremental REFRESH, DESCRIBE, DROP), two processes racing
for the same log versions with the conditional store (and with the rename store, which loses),
and a driver killed in the middle of a command."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

from object_store_session import commit_race
from s3_helpers import BUCKET, ROOT, TEST_JAR, s3_jars, s3a_conf

PRUNING = "spark.bloomindex.pruning.enabled"
N_FILES = 6
KEYS = 600

# Figures for docs/reliability.md (printed by the race tests).
RACES = {}


def _write_source(spark, path, start=0, n=KEYS, files=N_FILES, mode="overwrite"):
    """`files` Parquet files with disjoint key ranges: a point query keeps one of them."""
    (spark.range(start, start + n).select(F.col("id").alias("k"),
                                          F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"))
     .repartitionByRange(files, "k").write.mode(mode).parquet(path))


def _query(spark, path, where, pruning=True):
    spark.conf.set(PRUNING, str(pruning).lower())
    try:
        q = spark.sql(f"SELECT k, s FROM parquet.`{path}` WHERE {where}")
        return sorted(tuple(r) for r in q.collect()), set(q.inputFiles())
    finally:
        spark.conf.unset(PRUNING)


def _holders(spark, path, where):
    """The files holding a row that matches `where`: a pruned scan must read each of them."""
    return {r[0] for r in spark.read.parquet(path).where(where).select(F.input_file_name()).distinct().collect()}


def _assert_group_gone(pgid, wait=20.0):
    """No process of the killed driver's group (its JVM included) is left."""
    deadline = time.time() + wait
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        assert time.time() < deadline, f"process group {pgid} still has processes"
        time.sleep(0.2)


def _await_refresher(spark):
    """The listener bus drained and the background refresher idle (writes' refreshes done)."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    assert spark._jvm.bloomindex.actions.WriteEvents.awaitIdle(60_000), "the background refresher did not finish"


def _describe(spark, name, extended=False):
    sql = f"DESCRIBE BLOOM INDEX {'EXTENDED ' if extended else ''}{name}"
    return {r.info_name: r.info_value for r in spark.sql(sql).collect()}


def _keys(moto, prefix):
    s3 = moto.client()
    out, token = [], None
    while True:
        kw = {"Bucket": BUCKET, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        out += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return out
        token = page["NextContinuationToken"]


def _log(moto, prefix):
    """The log entries under an index folder's key prefix, by version."""
    s3 = moto.client()
    entries = {}
    for k in _keys(moto, prefix + "/_log/"):
        name = k.rsplit("/", 1)[1]
        if name.endswith(".json") and not name.startswith("."):
            entries[int(name[:-5])] = json.loads(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read())
    return dict(sorted(entries.items()))


def _data_folders(moto, prefix):
    """The operation folders under data/ (S3A leaves an empty `data/` marker after deletes)."""
    return {k[len(prefix) + 1:].split("/")[1] for k in _keys(moto, prefix + "/data/")} - {""}


def test_lifecycle_on_s3(spark, moto, s3_root):
    src = f"{s3_root}/events"
    _write_source(spark, src)
    spark.sql(f"CREATE BLOOM INDEX ev ON parquet.`{src}` FOR COLUMNS (k, s)")
    prefix = s3_root.split(f"s3a://{BUCKET}/")[1] + "/indexes/ev"
    log = _log(moto, prefix)
    assert [e["state"] for e in log.values()] == ["CREATING", "ACTIVE"]
    # The commit went through the conditional store: no temporary file was ever renamed in.
    assert not [k for k in _keys(moto, prefix + "/_log/") if k.rsplit("/", 1)[1].startswith(".")]

    all_files = set(spark.read.parquet(src).inputFiles())
    assert len(all_files) == N_FILES
    # Files read, counted: every file holding a match, and (a false positive aside, 1% per file)
    # nothing else; with the index off, all of them.
    for where in ["k = 123", "s = 's77'", "k IN (5, 505)", "k = 100000"]:
        on, read_on = _query(spark, src, where)
        off, read_off = _query(spark, src, where, pruning=False)
        assert on == off, where
        assert read_off == all_files
        holders = _holders(spark, src, where)
        assert len(holders) == (0 if where == "k = 100000" else (2 if "IN" in where else 1))
        assert holders <= read_on and len(read_on) <= len(holders) + 1, (where, read_on)

    d = _describe(spark, "ev")
    assert d["state"] == "ACTIVE" and d["files_indexed"] == str(N_FILES) and d["damage"] == "none", d

    # Append 2 files with new keys; an incremental REFRESH indexes only those.
    _write_source(spark, src, start=KEYS, n=200, files=2, mode="append")
    new_files = set(spark.read.parquet(src).inputFiles()) - all_files
    assert len(new_files) == 2
    spark.sql("REFRESH BLOOM INDEX ev")
    log = _log(moto, prefix)
    assert [e["state"] for e in log.values()] == ["CREATING", "ACTIVE", "REFRESHING", "ACTIVE"]
    assert log[3]["operation"] == "REFRESH INCREMENTAL"
    d = _describe(spark, "ev", extended=True)
    assert d["files_indexed"] == str(N_FILES + 2) and d["files_new_or_changed"] == "0" and d["active_version"] == "3", d
    on, read_on = _query(spark, src, f"k = {KEYS + 150}")
    off, _ = _query(spark, src, f"k = {KEYS + 150}", pruning=False)
    assert on == off == [(KEYS + 150, f"s{KEYS + 150}")]
    holders = _holders(spark, src, f"k = {KEYS + 150}")
    assert len(holders) == 1 and holders <= new_files and holders <= read_on, (holders, read_on)
    assert len(read_on) <= 2, read_on
    # The folders of versions 3 and 1 (kept for readers still on version 1, until the next command).
    assert _data_folders(moto, prefix) == {log[v]["data"]["dir"].split("/")[1] for v in (1, 3)}

    spark.sql("DROP BLOOM INDEX ev")
    assert _log(moto, prefix)[4]["state"] == "DELETED"
    assert _data_folders(moto, prefix) == set()
    assert [r for r in spark.sql("SHOW BLOOM INDEXES").collect() if r.name == "ev"] == []
    _, read_after = _query(spark, src, "k = 123")
    assert read_after == all_files | new_files
    with pytest.raises(AnalysisException, match="does not exist"):
        spark.sql("DESCRIBE BLOOM INDEX ev").collect()


def test_a_partition_folder_read_by_path_on_s3_is_pruned_by_the_folder_index(spark, moto, s3_root):
    """An index over an s3a:// folder answers for a read of one partition's folder by path (the
    same rows as with pruning off, only the files holding the keys read, a false positive aside)."""
    src = f"{s3_root}/parts"
    (spark.range(0, KEYS).select(F.col("id").alias("k"), F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"),
                                 (F.col("id") % 2).alias("p"))
     .repartitionByRange(N_FILES, "k").write.mode("overwrite").partitionBy("p").parquet(src))
    spark.sql(f"CREATE BLOOM INDEX parts ON parquet.`{src}` FOR COLUMNS (k)")
    part = f"{src}/p=1"
    every = set(spark.read.parquet(part).inputFiles())
    assert len(every) >= N_FILES // 2
    for where, rows in [("k = 123", [(123, "s123")]), ("k = 124", []), ("k IN (1, 301)", [(1, "s1"), (301, "s301")])]:
        on, read_on = _query(spark, part, where)
        off, read_off = _query(spark, part, where, pruning=False)
        assert on == off == rows and read_off == every, where
        assert len(read_on) <= len({r for r in _holders(spark, part, where)}) + 1 < len(every), (where, read_on)
    assert [r.name for r in spark.sql(f"SHOW BLOOM INDEXES ON parquet.`{part}`").collect()] == ["parts"]
    spark.sql("DROP BLOOM INDEX parts")


def test_the_same_folder_in_another_bucket_is_another_source(spark, moto, s3_root):
    """An index over s3a://<bucket>/.../twin neither answers for, nor is listed or dropped through,
    the same folder in another bucket: its reads are not pruned by it (all files read, the same
    rows), SHOW ... ON the other bucket's folder lists nothing, DROP BLOOMFILTER INDEX ON it leaves
    the index, and writes there do not refresh it."""
    other_bucket = "bloomindex-tests-twin"
    moto.client().create_bucket(Bucket=other_bucket)
    src = f"{s3_root}/twin"
    twin = src.replace(f"s3a://{BUCKET}/", f"s3a://{other_bucket}/")
    _write_source(spark, src)
    _write_source(spark, twin)
    spark.sql(f"CREATE BLOOM INDEX twin ON parquet.`{src}` FOR COLUMNS (k) OPTIONS (refresh = 'on_write')")
    _, read_own = _query(spark, src, "k = 123")
    assert len(read_own) < N_FILES  # the index answers for its own bucket's folder
    every = set(spark.read.parquet(twin).inputFiles())
    for where in ["k = 123", "k = -1", "k IN (1, 301)"]:
        on, read_on = _query(spark, twin, where)
        off, read_off = _query(spark, twin, where, pruning=False)
        assert on == off and read_on == read_off == every, where
    assert [r.name for r in spark.sql(f"SHOW BLOOM INDEXES ON parquet.`{twin}`").collect()] == []
    # The advisor judges the other bucket's scans (recorded in the history just now) against
    # that bucket's indexes, of which there is none: it advises creating one there, named by its
    # bucket, and says nothing of this index (it took it for theirs before, and the other
    # bucket's folder for a bare path).
    recs = spark.sql(f"RECOMMEND BLOOM INDEXES ON parquet.`{twin}`").collect()
    assert all(r.index_name != "twin" for r in recs), recs
    creates = [r for r in recs if r.kind == "create"]
    assert creates and all(f"s3a://{other_bucket}/" in r.statement for r in creates), recs
    try:
        spark.sql(f"DROP BLOOMFILTER INDEX ON parquet.`{twin}` FOR COLUMNS (k)")
    except AnalysisException:
        pass  # nothing to drop there
    version = int(_describe(spark, "twin")["log_version"])
    _write_source(spark, twin, start=KEYS, mode="append")
    _await_refresher(spark)
    assert [r.name for r in spark.sql(f"SHOW BLOOM INDEXES ON parquet.`{src}`").collect()] == ["twin"]
    assert int(_describe(spark, "twin")["log_version"]) == version
    _write_source(spark, src, start=KEYS, mode="append")  # its own folder's write does refresh it
    _await_refresher(spark)
    assert int(_describe(spark, "twin")["log_version"]) > version
    spark.sql("DROP BLOOM INDEX twin")


ROUNDS = 25
RENAME_STORE = "bloomindex.log.RenameLogStore"


def _race(spark, moto, s3_root, tmp_path, store_conf):
    """An index on s3a:// (CREATE: versions 0 and 1), then two JVM processes committing
    versions 2 .. ROUNDS + 1, each round both at once (a barrier of local files). Returns
    {version: {process: (operation id, outcome)}}, the log as stored, and the source path."""
    src = f"{s3_root}/race_src"
    _write_source(spark, src)
    spark.sql(f"CREATE BLOOM INDEX race ON parquet.`{src}` FOR COLUMNS (k)")
    index_dir = f"{s3_root}/indexes/race"
    prefix = index_dir.split(f"s3a://{BUCKET}/")[1]
    results = commit_race(index_dir, TEST_JAR, s3_jars(), {**s3a_conf(moto.endpoint), **store_conf}, tmp_path, ROUNDS)
    return results, _log(moto, prefix), src


def test_two_processes_racing_on_s3_exactly_one_wins_each_version(spark, moto, s3_root, tmp_path):
    results, log, src = _race(spark, moto, s3_root, tmp_path, {})
    winners = {}
    for v, by in results.items():
        outcomes = sorted(o for _, o in by.values())
        assert outcomes == ["lost BLOOM_INDEX_CONCURRENT_UPDATE", "won"], (v, by)
        winners[v] = next(op for op, o in by.values() if o == "won")
    # No version lost, none overwritten: every round's entry is its winner's.
    assert sorted(log) == list(range(ROUNDS + 2))
    for v, op in winners.items():
        assert log[v]["operationId"] == op and log[v]["version"] == v, v
    RACES["conditional"] = {"rounds": ROUNDS, "winners": [1] * ROUNDS, "lost": 0}
    print(f"\nrace, S3 conditional store: {ROUNDS} rounds, 1 winner each, 0 versions lost or overwritten")

    # The index stays readable: the newest version is the last race entry (ACTIVE, version 1's data).
    d = _describe(spark, "race")
    assert d["active_version"] == str(ROUNDS + 1) and d["damage"] == "none" and d["files_indexed"] == str(N_FILES), d
    on, read_on = _query(spark, src, "k = 321")
    assert on == [(321, "s321")] and _holders(spark, src, "k = 321") <= read_on and len(read_on) <= 2
    spark.sql("REFRESH BLOOM INDEX race FULL")
    d = _describe(spark, "race")
    assert d["active_version"] == str(ROUNDS + 3) and d["damage"] == "none", d
    spark.sql("DROP BLOOM INDEX race")


def test_the_rename_store_loses_commits_on_s3(spark, moto, s3_root, tmp_path):
    """The same race with the store the index used before issue 17 (a copy-based rename on
    S3): both writers of a version can be told they won, and one of the two entries is gone."""
    results, log, src = _race(spark, moto, s3_root, tmp_path, {"spark.bloomindex.logStore.s3a.impl": RENAME_STORE})
    double, overwritten = 0, 0
    for v, by in results.items():
        won = [op for op, o in by.values() if o == "won"]
        assert won, (v, by)  # someone always gets the version
        if len(won) == 2:
            double += 1
            # Both were told they committed version v; only one entry is there.
            assert log[v]["operationId"] in won
            overwritten += 1
    RACES["rename"] = {"rounds": ROUNDS, "double_winners": double, "lost": overwritten}
    print(f"\nrace, rename store on S3: {ROUNDS} rounds, {double} with two winners, {overwritten} commits lost")
    assert overwritten >= 1, results
    spark.sql("DROP BLOOM INDEX race")


def test_a_driver_killed_mid_command_on_s3_leaves_an_index_the_next_command_reads_and_cleans(
        spark, moto, s3_root, tmp_path):
    src = f"{s3_root}/kill_src"
    _write_source(spark, src)
    spark.sql(f"CREATE BLOOM INDEX killed ON parquet.`{src}` FOR COLUMNS (k, s)")
    prefix = s3_root.split(f"s3a://{BUCKET}/")[1] + "/indexes/killed"
    before = {w: _query(spark, src, w)[1] for w in ["k = 42", "s = 's420'"]}

    # A second driver runs REFRESH FULL with slow build tasks (4 s each, one per file, one at a
    # time); it is killed (SIGKILL, its JVM too: the process group) once its REFRESHING entry is
    # committed and its data folder begun.
    driver = subprocess.Popen(
        [sys.executable, str(pathlib.Path(__file__).with_name("killed_driver.py")), moto.endpoint,
         f"{s3_root}/indexes", "4000", "REFRESH BLOOM INDEX killed FULL"],
        stdout=subprocess.PIPE, stderr=open(tmp_path / "driver.log", "w"), start_new_session=True)
    orphan = None
    try:
        deadline = time.time() + 240
        while orphan is None:
            assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
            assert time.time() < deadline, "the second driver never started its build"
            log = _log(moto, prefix)
            if 2 in log and log[2]["state"] == "REFRESHING":
                op = log[2]["operationId"]
                if op in _data_folders(moto, prefix):
                    orphan = op
            time.sleep(0.5)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    assert driver.returncode == -signal.SIGKILL
    _assert_group_gone(driver.pid)

    log = _log(moto, prefix)
    assert [e["state"] for e in log.values()] == ["CREATING", "ACTIVE", "REFRESHING"]
    assert orphan in _data_folders(moto, prefix)
    # The next command reads it: version 1 still answers queries, DESCRIBE tells the state.
    d = _describe(spark, "killed")
    assert d["state"] == "REFRESHING" and d["active_version"] == "1" and d["damage"] == "none", d
    for where, files in before.items():
        on, read_on = _query(spark, src, where)
        off, _ = _query(spark, src, where, pruning=False)
        assert on == off and read_on == files, where
    # ... and takes over: a REFRESH commits after the dead one and removes its data folder.
    spark.sql("REFRESH BLOOM INDEX killed")
    log = _log(moto, prefix)
    assert [e["state"] for e in log.values()] == ["CREATING", "ACTIVE", "REFRESHING", "REFRESHING", "ACTIVE"]
    # The dead command's folder is gone; version 1's stays for readers until the next command.
    assert _data_folders(moto, prefix) == {log[v]["data"]["dir"].split("/")[1] for v in (1, 4)}
    assert orphan not in _data_folders(moto, prefix)
    d = _describe(spark, "killed")
    assert d["state"] == "ACTIVE" and d["damage"] == "none" and d["files_indexed"] == str(N_FILES), d
    for where, files in before.items():
        on, read_on = _query(spark, src, where)
        off, _ = _query(spark, src, where, pruning=False)
        assert on == off and _holders(spark, src, where) <= read_on, where


def test_log_store_settings_of_the_session_choose_the_store_and_refuse_an_unsafe_s3(spark, moto, s3_root):
    src = f"{s3_root}/conf_src"
    _write_source(spark, src, files=2)
    prefix = s3_root.split(f"s3a://{BUCKET}/")[1] + "/indexes/"
    key = "spark.bloomindex.logStore.s3a.impl"
    try:
        spark.conf.set(key, "no.such.Store")
        with pytest.raises(AnalysisException) as e:
            spark.sql(f"CREATE BLOOM INDEX conf_idx ON parquet.`{src}` FOR COLUMNS (k)")
        assert e.value.getCondition() == "BLOOM_INDEX_INVALID_CONF" and key in str(e.value), str(e.value)
        spark.conf.unset(key)
        # S3A without conditional create (a new file system instance sees the setting).
        spark.conf.set("fs.s3a.create.conditional.enabled", "false")
        spark.conf.set("fs.s3a.impl.disable.cache", "true")
        with pytest.raises(AnalysisException) as e:
            spark.sql(f"CREATE BLOOM INDEX conf_idx ON parquet.`{src}` FOR COLUMNS (k)")
        assert e.value.getCondition() == "BLOOM_INDEX_INVALID_CONF", str(e.value)
        assert key in str(e.value) and "fs.s3a.create.conditional.enabled=true" in str(e.value), str(e.value)
        assert not [k for k in _keys(moto, prefix) if "/_log/" in k]
    finally:
        for k in (key, "fs.s3a.create.conditional.enabled", "fs.s3a.impl.disable.cache"):
            spark.conf.unset(k)
    spark.sql(f"CREATE BLOOM INDEX conf_idx ON parquet.`{src}` FOR COLUMNS (k)")
    assert [e["state"] for e in _log(moto, prefix + "conf_idx").values()] == ["CREATING", "ACTIVE"]
    spark.sql("DROP BLOOM INDEX conf_idx")


@pytest.mark.parametrize("layout", ["flat", "partitioned"])
def test_a_file_rewritten_in_place_under_a_cached_table_listing_is_read(spark, moto, s3_root, layout):
    """Issue 30 on S3: a catalog table keeps its listing; a file rewritten in place since (same
    size, later modification time) is checked against storage before it is skipped, and read.
    Flat: one folder (one listing); partitioned: 20 folders (one flat listing of the table). The
    check's listing in runs of 3 files (S3Listing), 7 runs."""
    path = f"{s3_root}/cached_{layout}"
    table = f"s3_cached_{layout}"
    schema = "k BIGINT, p BIGINT"
    df = spark.createDataFrame([(k, k % 20) for k in range(400)], schema)
    writer = (df.repartition(20, "p").write.partitionBy("p") if layout == "partitioned"
              else df.repartitionByRange(20, "k").write)
    writer.option("compression", "none").parquet(path)
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.conf.set("spark.internal.bloomindex.test.checkRunFiles", "3")
    try:
        spark.sql(f"CREATE TABLE {table} USING parquet LOCATION '{path}'")
        if layout == "partitioned":
            spark.sql(f"MSCK REPAIR TABLE {table}")
        spark.sql(f"CREATE BLOOM INDEX {table}_ix ON {table} FOR COLUMNS (k)")
        q = f"SELECT k FROM {table} WHERE k = {{v}}"
        assert [r[0] for r in spark.sql(q.format(v=47)).collect()] == [47]  # the table's listing is cached now
        holder = spark.table(table).where("k = 47").select(F.input_file_name()).first()[0]
        key = holder.split(f"{BUCKET}/", 1)[1]
        s3 = moto.client()
        size = s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"]
        # The same file, every k moved by 1000: the same byte size (plain 8-byte longs).
        rows = spark.read.parquet(holder).collect()
        tmp = f"{s3_root}/replacement_{layout}"
        spark.createDataFrame([(r.k + 1000, r.k % 20) for r in rows], schema) \
            .select("k", *(["p"] if layout == "flat" else [])).coalesce(1) \
            .write.option("compression", "none").parquet(tmp)
        new_key = next(k for k in _keys(moto, tmp.split(f"{BUCKET}/", 1)[1]) if k.endswith(".parquet"))
        assert s3.head_object(Bucket=BUCKET, Key=new_key)["ContentLength"] == size
        time.sleep(1.1)  # S3 times have a resolution of one second
        s3.copy_object(Bucket=BUCKET, CopySource={"Bucket": BUCKET, "Key": new_key}, Key=key)
        for pruning in (True, False):
            spark.conf.set(PRUNING, str(pruning).lower())
            try:
                assert [r[0] for r in spark.sql(q.format(v=1047)).collect()] == [1047], pruning
            finally:
                spark.conf.unset(PRUNING)
        from bloomindex import BloomIndex
        report = BloomIndex(spark).explain(spark.sql(q.format(v=1047)))
        assert "changed on storage" in report, report
        # The other files are still skipped: kept are the one holding 233 and the changed one.
        report = BloomIndex(spark).explain(spark.sql(q.format(v=233)))
        assert "kept 2/20" in report, report
    finally:
        spark.conf.unset("spark.internal.bloomindex.test.checkRunFiles")
        spark.sql(f"DROP TABLE IF EXISTS {table}")


@pytest.mark.parametrize("folders", [1, 20])
def test_the_check_against_storage_lists_s3_in_parallel_runs_of_known_keys(spark, moto, s3_root, folders):
    """Issue 26: on S3 the check of a scan's listing lists the listed keys in runs (S3Listing,
    ListObjectsV2 from the key before each run, several at once) through S3A's own client, not
    page after page. Runs of 3 keys here: objects the listing did not name (a file added since,
    `_SUCCESS`, a subfolder's) lie between and around them. Exactly the files unchanged since the
    listing are found so; a file rewritten in place with the same size, one rewritten with
    another size and one deleted are not. One folder (runs by folder), and 20 (runs over the
    common folder, from the first key's folder)."""
    jvm = spark._jvm
    s3 = moto.client()
    base = f"{s3_root}/runs_{folders}"
    prefix = base.split(f"{BUCKET}/", 1)[1]
    # Names as S3 sorts them (by UTF-8 bytes), some needing escapes in a URL or in XML.
    names = [(f"p={i % folders}/" if folders > 1 else "") + f"part-{i:03d}" + (" é+&.parquet" if i % 9 == 4 else ".parquet")
             for i in range(40)]
    for i, name in enumerate(names):
        s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{name}", Body=b"x" * (10 + i))
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/_SUCCESS", Body=b"")
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    path = jvm.org.apache.hadoop.fs.Path(base)
    fs = path.getFileSystem(conf)
    listed = jvm.java.util.ArrayList()
    it = fs.listFiles(path, True)
    while it.hasNext():
        st = it.next()
        if st.getPath().getName().startswith("part-"):
            listed.add(st)
    assert listed.size() == 40
    files = jvm.scala.jdk.javaapi.CollectionConverters.asScala(listed).toIndexedSeq()
    # Changed since the listing: 3 rewritten, same size (a later time); 11 another size; 7 deleted.
    time.sleep(1.1)  # S3 times have a resolution of one second
    changed = {names[3], names[7], names[11]}
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{names[3]}", Body=b"y" * (10 + 3))
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{names[11]}", Body=b"y" * 99)
    s3.delete_object(Bucket=BUCKET, Key=f"{prefix}/{names[7]}")
    # Not listed: objects between the listed keys, after them, and in a subfolder.
    for extra in ([f"p={j}/part-005a.parquet" for j in range(folders)] if folders > 1 else ["part-005a.parquet"]) + \
            ["part-999.parquet", "zz/part-000.parquet", "part-012/x"]:
        s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{extra}", Body=b"z")
    lister = jvm.bloomindex.catalog.S3Listing.lister(fs)
    assert lister.isDefined(), "S3A's client is not reached: the check would list page after page"
    # The listing's runs, listed directly: every listed key found as storage has it now.
    keys = sorted(f"{prefix}/{n}" for n in names)  # by code point: S3's order (UTF-8 bytes)
    wanted = jvm.scala.jdk.javaapi.CollectionConverters.asScala(jvm.java.util.ArrayList(keys)).toIndexedSeq()
    runs = jvm.bloomindex.catalog.S3Listing.runs(wanted, f"{prefix}/", folders <= 16, 3)
    assert runs.size() == 14  # 40 keys, 3 a run: by folder (1 folder), or over the common folder (20 > 16 folders)

    def statuses(lister):
        """{key: (size, time)} of the keys found, as the lister's runs match them with the keys."""
        now = lister.statuses(wanted, runs, 4)
        sizes, times = list(now._1()), list(now._2())
        return {k: (sizes[i], times[i]) for i, k in enumerate(keys) if sizes[i] >= 0}

    now = statuses(lister.get())
    expected = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in keys if not k.endswith(names[7])}
    assert {k: size for k, (size, _) in now.items()} == {k: h["ContentLength"] for k, h in expected.items()}
    assert {k: t // 1000 for k, (_, t) in now.items()} == {k: int(h["LastModified"].timestamp()) for k, h in expected.items()}
    # Every page read from its bytes (S3ListPage), none by the SDK's reader; which reads the same.
    pages = lister.get().pages()
    assert pages._1() >= 14 and pages._2() == 0, (pages._1(), pages._2())
    by_sdk = jvm.bloomindex.catalog.S3Listing.lister(fs, False).get()
    now_sdk = statuses(by_sdk)
    assert by_sdk.pages()._1() == 0 and by_sdk.pages()._2() >= 14
    assert now_sdk == now, (now_sdk, now)
    # The check itself: the unchanged files, by position in the listing.
    bits = jvm.bloomindex.catalog.FreshFiles.unchanged(conf, files, 2, 4, 3, True)
    unchanged = {files.apply(j).getPath().getName() if folders == 1 else
                 "/".join(str(files.apply(j).getPath()).split("/")[-2:])
                 for j in range(files.size()) if bits.get(j)}
    assert unchanged == set(names) - changed
    # The same files in another order than the keys' (each then found by its key): the same answer.
    shuffled = [files.apply(j) for j in range(files.size())][::-1]
    shuffled = shuffled[1::2] + shuffled[::2]
    other = jvm.scala.jdk.javaapi.CollectionConverters.asScala(jvm.java.util.ArrayList(shuffled)).toIndexedSeq()
    bits_other = jvm.bloomindex.catalog.FreshFiles.unchanged(conf, other, 2, 4, 3, True)
    assert {str(other.apply(j).getPath()) for j in range(other.size()) if bits_other.get(j)} == \
        {str(files.apply(j).getPath()) for j in range(files.size()) if bits.get(j)}
    # Where S3A lists with ListObjects v1, the check lists as Hadoop does: the same answer.
    v1 = jvm.org.apache.hadoop.conf.Configuration(conf)
    v1.set("fs.s3a.impl.disable.cache", "true")  # a file system of its own, with this setting
    v1.set("fs.s3a.list.version", "1")
    fs1 = path.getFileSystem(v1)
    try:
        assert not jvm.bloomindex.catalog.S3Listing.lister(fs1).isDefined()
        bits1 = jvm.bloomindex.catalog.FreshFiles.unchanged(v1, files, 2, 4, 3, True)
        assert bits1.equals(bits), (bits1.toString(), bits.toString())
    finally:
        fs1.close()


def test_an_index_store_that_stalls_costs_a_query_at_most_max_wait(spark, moto):
    """Issue 26, a slow store: the index root's bucket answers each request 20 s late (the
    latency proxy); the source's bucket answers at once. With `maxWait` 1 s and the index not in
    memory, a lookup is planned unpruned within about that, with the right rows, and its report
    names the setting; once the store answers in time again, the read that went on loads the
    index and lookups prune."""
    import uuid

    from bloomindex import BloomIndex
    from latency_proxy import LatencyProxy

    bucket = f"bloomindex-stalled-{uuid.uuid4().hex[:8]}"
    moto.client().create_bucket(Bucket=bucket)
    with LatencyProxy(moto.port, delay_ms=0, max_connections=64) as proxy:
        endpoint = f"fs.s3a.bucket.{bucket}.endpoint"
        spark.conf.set(endpoint, proxy.endpoint)
        spark.conf.set("spark.bloomindex.root", f"s3a://{bucket}/indexes")
        src = f"s3a://{BUCKET}/stalled-src-{uuid.uuid4().hex[:8]}"
        bi = BloomIndex(spark)
        try:
            _write_source(spark, src)
            spark.sql(f"CREATE BLOOM INDEX stalled_idx ON parquet.`{src}` FOR COLUMNS (k)")
            expected, everything = _query(spark, src, "k = 123", pruning=False)
            assert len(everything) == N_FILES
            spark._jvm.bloomindex.catalog.IndexCache.clear()  # what a new driver has
            spark.conf.set("spark.bloomindex.pruning.maxWait", "1s")
            proxy.delay = 20.0
            t0 = time.monotonic()
            rows, files = _query(spark, src, "k = 123")
            took = time.monotonic() - t0
            assert rows == expected and files == everything
            # Not a timing target: the planning did not wait for a single one of the 20 s requests.
            assert took < 15.0, took
            report = bi.explain(spark.read.parquet(src).where("k = 123"))
            assert "spark.bloomindex.pruning.maxWait" in report, report
            # The read given up on goes on (its requests end 20 s late) and loads the column, with
            # no query asking; then lookups prune.
            proxy.delay = 0.0
            cache = spark._jvm.bloomindex.catalog.IndexCache
            assert cache.heldColumns() == 0
            deadline = time.monotonic() + 180
            while cache.heldColumns() == 0 and time.monotonic() < deadline:
                time.sleep(1)
            assert cache.heldColumns() > 0
            assert "kept 1/" in bi.explain(spark.read.parquet(src).where("k = 123"))
            rows, files = _query(spark, src, "k = 123")
            assert rows == expected and len(files) == 1, files
        finally:
            proxy.delay = 0.0
            for k in (endpoint, PRUNING, "spark.bloomindex.pruning.maxWait"):
                spark.conf.unset(k)
            try:
                spark.sql("DROP BLOOM INDEX IF EXISTS stalled_idx")
            finally:
                spark.conf.unset("spark.bloomindex.root")


def test_a_point_lookup_on_a_fresh_driver_makes_no_bookkeeping_request_it_can_do_without(spark, moto):
    """Issue 26: before a query reads the probe files, it lists the index root and the log once
    each, reads the newest entry with the length its listing gave (no HEAD), does not look for
    an `_encryption` marker where probe files are (never encrypted), and reads the summary with
    one HEAD. Counted through the latency proxy (no delay) on a bucket of its own; the answer is
    the unpruned one."""
    import collections
    import urllib.parse
    import uuid

    from latency_proxy import LatencyProxy

    bucket = f"bloomindex-proxied-{uuid.uuid4().hex[:8]}"  # a new S3A client for this bucket
    moto.client().create_bucket(Bucket=bucket)
    with LatencyProxy(moto.port, delay_ms=0, max_connections=64) as proxy:
        endpoint = f"fs.s3a.bucket.{bucket}.endpoint"
        spark.conf.set(endpoint, proxy.endpoint)
        # S3A's `classic` stream reads what it is asked (the default `analytics` one sends a HEAD
        # before each object's first GET, whatever length it is given: docs/object-stores.md).
        stream = f"fs.s3a.bucket.{bucket}.input.stream.type"
        spark.conf.set(stream, "classic")
        base = f"s3a://{bucket}/lookup"
        spark.conf.set("spark.bloomindex.root", f"{base}/indexes")
        jvm = spark._jvm
        try:
            src = f"{base}/src"
            _write_source(spark, src)
            spark.sql(f"CREATE BLOOM INDEX lookup_idx ON parquet.`{src}` FOR COLUMNS (k)")
            df = spark.read.parquet(src)
            spark.conf.set("spark.bloomindex.pruning.checkFiles", "false")
            jvm.bloomindex.catalog.IndexCache.clear()  # what a new driver has
            proxy.keep_log = True
            proxy.reset()
            q = df.where("k = 123")
            q._jdf.queryExecution().executedPlan()
            counts = proxy.counts()
            # Listings by prefix (others, e.g. the workload history's writes of earlier queries, may interleave).
            lists = collections.Counter(urllib.parse.parse_qs(urllib.parse.urlsplit(t).query).get("prefix", [""])[0]
                                        for _, m, k, t in proxy.log() if k == "list")
            counts["lists"] = dict(lists)
            assert lists["lookup/indexes/"] == 1 and lists["lookup/indexes/lookup_idx/_log/"] == 1, counts
            assert not any("/data/" in p for p in lists), counts  # no folder of the data looked for
            assert counts.get("HEAD log", 0) == 0 and counts.get("GET log", 0) == 1, counts
            assert counts.get("HEAD index", 0) == 0, counts  # no `_encryption` marker looked for
            assert counts.get("HEAD summary", 0) == 1 and counts.get("GET summary", 0) == 1, counts
            assert counts.get("HEAD probe", 0) == 0, counts  # opened with the summary's lengths
            # Each probe file (small: its bytes before the footer within coalesceGapBytes) read
            # whole by one GET, footer and block rows; a lookup of another value reads none again.
            listed = moto.client().list_objects_v2(Bucket=bucket, Prefix="lookup/indexes/lookup_idx/")
            probes = [o["Key"] for o in listed.get("Contents", []) if o["Key"].endswith(".probe")]
            assert probes and counts.get("GET probe", 0) == len(probes), (counts, probes)
            proxy.reset()
            df.where("k = 456")._jdf.queryExecution().executedPlan()
            assert proxy.counts().get("GET probe", 0) == 0, proxy.counts()
            assert len(q.inputFiles()) < N_FILES
            pruned = sorted(tuple(r) for r in q.collect())
            spark.conf.set(PRUNING, "false")
            assert pruned == sorted(tuple(r) for r in df.where("k = 123").collect()) == [(123, "s123")]
        finally:
            for k in (endpoint, stream, PRUNING, "spark.bloomindex.pruning.checkFiles"):
                spark.conf.unset(k)
            try:
                spark.sql("DROP BLOOM INDEX IF EXISTS lookup_idx")
            finally:
                spark.conf.unset("spark.bloomindex.root")
