"""Issue 15: cold start. A query on a fresh driver loads only the index data of the columns it
probes (one folder per column), and of those only the footers of their probe files and the
filter blocks its values hash to (log format 5, layout `probes`: the filters stored once, in
probe files), on the driver without a Spark job; the loaded data is bounded by a cache cap;
indexes written in the earlier layouts (log format 4 `blocks`, 3 `columns`, 2 `rows`) are read
as before, and an entry of a layout this build does not know is refused with REFRESH ... FULL."""
from __future__ import annotations

import glob
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from index_helpers import (confs, entry_text, fresh_driver, index_rows, log_entries, probe_rows, read_probe_file, row_path,
                           rows_and_files)

N_FILES = 8
KEYS = 800


def _source(spark, tmp_path, name):
    """N_FILES Parquet files with disjoint key ranges: a point query keeps one file."""
    path = str(tmp_path / name)
    (spark.range(KEYS).select(F.col("id").alias("k"), F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"))
     .repartitionByRange(N_FILES, "k").write.parquet(path))
    return path


def _jvm(spark):
    return spark.sparkContext._jvm.bloomindex


def _loaded(spark):
    return dict(_jvm(spark).layout.IndexStore.loadedFiles())


def _differential(spark, path, seed, n=3):
    """Rows with the index == rows without, for n random predicates; the files each read."""
    rng = random.Random(seed)
    read = {}
    for _ in range(n):
        a, b = rng.randrange(-10, KEYS + 10), rng.randrange(KEYS)
        for where in (f"k = {a}", f"s = 's{b}'", f"k IN ({a}, {b}) AND s IS NOT NULL", f"k = {a} OR s = 's{b}'"):
            on, files = rows_and_files(spark, path, where, True)
            off, _ = rows_and_files(spark, path, where, False)
            assert on == off, where
            read[where] = files
    return read


BLOCKS = {"spark.internal.bloomindex.test.blocksLayout": "true"}  # log format 4's layout, as it wrote it
COLUMNS = {"spark.bloomindex.build.blockMajor": "false"}  # log format 3's layout


def _indexed(spark, tmp_path, name, seed, settings=None):
    """A source and its index on (k, s) (built under `settings`); the differential rows and
    files of a fresh driver, which prune."""
    path = _source(spark, tmp_path, name)
    with confs(spark, settings or {}):
        spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k, s)")
    fresh_driver(spark)
    expected = _differential(spark, path, seed=seed)
    assert any(len(f) < N_FILES for f in expected.values())
    return path, expected


def _rewrite_entry(root, name, change, active=False):
    """Rewrites the index's newest log entry (the newest ACTIVE one with `active`) as `change`
    leaves it (as an earlier build wrote it); returns the entry."""
    files = sorted(glob.glob(os.path.join(root, name, "_log", "*.json")))
    newest = [f for f in files if not active or json.load(open(f))["state"] == "ACTIVE"][-1]
    entry = json.load(open(newest))
    change(entry)
    os.remove(newest)  # log files are hard links made at commit: a new file, not through the link
    with open(newest, "w") as out:
        out.write(entry_text(entry))
    return entry


def _jobs(spark):
    """The newest job's id (-1 before any): job ids only grow. Not the number of jobs: the
    tracker keeps the last spark.ui.retainedJobs (1,000), so after a long test session a new job
    can leave fewer than before."""
    return max(spark.sparkContext.statusTracker().getJobIdsForGroup(None), default=-1)


