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

from conftest import BUCKET, ROOT, TEST_JAR, s3_jars, s3a_conf

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


def _describe(spark, name):
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}


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
    return {k[len(prefix) + 1:].split("/")[1] for k in _keys(moto, prefix + "/data/")}


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
    for where in ["k = 123", "s = 's77'", "k IN (5, 505)", "k = 100000"]:
        on, read_on = _query(spark, src, where)
        off, read_off = _query(spark, src, where, pruning=False)
        assert on == off, where
        assert read_off == all_files
        expected = 0 if where == "k = 100000" else (2 if "IN" in where else 1)
        assert len(read_on) == expected, (where, read_on)

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
    d = _describe(spark, "ev")
    assert d["files_indexed"] == str(N_FILES + 2) and d["files_new_or_changed"] == "0" and d["active_version"] == "3", d
    on, read_on = _query(spark, src, f"k = {KEYS + 150}")
    off, _ = _query(spark, src, f"k = {KEYS + 150}", pruning=False)
    assert on == off == [(KEYS + 150, f"s{KEYS + 150}")]
    assert len(read_on) == 1 and read_on <= new_files
    # Only the live data folder is left.
    assert _data_folders(moto, prefix) == {log[3]["data"]["dir"].split("/")[1]}

    spark.sql("DROP BLOOM INDEX ev")
    assert _log(moto, prefix)[4]["state"] == "DELETED"
    assert _data_folders(moto, prefix) == set()
    assert [r for r in spark.sql("SHOW BLOOM INDEXES").collect() if r.name == "ev"] == []
    _, read_after = _query(spark, src, "k = 123")
    assert read_after == all_files | new_files
    with pytest.raises(AnalysisException, match="does not exist"):
        spark.sql("DESCRIBE BLOOM INDEX ev").collect()
