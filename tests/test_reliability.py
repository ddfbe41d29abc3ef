"""Issue 7: a driver dying between data write and log commit, damaged indexes, concurrent
commands. Every check is differential: the same rows with pruning on and off."""

from __future__ import annotations

import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading

import pyarrow.parquet as pq
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import bloomindex
from bloomindex import BloomIndex
from bloomindex._thrift import zigzag_i32
from index_helpers import confs, fresh_driver, log_entries, read_probe_file, row_path, rows_and_files

FAULT = "spark.internal.bloomindex.test.failAfterDataWrite"
N_FILES = 8
KEYS = 800

# Differential queries compared, for docs/reliability.md (printed by the last test).
COMPARED = {"queries": 0, "mismatches": 0}


def _source(spark, tmp_path, name):
    """N_FILES Parquet files with disjoint key ranges: a point query keeps one file."""
    path = str(tmp_path / name)
    (spark.range(KEYS).select(F.col("id").alias("k"), F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"))
     .repartitionByRange(N_FILES, "k").write.parquet(path))
    return path


def _queries(rng, n=6):
    qs = []
    for _ in range(n):
        kind = rng.randrange(4)
        a, b = rng.randrange(-10, KEYS + 10), rng.randrange(KEYS)
        qs.append([f"k = {a}", f"k IN ({a}, {b})", f"s = 's{a}'", f"k = {a} OR s = 's{b}'"][kind])
    return qs


def differential(spark, path, seed, n=6):
    """Rows with the index == rows without, for n random predicates; the files each read."""
    read = {}
    for where in _queries(random.Random(seed), n):
        on, files = rows_and_files(spark, path, where, True)
        off, _ = rows_and_files(spark, path, where, False)
        COMPARED["queries"] += 1
        if on != off:
            COMPARED["mismatches"] += 1
        assert on == off, where
        read[where] = files
    return read


def _first_keys(spark, path):
    """The smallest key of each file -> that file."""
    rows = spark.read.parquet(path).groupBy(F.col("_metadata.file_path").alias("p")).agg(F.min("k")).collect()
    return {r[1]: row_path(r[0]) for r in rows}


def _describe(spark, name):
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}


def _warnings(spark):
    return list(spark.sparkContext._jvm.bloomindex.log.IndexLog.warnings())


def _assert_linear(entries):
    """Versions 0..n, and each entry a valid successor of the one before it."""
    assert [e["version"] for e in entries] == list(range(len(entries)))
    prev = None
    for e in entries:
        s = e["state"]
        if s == "ACTIVE":
            # The end of the operation whose transient entry is right before it.
            assert prev is not None and prev["state"] in ("CREATING", "REFRESHING"), (prev, e)
            assert prev["operationId"] == e["operationId"], (prev, e)
            if "rolled back" not in e["operation"]:
                assert e["data"]["dir"] == "data/" + e["operationId"]
        elif s == "CREATING":
            assert prev is None or prev["state"] in ("DELETED", "CREATING"), (prev, e)
        elif s == "REFRESHING":
            assert prev is not None and prev["state"] in ("ACTIVE", "CREATING", "REFRESHING"), (prev, e)
        else:
            assert s == "DELETED" and prev is not None and prev["state"] != "DELETED", (prev, e)
        prev = e


# --------------------------------------------------------------- a driver dying mid-command

