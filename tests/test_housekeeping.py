"""Issue 29, housekeeping: an incremental refresh keeps the probe files whose every file is
unchanged and writes only the new files' filters; past `spark.bloomindex.refresh.maxProbeFiles`
probe files in a column it rewrites the small ones together; `OPTIMIZE BLOOM INDEX` does that on
demand; `VACUUM BLOOM INDEX [RETAIN n HOURS]` deletes the data no version within the retention
reads, never what the live version reads (its own folder and the folders whose probe files it
kept). Every step answers as with the index off."""

from __future__ import annotations

import json
import os

import pytest
from pyspark.errors import AnalysisException, ParseException

from index_helpers import assert_filters_hold_values, confs, log_entries, probe_file_entries
from test_decoding_regressions import kept, report, same


def _append(spark, path: str, i: int) -> None:
    """One file holding keys k<i>-0..4 (and v = 1000 * i ...)."""
    spark.createDataFrame([(f"k{i}-{j}", 1000 * i + j) for j in range(5)], "k STRING, v BIGINT") \
        .coalesce(1).write.mode("append").parquet(path)


def _live(root: str, name: str) -> dict:
    return [e for e in log_entries(root, name) if e["state"] == "ACTIVE"][-1]


def _summary(root: str, name: str) -> dict:
    with open(os.path.join(root, name, _live(root, name)["data"]["dir"], "_summary.json")) as f:
        return json.load(f)["columns"]


def _probe_files(root: str, name: str) -> dict[str, list[str]]:
    """Per column, every probe file the live version reads (absolute paths): its own, then kept ones."""
    live = os.path.join(root, name, _live(root, name)["data"]["dir"])
    return {c: [os.path.join(live, f"column={c}", f) for f in sorted(s.get("probeFiles", {}))]
            + [os.path.join(root, name, r) for r in sorted(s.get("reusedProbeFiles", {}))]
            for c, s in _summary(root, name).items()}