def test_a_query_on_a_fresh_driver_loads_only_its_columns_index_data(spark, root, tmp_path):
    path = _source(spark, tmp_path, "cold")
    spark.sql(f"CREATE BLOOM INDEX cold ON parquet.`{path}` FOR COLUMNS (k, s)")
    entry = log_entries(root, "cold")[-1]
    assert entry["formatVersion"] == 6 and entry["data"]["layout"] == "probes"
    data = os.path.join(root, "cold", entry["data"]["dir"])
    assert sorted(f for f in os.listdir(data) if not f.startswith(".")) == ["_summary.json", "column=k", "column=s"]
    # The filters are stored once: probe files, no Parquet rows.
    k_probes = glob.glob(os.path.join(data, "column=k", "_*.probe"))
    assert len(k_probes) > 0 and [f for f in os.listdir(os.path.join(data, "column=k"))
                                  if not f.startswith(".") and not f.endswith(".probe")] == []
    sections = [s for p in k_probes for s in read_probe_file(p)[1]]
    # What a reader reads of each: the footer and the trailer (not the leading magic, 8 bytes, nor the block rows and their checksums).
    footers = sum(os.path.getsize(p) - 8 - sum(s["blocks"] * s["stride"] for s in read_probe_file(p)[1])
                  for p in k_probes)

    fresh_driver(spark)
    # Reads as before issue 26 (trailer, then footer; each block row alone), whose bytes are
    # exactly what the lookup needs; by default a footer is read with the file's end (here the
    # whole small file) and neighbouring rows with the bytes between them (below).
    spark.conf.set("spark.bloomindex.load.footerReadBytes", "0")
    spark.conf.set("spark.bloomindex.load.coalesceGapBytes", "-1")
    df = spark.sql(f"SELECT k, s FROM parquet.`{path}` WHERE k = 5")
    df.schema  # analysis (and the source's schema) before the jobs are counted
    jobs = _jobs(spark)
    df._jdf.queryExecution().executedPlan()
    spark.conf.unset("spark.bloomindex.load.footerReadBytes")
    spark.conf.unset("spark.bloomindex.load.coalesceGapBytes")
    assert _jobs(spark) == jobs, "loading the index started a Spark job"
    assert _loaded(spark) == {"column=k": len(k_probes)}
    # The probe files' footers, and one block row (one 32-byte block per file) per section for
    # the one hash: none of the Parquet files, none of the other blocks.
    assert dict(_jvm(spark).layout.IndexStore.loadedBytes()) == {"column=k": footers + sum(32 * s["files"] for s in sections)}
    assert all(s["blocks"] > 1 for s in sections), "the filters have blocks the lookup did not read"
    assert len(df.inputFiles()) == 1 and sorted(df.collect()) == [(5, "s5")]
    held = _jvm(spark).catalog.IndexCache.heldBytes()
    assert 0 < held and _jvm(spark).catalog.IndexCache.heldColumns() == 1

    # The other column on its first use, with the default reads; the first one is not read again.
    k_files = _loaded(spark)["column=k"]
    assert len(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE s = 's5'").inputFiles()) == 1
    assert set(_loaded(spark)) == {"column=k", "column=s"} and _loaded(spark)["column=k"] == k_files
    # A probe file this small is read whole by its footer's one read (the bytes before the
    # footer are within coalesceGapBytes): each read once, and no block row read after it.
    s_probes = glob.glob(os.path.join(data, "column=s", "_*.probe"))
    s_bytes = dict(_jvm(spark).layout.IndexStore.loadedBytes())["column=s"]
    assert s_bytes == sum(os.path.getsize(p) for p in s_probes)
    before = _loaded(spark)
    _differential(spark, path, seed=1)
    assert _loaded(spark) == before, "warm queries open no index file but for the blocks of new values"
    assert dict(_jvm(spark).layout.IndexStore.loadedBytes())["column=s"] == s_bytes, \
        "lookups of new values read no block row of a probe file read whole"


def test_probe_files_hold_the_same_bits_as_the_parquet_rows(spark, root, tmp_path):
    """Each file's filter put back together from the block rows of the probe files (read here
    with nothing but struct) is, byte for byte and for every design, the bit set of its
    Parquet row in an index of the same source in the `columns` layout (log format 3), and what
    REFRESH carries (the JVM's reading of the probe files) is that row's serialized filter."""
    import bloomindex.filters

    path = _source(spark, tmp_path, "cold_bits")
    for alg in ("sbbf", "sbbf-murmur3", "classic"):
        name = f"cold_bits_{alg.replace('-', '_')}"
        create = f"ON parquet.`{path}` FOR COLUMNS (k, s) OPTIONS (algorithm = '{alg}')"
        spark.sql(f"CREATE BLOOM INDEX {name} {create}")
        with confs(spark, COLUMNS):
            spark.sql(f"CREATE BLOOM INDEX {name}_v3 {create}")
        assert log_entries(root, f"{name}_v3")[-1]["data"]["layout"] == "columns"
        entry = log_entries(root, name)[-1]
        assert entry["data"]["layout"] == "probes"
        data = os.path.join(root, name, entry["data"]["dir"])
        parquet_rows = {(row_path(r.file_path), r.column): r for r in index_rows(spark, root, f"{name}_v3")}
        carried = {(row_path(r.file_path), r.column): r for r in index_rows(spark, root, name)}
        assert carried.keys() == parquet_rows.keys() and len(carried) == 2 * N_FILES
        # Python's reading of the probe files (Spark Connect tests use it) is the JVM's, row for row.
        assert sorted(probe_rows(data)) == sorted(carried.values())
        for key, r in parquet_rows.items():
            c = carried[key]
            assert (bytes(c.filter), c.file_size, c.modification_time, c.row_count, c.null_count, c.ndv, c.built_from) == \
                (bytes(r.filter), r.file_size, r.modification_time, r.row_count, r.null_count, r.ndv, r.built_from), key
        seen = 0
        for column in ("k", "s"):
            for p in glob.glob(os.path.join(data, f"column={column}", "_*.probe")):
                algorithm, sections, bitsets = read_probe_file(p)
                assert algorithm == alg
                for file_path, bits in bitsets.items():
                    parquet_row = bloomindex.filters.deserialize(bytes(parquet_rows[(row_path(file_path), column)].filter), alg)
                    assert bits == parquet_row.bitset_bytes(), (alg, column, file_path)
                    seen += 1
        assert seen == 2 * N_FILES
        fresh_driver(spark)
        _differential(spark, path, seed=7, n=2)


def _damage_a_probe_file(root, name):
    """Garbles the footer of one of column k's probe files; returns it and the source files it held."""
    data = os.path.join(root, name, log_entries(root, name)[-1]["data"]["dir"])
    victim = sorted(glob.glob(os.path.join(data, "column=k", "_*.probe")))[0]
    held = {row_path(p) for p in read_probe_file(victim)[2]}
    with open(victim, "r+b") as f:  # same length (the summary's), garbage footer
        f.seek(-16, os.SEEK_END)
        f.write(b"\xff" * 8)
    return victim, held


def test_a_damaged_probe_file_leaves_the_files_it_held_unpruned(spark, root, tmp_path):
    """Layout `probes`: the probe files are the column's only index data, so the files a
    damaged one held are read (same answers) until REFRESH ... FULL; the rest still prune."""
    path, expected = _indexed(spark, tmp_path, "cold_dmg", seed=8)
    victim, hit = _damage_a_probe_file(root, "cold_dmg")
    assert 0 < len(hit) < N_FILES
    fresh_driver(spark)
    read = _differential(spark, path, seed=8)
    assert read.keys() == expected.keys()
    for where, files in read.items():
        assert files == (expected[where] | hit if where.startswith("k") else expected[where]), where
    warnings = list(_jvm(spark).log.IndexLog.warnings())
    assert any("cold_dmg" in w and "1 of" in w and "the files they held are read, not pruned" in w and
               "REFRESH BLOOM INDEX cold_dmg FULL" in w for w in warnings), warnings
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX cold_dmg").collect()}
    assert "probe file unreadable" in d["damage"] and "not pruned" in d["damage"]
    # An incremental refresh carries the rows it can read and builds the files that lost theirs
    # in a column again: pruning as before; a full one too.
    spark.sql("REFRESH BLOOM INDEX cold_dmg")
    fresh_driver(spark)
    assert _differential(spark, path, seed=8) == expected
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX cold_dmg").collect()}
    assert d["damage"] == "none" and d["column.k.files"] == str(N_FILES)
    os.remove(victim)
    spark.sql("REFRESH BLOOM INDEX cold_dmg FULL")
    fresh_driver(spark)
    assert _differential(spark, path, seed=8) == expected


def test_a_damaged_probe_file_of_log_format_4_falls_back_to_the_parquet_files(spark, root, tmp_path):
    """Layout `blocks` (log format 4: Parquet rows with the filters, probe files beside them):
    read as before; a damaged probe file sends queries to the column's Parquet files."""
    path, expected = _indexed(spark, tmp_path, "cold_dmg4", seed=8, settings=BLOCKS)
    entry = _rewrite_entry(root, "cold_dmg4", lambda e: e.update(formatVersion=4))  # as the previous build wrote it
    assert entry["data"]["layout"] == "blocks"
    data = os.path.join(root, "cold_dmg4", entry["data"]["dir"])
    assert glob.glob(os.path.join(data, "column=k", "*.parquet"))
    _damage_a_probe_file(root, "cold_dmg4")
    fresh_driver(spark)
    assert _differential(spark, path, seed=8) == expected
    assert "column=k" in _loaded(spark)
    warnings = list(_jvm(spark).log.IndexLog.warnings())
    assert any("cold_dmg4" in w and "Parquet files are read instead" in w for w in warnings), warnings
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX EXTENDED cold_dmg4").collect()}
    assert "probe file unreadable" in d["damage"] and d["files_new_or_changed"] == "0"
    # An incremental refresh carries the format-4 rows (from Parquet) into the current layout.
    spark.range(KEYS, KEYS + 10).select(F.col("id").alias("k"), F.lit("x").alias("s")).write.mode("append").parquet(path)
    spark.sql("REFRESH BLOOM INDEX cold_dmg4")
    assert log_entries(root, "cold_dmg4")[-1]["data"]["layout"] == "probes"
    fresh_driver(spark)
    assert _differential(spark, path, seed=8).keys() == expected.keys()
    on, files = rows_and_files(spark, path, f"k = {KEYS + 3}", True)
    assert on == [(KEYS + 3, "x")] and len(files) == 1


def test_an_index_of_log_format_3_is_read_as_before(spark, root, tmp_path):
    """The `columns` layout (log format 3: Parquet files only, no probe files): each query loads
    the whole column's Parquet files, and prunes the same."""
    path, expected = _indexed(spark, tmp_path, "cold_v3", seed=9)
    with confs(spark, COLUMNS):
        spark.sql("REFRESH BLOOM INDEX cold_v3 FULL")
    entry = _rewrite_entry(root, "cold_v3", lambda e: e.update(formatVersion=3))  # as the previous build wrote it
    assert entry["data"]["layout"] == "columns"
    data = os.path.join(root, "cold_v3", entry["data"]["dir"])
    assert glob.glob(os.path.join(data, "column=*", "*.probe")) == []
    fresh_driver(spark)
    assert _differential(spark, path, seed=9) == expected
    k_bytes = sum(os.path.getsize(f) for f in glob.glob(os.path.join(data, "column=k", "*.parquet")))
    assert dict(_jvm(spark).layout.IndexStore.loadedBytes())["column=k"] == k_bytes
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX EXTENDED cold_v3").collect()}
    assert d["damage"] == "none" and d["files_new_or_changed"] == "0" and d["column.k.files"] == str(N_FILES)
    # An incremental refresh carries its rows into the current layout.
    spark.range(KEYS, KEYS + 10).select(F.col("id").alias("k"), F.lit("x").alias("s")).write.mode("append").parquet(path)
    spark.sql("REFRESH BLOOM INDEX cold_v3")
    assert log_entries(root, "cold_v3")[-1]["data"]["layout"] == "probes"
    fresh_driver(spark)
    assert len(rows_and_files(spark, path, "k = 5", True)[1]) == 1
    on, files = rows_and_files(spark, path, f"k = {KEYS + 3}", True)
    assert on == rows_and_files(spark, path, f"k = {KEYS + 3}", False)[0] == [(KEYS + 3, "x")] and len(files) == 1


def test_after_a_refresh_only_the_new_version_is_held(spark, root, tmp_path):
    path = _source(spark, tmp_path, "cold_ref")
    spark.sql(f"CREATE BLOOM INDEX cold_ref ON parquet.`{path}` FOR COLUMNS (k, s)")
    fresh_driver(spark)
    before = _differential(spark, path, seed=2)
    cache = _jvm(spark).catalog.IndexCache
    assert cache.heldColumns() == 2
    spark.range(KEYS, KEYS + 100).select(F.col("id").alias("k"), F.concat(F.lit("s"), F.col("id").cast("string"))
                                         .alias("s")).write.mode("append").parquet(path)
    spark.sql("REFRESH BLOOM INDEX cold_ref")
    _jvm(spark).layout.IndexStore.resetLoaded()
    assert len(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE k = 850").inputFiles()) == 1
    # The old version's columns are dropped when the new one's are loaded: one column held.
    assert cache.heldColumns() == 1 and set(_loaded(spark)) == {"column=k"}
    after = _differential(spark, path, seed=2)
    assert after.keys() == before.keys()


def test_a_cache_cap_of_zero_holds_nothing_and_prunes_the_same(spark, root, tmp_path):
    path, expected = _indexed(spark, tmp_path, "cold_cap", seed=3)
    spark.conf.set("spark.bloomindex.cache.maxBytes", "0")
    try:
        fresh_driver(spark)
        assert _differential(spark, path, seed=3) == expected
        assert _jvm(spark).catalog.IndexCache.heldBytes() == 0
        k_files = len(glob.glob(os.path.join(root, "cold_cap", "data", "*", "column=k", "_*.probe")))
        assert k_files > 0 and _loaded(spark)["column=k"] >= 2 * k_files, "each query loads what it needs again"
    finally:
        spark.conf.unset("spark.bloomindex.cache.maxBytes")
    with pytest.raises(Exception, match="spark.bloomindex.cache.maxBytes"):
        spark.conf.set("spark.bloomindex.cache.maxBytes", "-1")


def test_above_the_driver_threshold_a_spark_job_loads_the_same_data(spark, root, tmp_path):
    """Parquet index files (here the `columns` layout) above `load.driverMaxFiles` are read by a
    Spark job; probe footers are always read on the driver."""
    path, expected = _indexed(spark, tmp_path, "cold_job", seed=4, settings=COLUMNS)
    spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
    try:
        fresh_driver(spark)
        df = spark.sql(f"SELECT k, s FROM parquet.`{path}` WHERE k = 5")
        df.schema
        jobs = _jobs(spark)
        df._jdf.queryExecution().executedPlan()
        assert _jobs(spark) > jobs
        assert _differential(spark, path, seed=4) == expected
    finally:
        spark.conf.unset("spark.bloomindex.load.driverMaxFiles")


def _to_format_2(spark, root, name):
    """Rewrites the newest ACTIVE version as log format 2 wrote it: every column's rows in one
    Parquet file (with the `column` field), no summary, no `layout` in the entry."""
    # The rows as this build reads them (from the probe files), written as one Parquet file.
    rows = index_rows(spark, root, name)
    fields = ["file_path", "file_size", "modification_time", "column", "row_count", "null_count", "ndv", "filter",
              "built_from"]
    table = pa.table({f: [bytes(r[f]) if f == "filter" else r[f] for r in rows] for f in fields})

    def change(entry):
        old = entry["data"]["dir"] + "-format2"
        os.makedirs(os.path.join(root, name, old))
        pq.write_table(table, os.path.join(root, name, old, "part-00000.parquet"), compression="none")
        entry["formatVersion"] = 2
        entry["data"]["dir"] = old
        del entry["data"]["layout"]

    _rewrite_entry(root, name, change, active=True)


def test_an_index_of_log_format_2_is_read_as_before(spark, root, tmp_path):
    path, expected = _indexed(spark, tmp_path, "cold_v2", seed=5)
    _to_format_2(spark, root, "cold_v2")
    fresh_driver(spark)
    assert _differential(spark, path, seed=5) == expected
    assert _loaded(spark) == {}, "the rows layout is read by Spark, every column at once, as before"
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX cold_v2").collect()}
    assert d["damage"] == "none" and d["files_indexed"] == str(N_FILES) and d["column.k.files"] == str(N_FILES)
    # A full refresh writes the current layout.
    spark.sql("REFRESH BLOOM INDEX cold_v2 FULL")
    assert log_entries(root, "cold_v2")[-1]["data"]["layout"] == "probes"
    fresh_driver(spark)
    assert _differential(spark, path, seed=5) == expected
    # An incremental refresh on top of a format-2 version carries its rows into the new layout.
    _to_format_2(spark, root, "cold_v2")
    spark.sql("REFRESH BLOOM INDEX cold_v2")
    fresh_driver(spark)
    assert _differential(spark, path, seed=5) == expected


def test_a_layout_this_build_does_not_know_is_refused_with_refresh_full(spark, root, tmp_path):
    path = _source(spark, tmp_path, "cold_new")
    spark.sql(f"CREATE BLOOM INDEX cold_new ON parquet.`{path}` FOR COLUMNS (k)")
    _rewrite_entry(root, "cold_new", lambda e: e["data"].update(layout="block-major"))
    fresh_driver(spark)
    # Queries do not use it (and answer correctly); DESCRIBE and the warning say what repairs it.
    read = _differential(spark, path, seed=6, n=2)
    assert all(len(f) == N_FILES for w, f in read.items() if w.startswith("k = "))
    warnings = list(_jvm(spark).log.IndexLog.warnings())
    assert any("unknown data layout 'block-major'" in w and "REFRESH BLOOM INDEX cold_new FULL" in w
               for w in warnings), warnings
    d = {r.info_name: r.info_value for r in spark.sql("DESCRIBE BLOOM INDEX cold_new").collect()}
    assert "unknown data layout 'block-major'" in d["damage"]
    spark.sql("REFRESH BLOOM INDEX cold_new FULL")
    fresh_driver(spark)
    assert any(len(f) < N_FILES for f in _differential(spark, path, seed=6, n=2).values())