def test_a_driver_dying_after_the_data_write_leaves_no_half_version(spark, root, tmp_path):
    path = _source(spark, tmp_path, "die")
    bi = BloomIndex(spark, progress=False)
    spark.sql(f"CREATE BLOOM INDEX die ON parquet.`{path}` FOR COLUMNS (k, s)")
    before = differential(spark, path, seed=1)
    assert all(len(f) <= 2 for f in before.values())

    spark.conf.set(FAULT, "true")
    try:
        with pytest.raises(Exception, match="failAfterDataWrite"):
            spark.sql("REFRESH BLOOM INDEX die FULL")
    finally:
        spark.conf.unset(FAULT)
    entries = log_entries(root, "die")
    assert [e["state"] for e in entries] == ["CREATING", "ACTIVE", "REFRESHING"]
    leftover = os.path.join(root, "die", "data", entries[-1]["operationId"])
    assert glob.glob(os.path.join(leftover, "**", "column=*", "*.probe"), recursive=True), \
        "the dead command's data was written"
    # Readers see version 1: same files pruned, same answers.
    assert differential(spark, path, seed=1) == before
    assert "log version 1" in bi.explain(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE k = 5"))
    d = _describe(spark, "die")
    assert (d["state"], d["active_version"], d["damage"]) == ("REFRESHING", "1", "none")
    # DESCRIBE names the command in the way and how long ago it started.
    assert re.fullmatch(r"REFRESH FULL at log version 2, started \S+ \S+ \((\d+ s|\d+ min \d+ s) ago\): running, or stopped "
                        r"before its commit; REFRESH BLOOM INDEX takes over a stopped one", d["command_in_progress"]), d

    # ALTER says what is in the way (it said the index did not exist) and changes nothing.
    with pytest.raises(AnalysisException) as e:
        spark.sql("ALTER BLOOM INDEX die SET OPTIONS (refresh = 'manual')")
    assert e.value.getCondition() == "BLOOM_INDEX_COMMAND_IN_PROGRESS", str(e.value)
    assert "(REFRESH FULL, log version 2)" in str(e.value) and "REFRESH BLOOM INDEX die takes over" in str(e.value)
    assert log_entries(root, "die") == entries

    # The next command takes over and removes the leftovers.
    spark.sql("REFRESH BLOOM INDEX die")
    entries = log_entries(root, "die")
    _assert_linear(entries)
    assert entries[-1]["state"] == "ACTIVE" and entries[-1]["version"] == 4
    assert not os.path.exists(leftover)
    assert differential(spark, path, seed=1) == before
    assert "log version 4" in bi.explain(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE k = 5"))
    spark.sql("ALTER BLOOM INDEX die SET OPTIONS (refresh = 'manual')")
    assert _describe(spark, "die")["refresh"] == "manual"
    assert "command_in_progress" not in _describe(spark, "die")


def test_a_driver_dying_in_create_leaves_nothing_visible(spark, root, tmp_path):
    path = _source(spark, tmp_path, "die_c")
    spark.conf.set(FAULT, "true")
    try:
        with pytest.raises(Exception, match="failAfterDataWrite"):
            spark.sql(f"CREATE BLOOM INDEX die_c ON parquet.`{path}` FOR COLUMNS (k)")
    finally:
        spark.conf.unset(FAULT)
    entries = log_entries(root, "die_c")
    assert [e["state"] for e in entries] == ["CREATING"]
    leftover = os.path.join(root, "die_c", "data", entries[0]["operationId"])
    assert os.path.isdir(leftover)
    read = differential(spark, path, seed=2)
    assert all(len(f) == N_FILES for f in read.values()), "no version to prune with"
    assert _describe(spark, "die_c")["active_version"] == "none"
    spark.sql(f"CREATE BLOOM INDEX die_c ON parquet.`{path}` FOR COLUMNS (k)")
    entries = log_entries(root, "die_c")
    _assert_linear(entries)
    assert [e["state"] for e in entries] == ["CREATING", "CREATING", "ACTIVE"]
    assert not os.path.exists(leftover)
    read = differential(spark, path, seed=2)
    assert any(len(f) < N_FILES for f in read.values())


# --------------------------------------------------------------- damage

def _sbbf_with_header(filter_bytes: bytes, num_bytes: int) -> bytes:
    """`filter_bytes` (Parquet's header + bitset) with its header's numBytes replaced."""
    assert filter_bytes[0] == 0x15  # field 1, i32
    end = 1
    while filter_bytes[end] & 0x80:
        end += 1
    return b"\x15" + zigzag_i32(num_bytes) + filter_bytes[end + 1:]


def _damage(spark, root, name, kind):
    """Damages index `name` as `kind` says; returns the source files whose rows were hit."""
    log_dir = os.path.join(root, name, "_log")
    version = log_entries_lenient(root, name)[-1][0]
    newest = os.path.join(log_dir, "%020d.json" % version)
    if kind == "log truncated":
        text = open(newest).read()
        open(newest, "w").write(text[: len(text) // 2])
        return set()
    if kind == "log not an entry":
        open(newest, "w").write('{"formatVersion": 1, "version": "three"}')
        return set()
    if kind == "log oversized":
        # A next version of 2 MiB: refused on its size before it is read.
        text = open(newest).read().replace(f'"version":{version}', f'"version":{version + 1}')
        with open(os.path.join(log_dir, "%020d.json" % (version + 1)), "w") as out:
            out.write(text[:-1] + " " * (2 << 20) + "}")
        return set()
    # Column k's data (one folder per column): queries on k read the files it held. In the
    # `probes` layout, a task's probe file is its output; in `columns`, its Parquet file.
    data_dir = os.path.join(root, name, json.load(open(newest))["data"]["dir"], "column=k")
    if kind.startswith("data file"):
        part = sorted(glob.glob(os.path.join(data_dir, "_*.probe")))[0]
        assert not glob.glob(os.path.join(data_dir, "*.parquet"))
        hit = {row_path(p) for p in read_probe_file(part)[2]}
        if kind == "data file deleted":
            os.remove(part)
        else:
            size = os.path.getsize(part)
            open(part, "wb").write(bytes(random.Random(7).randrange(256) for _ in range(size)))
        return hit
    parts = sorted(p for p in glob.glob(os.path.join(data_dir, "*.parquet")) if pq.read_metadata(p).num_rows > 0)
    # One row's filter gets a hostile header; the file is rewritten by Spark, as the index writes it.
    df = spark.read.parquet(parts[0])
    rows = [r.asDict() for r in df.collect()]
    victim = rows[0]
    stored = bytes(victim["filter"])
    real = bloomindex.Sbbf.deserialize(stored).num_bytes
    if kind == "filter size beyond its bytes":
        victim["filter"] = bytearray(_sbbf_with_header(stored, real + 32))
    elif kind == "filter size over 128 MiB":
        victim["filter"] = bytearray(_sbbf_with_header(stored, 1 << 30))
    else:
        raise AssertionError(kind)
    out = os.path.join(os.path.dirname(data_dir), "rewrite")
    spark.createDataFrame([tuple(r[f] for f in df.schema.names) for r in rows], df.schema).coalesce(1) \
        .write.option("compression", "none").parquet(out)
    os.replace(glob.glob(os.path.join(out, "*.parquet"))[0], parts[0])
    # Hadoop's checksum file of the old bytes would refuse the whole file: drop it, so the
    # damage is only in the filter.
    crc = os.path.join(data_dir, "." + os.path.basename(parts[0]) + ".crc")
    if os.path.exists(crc):
        os.remove(crc)
    shutil.rmtree(out)
    return {row_path(victim["file_path"])}


DAMAGE = {
    "log truncated": "log version 3 unreadable: not valid JSON",
    "log not an entry": "log version 3 unreadable",
    "log oversized": "more than a log entry may hold",
    # DESCRIBE reads the summary the build wrote and each data file's identity fields, not the filters.
    "data file deleted": "probe files missing or changed",
    "data file junk": "probe file unreadable",
    "filter size beyond its bytes": "index data files changed since the build",
    "filter size over 128 MiB": "index data files changed since the build",
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_index_answers_correctly_says_so_and_refresh_full_repairs_it(spark, root, tmp_path, kind):
    name = "dmg_" + kind.replace(" ", "_").replace("128_MiB", "max")
    path = _source(spark, tmp_path, name)
    # A hostile filter header is a damage of the Parquet rows queries read in the `columns`
    # layout (encrypted indexes, log format 3); the probe files of the `probes` layout hold bit
    # sets without headers.
    with confs(spark, {"spark.bloomindex.build.blockMajor": "false" if kind.startswith("filter") else None}):
        spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k, s)")
    if kind.startswith("log"):
        spark.sql(f"REFRESH BLOOM INDEX {name} FULL")  # versions 0..3: queries fall back to version 1
    before = differential(spark, path, seed=3)
    hit = _damage(spark, root, name, kind)
    fresh_driver(spark)

    after = differential(spark, path, seed=3)
    for where, files in after.items():
        # Never pruned from the damaged part of column k; everything else (and queries on s
        # alone, whose column is intact) pruned as before.
        assert files == (before[where] | hit if where.startswith("k") else before[where]), where
    if hit:
        victim = sorted(hit)[0]
        key = next(k for k, f in _first_keys(spark, path).items() if f not in hit)
        _, files = rows_and_files(spark, path, f"k = {key}", True)
        assert victim in files and len(files) < N_FILES
    d = _describe(spark, name)
    assert DAMAGE[kind] in d["damage"], d["damage"]
    assert any(name in w for w in _warnings(spark)), "a warning names the index"

    spark.sql(f"REFRESH BLOOM INDEX {name} FULL")
    d = _describe(spark, name)
    assert d["damage"] == "none" and d["state"] == "ACTIVE" and d["files_indexed"] == str(N_FILES)
    assert differential(spark, path, seed=3) == before
    entries = [e for e in log_entries_lenient(root, name)]
    assert [v for v, _ in entries] == list(range(len(entries)))


def log_entries_lenient(root, name):
    """(version, state or None for an unreadable entry) of every log file."""
    out = []
    for f in sorted(glob.glob(os.path.join(root, name, "_log", "*.json"))):
        try:
            out.append((int(os.path.basename(f)[:20]), json.load(open(f))["state"]))
        except (ValueError, KeyError):
            out.append((int(os.path.basename(f)[:20]), None))
    return out


def test_probe_files_swapped_between_columns_are_damage_not_filters(spark, root, tmp_path):
    """A build task writes one probe file per column, all of the same name (and here of the same
    length): a misdirected copy or restore can put column s's file in column=k/ and k's in
    column=s/, each whole, its checksums valid. Read as the other column's filters they would
    skip files that hold the value. Probe file format 5's footer checksum covers the column's
    name: each is refused as damage, its files read, not pruned; DESCRIBE says so, and the next
    REFRESH (not FULL) builds them again."""
    name = "swap_cols"
    path = _source(spark, tmp_path, name)
    spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k, s)")
    before = differential(spark, path, seed=5, n=12)
    data = os.path.join(root, name, log_entries(root, name)[-1]["data"]["dir"])
    ks = {os.path.basename(p): p for p in glob.glob(os.path.join(data, "column=k", "_*.probe"))}
    ss = {os.path.basename(p): p for p in glob.glob(os.path.join(data, "column=s", "_*.probe"))}
    task = sorted(set(ks) & set(ss))[0]
    a, b = ks[task], ss[task]
    assert os.path.getsize(a) == os.path.getsize(b)
    hit = {row_path(p) for p in read_probe_file(a)[2]}
    assert hit == {row_path(p) for p in read_probe_file(b)[2]} and 0 < len(hit) < N_FILES
    os.replace(a, a + ".swap")
    os.replace(b, a)
    os.replace(a + ".swap", b)
    for crc in glob.glob(os.path.join(data, "column=*", ".*.crc")):
        os.remove(crc)  # object stores keep no checksum files beside the data
    fresh_driver(spark)

    after = differential(spark, path, seed=5, n=12)
    assert after == {where: files | hit for where, files in before.items()}
    assert any(len(files) < N_FILES for files in after.values())
    d = _describe(spark, name)
    assert "probe file unreadable" in d["damage"] and "not a file of column" in d["damage"], d["damage"]
    assert any(name in w and "not a file of column" in w for w in _warnings(spark))

    spark.sql(f"REFRESH BLOOM INDEX {name}")
    fresh_driver(spark)
    d = _describe(spark, name)
    assert d["damage"] == "none" and d["files_indexed"] == str(N_FILES), d
    assert differential(spark, path, seed=5, n=12) == before


def test_a_refresh_never_carries_a_filter_whose_page_fails_its_checksum(spark, root, tmp_path):
    """The `columns` layout (encrypted indexes, `blockMajor = false`): one file's filter zeroed in
    place in its Parquet page (the size unchanged, no `.crc` file), so read as it is it answers
    "absent" for every value. A query fails the page's checksum and reads the files the page
    held, and DESCRIBE in that JVM names the damage. An incremental REFRESH in another driver,
    which has read nothing, must not carry the row into its new version, where fresh page
    checksums would seal it: it builds the file again."""
    name = "dmg_page"
    path = _source(spark, tmp_path, name)
    checksums = spark.sparkContext._jvm.bloomindex.log.Checksums
    with confs(spark, {"spark.bloomindex.build.blockMajor": "false"}):
        spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (refresh = 'manual')")
        data_dir = os.path.join(root, name, log_entries(root, name)[-1]["data"]["dir"], "column=k")
        part = sorted(p for p in glob.glob(os.path.join(data_dir, "*.parquet")) if pq.read_metadata(p).num_rows > 0)[0]
        victim = pq.read_table(part).to_pylist()[0]
        stored = bytes(victim["filter"])
        bits = bloomindex.Sbbf.deserialize(stored).num_bytes
        raw = open(part, "rb").read()
        at = raw.find(stored)
        assert at > 0 and raw.find(stored, at + 1) < 0, "the filter is stored once, uncompressed"
        head = len(stored) - bits
        open(part, "wb").write(raw[:at + head] + bytes(bits) + raw[at + len(stored):])
        for crc in glob.glob(os.path.join(data_dir, ".*.crc")):
            os.remove(crc)  # object stores keep no checksum files beside the data
        victim_file = row_path(victim["file_path"])
        key = next(k for k, f in _first_keys(spark, path).items() if f == victim_file)
        fresh_driver(spark)
        checksums.resetDamage()

        on, files = rows_and_files(spark, path, f"k = {key}", True)
        assert on == rows_and_files(spark, path, f"k = {key}", False)[0] and on
        assert victim_file in files
        assert "damaged filters found by reads" in _describe(spark, name)["damage"]

        # Another driver: nothing found by its reads. A new file, then an incremental REFRESH.
        checksums.resetDamage()
        fresh_driver(spark)
        spark.range(KEYS, KEYS + 10).select(F.col("id").alias("k"), F.concat(F.lit("s"), F.col("id").cast("string"))
                                            .alias("s")).coalesce(1).write.mode("append").parquet(path)
        spark.sql(f"REFRESH BLOOM INDEX {name}")
    d = _describe(spark, name)
    assert d["last_operation"] == "REFRESH INCREMENTAL" and d["files_indexed"] == str(N_FILES + 1), d
    fresh_driver(spark)
    on, files = rows_and_files(spark, path, f"k = {key}", True)
    assert on == rows_and_files(spark, path, f"k = {key}", False)[0] and victim_file in files
    assert len(files) < N_FILES, "the file built again is pruned again"
    differential(spark, path, seed=6, n=8)
    assert _describe(spark, name)["damage"] == "none"


def test_incremental_refresh_after_a_damaged_log_entry_rebuilds_in_full(spark, root, tmp_path):
    path = _source(spark, tmp_path, "dmg_inc")
    spark.sql(f"CREATE BLOOM INDEX dmg_inc ON parquet.`{path}` FOR COLUMNS (k)")
    _damage(spark, root, "dmg_inc", "log truncated")  # version 1, the only ACTIVE one: nothing to read
    fresh_driver(spark)
    d = _describe(spark, "dmg_inc")
    assert d["state"] == "CREATING" and d["active_version"] == "none" and "log version 1" in d["damage"]
    assert all(len(f) == N_FILES for f in differential(spark, path, seed=4, n=4).values())
    with pytest.raises(AnalysisException, match="REFRESH BLOOM INDEX dmg_inc FULL repairs it"):
        spark.sql(f"CREATE BLOOM INDEX dmg_inc ON parquet.`{path}` FOR COLUMNS (k)")
    spark.sql("REFRESH BLOOM INDEX dmg_inc")
    d = _describe(spark, "dmg_inc")
    assert d["last_operation"] == "REFRESH FULL" and d["damage"] == "none" and d["log_version"] == "3"
    assert any(len(f) < N_FILES for f in differential(spark, path, seed=4, n=4).values())
    # DROP after a damaged entry commits after it too.
    _damage(spark, root, "dmg_inc", "log truncated")
    spark.sql("DROP BLOOM INDEX dmg_inc")
    assert [s for _, s in log_entries_lenient(root, "dmg_inc")][-2:] == [None, "DELETED"]
    assert all(len(f) == N_FILES for f in differential(spark, path, seed=4, n=4).values())


# --------------------------------------------------------------- concurrency

ALLOWED = ("another command committed", "does not exist")

# A second driver: its own JVM and SparkSession, the same root, the same commands.
SECOND_PROCESS = r"""
import json, random, sys
from pyspark.sql import SparkSession
import bloomindex
root, warehouse, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
spark = bloomindex.configure(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1").config("spark.sql.warehouse.dir", warehouse)
    .config("spark.bloomindex.root", root)).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
print("READY", flush=True)
sys.stdin.readline()
rng = random.Random(seed)
for _ in range(3):
    sql = rng.choice(ops)
    try:
        spark.sql(sql)
        print("OUTCOME ok", flush=True)
    except Exception as e:
        print("OUTCOME " + json.dumps([sql, type(e).__name__, str(e)[:500]]), flush=True)
spark.stop()
"""


def test_concurrent_create_refresh_drop_keep_one_linear_history(spark, root, tmp_path):
    path = _source(spark, tmp_path, "conc")
    create = f"CREATE BLOOM INDEX IF NOT EXISTS conc ON parquet.`{path}` FOR COLUMNS (k, s)"
    spark.sql(create)
    expected = {w: rows_and_files(spark, path, w, False)[0] for w in _queries(random.Random(5), 12)}
    other = spark.newSession()
    reader = spark.newSession()
    for s in (other, reader):
        s.conf.set("spark.bloomindex.root", root)
    ops = [create, "REFRESH BLOOM INDEX conc", "REFRESH BLOOM INDEX conc FULL", "DROP BLOOM INDEX IF EXISTS conc"]
    outcomes, unexpected = [], []
    done = threading.Event()

    def worker(session, seed):
        rng = random.Random(seed)
        for _ in range(3):
            sql = rng.choice(ops)
            try:
                session.sql(sql)
                outcomes.append("ok")
            except AnalysisException as e:
                if not any(a in str(e) for a in ALLOWED):
                    unexpected.append((sql, repr(e)))
                outcomes.append("conflict" if "another command" in str(e) else "gone")
            except Exception as e:  # noqa: BLE001 - any other type is the failure under test
                unexpected.append((sql, repr(e)))

    def queries():
        n = 0
        while not done.is_set() or n < len(expected):
            where = list(expected)[n % len(expected)]
            rows = sorted(tuple(r) for r in reader.sql(f"SELECT k, s FROM parquet.`{path}` WHERE {where}").collect())
            COMPARED["queries"] += 1
            if rows != expected[where]:
                COMPARED["mismatches"] += 1
                unexpected.append((where, "wrong answer"))
            n += 1

    proc = subprocess.Popen([sys.executable, "-c", SECOND_PROCESS, root, str(tmp_path / "wh2"), "9", json.dumps(ops)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"  # its JVM is up: start everyone at once
        threads = [threading.Thread(target=worker, args=(s, i)) for i, s in enumerate([spark, spark, other, other])]
        q = threading.Thread(target=queries)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        for t in threads + [q]:
            t.start()
        for t in threads:
            t.join(timeout=300)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    done.set()
    q.join(timeout=300)
    for line in out.splitlines():
        if line.startswith("OUTCOME "):
            o = line[len("OUTCOME "):]
            if o == "ok":
                outcomes.append("ok")
            else:
                sql, kind, msg = json.loads(o)
                if kind not in ("AnalysisException", "ConcurrentBloomIndexUpdateException") or \
                        not any(a in msg for a in ALLOWED):
                    unexpected.append((sql, kind, msg))
                outcomes.append("conflict" if "another command" in msg else "gone")
    assert not unexpected, unexpected
    assert len(outcomes) == 15 and outcomes.count("ok") >= 1, outcomes
    for o in outcomes:
        COMPARED["commands " + o] = COMPARED.get("commands " + o, 0) + 1
    entries = log_entries(root, "conc")
    _assert_linear(entries)
    # Whatever happened, the index can be brought back and is whole.
    spark.sql(create)
    spark.sql("REFRESH BLOOM INDEX conc FULL")
    d = _describe(spark, "conc")
    assert d["damage"] == "none" and d["files_indexed"] == str(N_FILES)
    _assert_linear(log_entries(root, "conc"))
    live = {e["data"]["dir"] for e in log_entries(root, "conc") if e["state"] == "ACTIVE"}
    assert set(os.listdir(os.path.join(root, "conc", "data"))) <= {d.split("/")[1] for d in live}
    differential(spark, path, seed=6)


def test_differential_totals(capsys):
    """Prints how many queries the tests above compared (docs/reliability.md quotes it)."""
    with capsys.disabled():
        print(f"\nreliability: {COMPARED}")
    assert COMPARED["mismatches"] == 0


def test_a_file_moved_away_during_a_build_under_ignore_missing_files_is_never_skipped(spark, root, tmp_path):
    """Under the reader option `ignoreMissingFiles` (or the session's setting) Spark's scan gives no
    rows and no error for a file gone between the listing and the read. A build must not store an
    empty filter for it under the identity it listed: a move back keeps path, size and time, and
    the file would be skipped. The build fails instead, naming the file, and the version before it
    stays."""
    path = str(tmp_path / "moved")
    spark.range(0, 30, 1, 3).selectExpr("id", "id * 2 AS v").write.json(path)
    read = lambda: spark.read.option("ignoreMissingFiles", "true").schema("id BIGINT, v BIGINT").json(path)
    BloomIndex(spark, progress=False).create("moved_idx", read(), ["id"])
    holder = read().where("id = 15").selectExpr("input_file_name()").head()[0]
    moved = os.path.join(str(tmp_path), "moved_away.json")
    local = holder.replace("file://", "")
    failure: list = []

    def refresh():
        try:
            BloomIndex(spark, progress=False).refresh("moved_idx", "full")
        except Exception as e:  # noqa: BLE001 - any failure is recorded for the assertions below
            failure.append(e)

    tracker = spark.sparkContext.statusTracker()
    with confs(spark, {"spark.sql.files.ignoreMissingFiles": "true",
                       "spark.internal.bloomindex.test.buildTaskDelayMs": "4000"}):
        t = threading.Thread(target=refresh)
        t.start()
        try:
            # The build's tasks (the job that collects the index files) wait 4 s before they read:
            # move the file while they wait. The refresh's earlier jobs (the JSON schema) read it.
            def build_running() -> bool:
                infos = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
                return any(i is not None and "IndexFiles" in i.name for i in infos)
            for _ in range(1200):
                if build_running() or not t.is_alive():
                    break
                threading.Event().wait(0.05)
            assert t.is_alive(), f"the refresh ended before its build ran: {failure}"
            os.rename(local, moved)
        finally:
            t.join()
    os.rename(moved, local)
    assert failure, "the build read a missing file as an empty one"
    assert os.path.basename(local) in str(failure[0]), str(failure[0])[:2000]
    # The file is back as it was listed: read, and the version before the failed build still prunes.
    q = lambda: read().where("id = 15")
    assert sorted(tuple(r) for r in q().collect()) == [(15, 30)]
    with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
        assert sorted(tuple(r) for r in q().collect()) == [(15, 30)]
    assert "kept 1/3 files" in BloomIndex(spark).explain(q())
    BloomIndex(spark, progress=False).drop("moved_idx")