def _check(spark, path: str, index: str, keys, files: int) -> None:
    """Lookups of a key of the first, a middle and the last file of `keys`: same rows on and off,
    one file kept of `files`."""
    keys = sorted(keys)
    for i in sorted({keys[0], keys[len(keys) // 2], keys[-1]}):
        make = lambda i=i: spark.read.parquet(path).where(f"k = 'k{i}-3'")
        assert same(spark, make) == [(f"k{i}-3", 1000 * i + 3)]
        assert kept(report(spark, make), index) == (1, files)
        make_v = lambda i=i: spark.read.parquet(path).where(f"v IN ({1000 * i + 1}, -5)")
        assert len(same(spark, make_v)) == 1
        assert kept(report(spark, make_v), index) == (1, files)


def test_refresh_keeps_unchanged_probe_files_and_writes_only_new_ones(spark, root, tmp_path):
    path = str(tmp_path / "t")
    for i in range(4):
        _append(spark, path, i)
    spark.sql(f"CREATE BLOOM INDEX hk ON parquet.`{path}` FOR COLUMNS (k, v)")
    first = _live(root, "hk")["data"]
    first_probes = _probe_files(root, "hk")

    _append(spark, path, 4)
    spark.sql("REFRESH BLOOM INDEX hk")
    data = _live(root, "hk")["data"]
    # The first version's probe files are kept as they are, by name; the new folder holds the new
    # file's rows only.
    assert data["reused"] == [first["dir"]], data
    assert data["indexedFiles"] == 5
    for c in ("k", "v"):
        probes = _probe_files(root, "hk")[c]
        assert probes[-len(first_probes[c]):] == first_probes[c]
        own = [p for p in probes if p not in first_probes[c]]
        assert sum(len(probe_file_entries(p)[2]) for p in own) == 1, own
        assert _summary(root, "hk")[c]["files"] == 5
    _check(spark, path, "hk", range(5), 5)
    assert_filters_hold_values(spark, root, "hk", spark.read.parquet(path), {"k": "string", "v": "bigint"})

    # A file deleted: the probe file that held it is not kept (its other rows are written again).
    victim = sorted(f for f in os.listdir(path) if f.endswith(".parquet"))[0]
    os.remove(os.path.join(path, victim))
    crc = os.path.join(path, f".{victim}.crc")
    if os.path.exists(crc):
        os.remove(crc)
    spark.sql("REFRESH BLOOM INDEX hk")
    data = _live(root, "hk")["data"]
    assert data["indexedFiles"] == 4
    held = {e["path"].split("/")[-1] for p in _probe_files(root, "hk")["k"] for e in probe_file_entries(p)[2]}
    assert victim not in held and len(held) == 4
    remaining = sorted(int(r.k.split("-")[0][1:]) for r in spark.read.parquet(path).where("k LIKE '%-0'").collect())
    _check(spark, path, "hk", remaining, 4)
    # Nothing changed since: nothing committed.
    version = _live(root, "hk")["version"]
    spark.sql("REFRESH BLOOM INDEX hk")
    assert log_entries(root, "hk")[-1]["version"] == version


def test_many_refreshes_stay_within_max_probe_files_and_optimize_compacts(spark, root, tmp_path):
    path = str(tmp_path / "t")
    _append(spark, path, 0)
    spark.sql(f"CREATE BLOOM INDEX hm ON parquet.`{path}` FOR COLUMNS (k, v)")
    with confs(spark, {"spark.bloomindex.refresh.maxProbeFiles": "2"}):
        for i in range(1, 6):
            _append(spark, path, i)
            spark.sql("REFRESH BLOOM INDEX hm")
            counts = {c: len(p) for c, p in _probe_files(root, "hm").items()}
            assert all(n <= 2 for n in counts.values()), (i, counts)
            assert _live(root, "hm")["data"]["indexedFiles"] == i + 1
        _check(spark, path, "hm", range(6), 6)

        [(version,)] = spark.sql("OPTIMIZE BLOOM INDEX hm").collect()
        entry = _live(root, "hm")
        assert entry["version"] == version and entry["operation"] == "OPTIMIZE"
        assert "reused" not in entry["data"]
        assert {c: len(p) for c, p in _probe_files(root, "hm").items()} == {"k": 1, "v": 1}
        assert entry["data"]["indexedFiles"] == 6
        _check(spark, path, "hm", range(6), 6)
        assert_filters_hold_values(spark, root, "hm", spark.read.parquet(path), {"k": "string", "v": "bigint"})
        # Compact and current: OPTIMIZE commits nothing.
        assert spark.sql("OPTIMIZE BLOOM INDEX hm").collect() == [(version,)]
        assert log_entries(root, "hm")[-1]["version"] == version


def test_a_build_of_many_tasks_writes_probe_files_by_bytes_not_one_per_task(spark, root, tmp_path):
    """One build task per file (12 tasks, more than `maxProbeFiles`): CREATE writes one probe file
    per column (its rows are far under `targetFileBytes`), and so does a REFRESH of 10 new files;
    with `maxProbeFiles` above the task count each task writes its own, as before. Lookups
    answer as with the index off, one file kept."""
    path = str(tmp_path / "t")
    for i in range(12):
        _append(spark, path, i)
    one_per_task = {"spark.sql.files.maxPartitionBytes": "1024", "spark.sql.files.openCostInBytes": "0",
                    "spark.bloomindex.build.footerFilters": "false"}
    with confs(spark, one_per_task):
        assert spark.read.parquet(path).rdd.getNumPartitions() == 12
        spark.sql(f"CREATE BLOOM INDEX hb ON parquet.`{path}` FOR COLUMNS (k, v)")
        assert {c: len(p) for c, p in _probe_files(root, "hb").items()} == {"k": 1, "v": 1}
        assert all(len(probe_file_entries(p)[2]) == 12 for ps in _probe_files(root, "hb").values() for p in ps)
        _check(spark, path, "hb", range(12), 12)

        for i in range(12, 22):
            _append(spark, path, i)
        spark.sql("REFRESH BLOOM INDEX hb")
        probes = _probe_files(root, "hb")
        assert {c: len(p) for c, p in probes.items()} == {"k": 2, "v": 2}  # the kept one and one new
        assert sorted(len(probe_file_entries(p)[2]) for p in probes["k"]) == [10, 12]
        _check(spark, path, "hb", range(22), 22)
        assert_filters_hold_values(spark, root, "hb", spark.read.parquet(path), {"k": "string", "v": "bigint"})

        with confs(spark, {"spark.bloomindex.refresh.maxProbeFiles": "64"}):
            spark.sql("REFRESH BLOOM INDEX hb FULL")
            assert {c: len(p) for c, p in _probe_files(root, "hb").items()} == {"k": 22, "v": 22}
        _check(spark, path, "hb", range(22), 22)


def test_vacuum_keeps_what_the_live_version_reads(spark, root, tmp_path):
    path = str(tmp_path / "t")
    for i in range(3):
        _append(spark, path, i)
    spark.sql(f"CREATE BLOOM INDEX hv ON parquet.`{path}` FOR COLUMNS (k, v)")
    for i in range(3, 6):
        _append(spark, path, i)
        spark.sql("REFRESH BLOOM INDEX hv")
    data_dir = os.path.join(root, "hv", "data")
    live = _live(root, "hv")["data"]
    # Every version's folder is still there (replaced less than the retention ago) ...
    assert len(os.listdir(data_dir)) == 4
    assert spark.sql("VACUUM BLOOM INDEX hv").collect() == [(0, 0, 0)]
    # ... and the live one reads the earlier ones' probe files: a VACUUM with no retention keeps them.
    needed = sorted(d.split("/")[1] for d in [live["dir"]] + live.get("reused", []))
    assert len(needed) == 4
    assert spark.sql("VACUUM BLOOM INDEX hv RETAIN 0 HOURS").collect()[0][:2] == (0, 0)
    # After OPTIMIZE the live version reads its own folder only: the rest goes.
    spark.sql("OPTIMIZE BLOOM INDEX hv")
    [(folders, freed, entries)] = spark.sql("VACUUM BLOOM INDEX hv RETAIN 0 HOURS").collect()
    assert folders == 4 and freed > 0
    # The log keeps the entries from the last replaced version on: the OPTIMIZE's two.
    log = log_entries(root, "hv")
    assert entries > 0 and [(e["state"], e["operation"]) for e in log] == [("REFRESHING", "OPTIMIZE"), ("ACTIVE", "OPTIMIZE")]
    assert log[1]["version"] == log[0]["version"] + 1
    assert os.listdir(data_dir) == [_live(root, "hv")["data"]["dir"].split("/")[1]]
    _check(spark, path, "hv", range(6), 6)


def test_vacuum_and_optimize_refuse_bad_input(spark, root):
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_NOT_FOUND"):
        spark.sql("VACUUM BLOOM INDEX nope")
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_NOT_FOUND"):
        spark.sql("OPTIMIZE BLOOM INDEX nope")
    for bad in ("VACUUM BLOOM INDEX x RETAIN -1 HOURS", "VACUUM BLOOM INDEX x RETAIN 2 DAYS",
                "VACUUM BLOOM INDEX x RETAIN", "OPTIMIZE BLOOM INDEX", "OPTIMIZE BLOOM INDEX x FULL"):
        with pytest.raises(ParseException):
            spark.sql(bad)


def test_python_optimize_and_vacuum(spark, root, tmp_path):
    from bloomindex import BloomIndex

    path = str(tmp_path / "t")
    for i in range(2):
        _append(spark, path, i)
    bi = BloomIndex(spark)
    bi.create("hp", path, ["k"], source_format="parquet")
    _append(spark, path, 2)
    bi.refresh("hp")
    assert bi.vacuum("hp") == {"folders_deleted": 0, "bytes_deleted": 0, "log_entries_deleted": 0}
    version = bi.optimize("hp")
    assert _live(root, "hp")["version"] == version and _live(root, "hp")["operation"] == "OPTIMIZE"
    out = bi.vacuum("hp", retain_hours=0)
    assert out["folders_deleted"] == 2 and out["bytes_deleted"] > 0
    assert bi.describe("hp")["files_indexed"] == "3"
