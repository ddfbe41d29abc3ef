"""Helpers for the index tests: a fresh index root per test, reading an index's own files."""

from __future__ import annotations

import contextlib
import glob
import json
import os

import bloomindex
import bloomindex.filters


def log_entries(root: str, name: str) -> list[dict]:
    files = sorted(glob.glob(os.path.join(root, name, "_log", "*.json")))
    return [json.load(open(f)) for f in files]


def index_rows(spark, root: str, name: str) -> list:
    """The rows of the index's current ACTIVE data (file_path, ..., column, ..., filter,
    built_from), as the JVM reads them for REFRESH: from the Parquet rows, or in the ``probes``
    layout from the probe files, each filter put back together."""
    from pyspark.sql import DataFrame

    jdf = spark._jvm.bloomindex.build.IndexStore.activeRows(spark._jsparkSession, os.path.join(root, name))
    return DataFrame(jdf, spark).collect()


def table_files(spark, table: str) -> set[str]:
    return {os.path.realpath(p.replace("file://", "").replace("file:", ""))
            for p in spark.table(table).inputFiles()}


def row_path(p: str) -> str:
    return os.path.realpath(p.replace("file://", "").replace("file:", ""))


def assert_filters_hold_values(spark, root: str, name: str, source_df, columns: dict[str, str],
                               algorithm: str = "sbbf") -> int:
    """Every indexed file's filter (of design ``algorithm``) answers "maybe" for every value of that file."""
    from pyspark.sql import functions as F

    rows = index_rows(spark, root, name)
    by_file = {}
    for r in rows:
        by_file[(row_path(r.file_path), r.column)] = r
    data = source_df.select(F.col("_metadata.file_path").alias("p"), *columns).collect()
    checked = 0
    for rec in data:
        for col, type_name in columns.items():
            v = rec[col]
            r = by_file[(row_path(rec.p), col)]
            if v is None:
                assert r.null_count > 0
                continue
            f = bloomindex.filters.deserialize(bytes(r.filter), algorithm)
            assert f.might_contain(v, type_name), (rec.p, col, v)
            checked += 1
    return checked


def rows_and_files(spark, path: str, where: str, pruning: bool) -> tuple[list, set[str]]:
    """`SELECT k, s` of the Parquet folder `path` under `where`, with pruning on or off: the
    sorted rows and the files the scan reads."""
    spark.conf.set("spark.bloomindex.pruning.enabled", str(pruning).lower())
    try:
        q = spark.sql(f"SELECT k, s FROM parquet.`{path}` WHERE {where}")
        return sorted(tuple(r) for r in q.collect()), {row_path(p) for p in q.inputFiles()}
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def fresh_driver(spark) -> None:
    """What a new driver would see: no index data loaded, none counted as read."""
    jvm = spark.sparkContext._jvm.bloomindex
    jvm.catalog.IndexCache.clear()
    jvm.build.IndexStore.resetLoaded()


def assert_same_with_pruning_off(spark, query) -> list:
    """Runs `query()` (a function returning a DataFrame, planned anew each call) with pruning on
    and with it off and asserts the same rows; returns them."""
    on = sorted(query().collect())
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        off = sorted(query().collect())
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    assert on == off
    return on


def _set_conf(spark, key: str, value) -> None:
    if value is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, value)


@contextlib.contextmanager
def confs(spark, settings: dict):
    """Sets session confs (None: unset) for the block and restores what was there before."""
    saved = {k: spark.conf.get(k, None) for k in settings}
    try:
        for k, v in settings.items():
            _set_conf(spark, k, v)
        yield
    finally:
        for k, v in saved.items():
            _set_conf(spark, k, v)


def read_probe_file(path: str) -> tuple[str, list[dict], dict[str, bytes]]:
    """A probe file (layouts ``probes`` and ``blocks``: a column's filters block-major), read with nothing but
    ``struct``: its algorithm, its sections, and each indexed file's bit set put back together
    from the block rows (path -> bytes, in Parquet's layout)."""
    import struct

    data = open(path, "rb").read()
    magic = b"BIXPROBE"
    assert data[:8] == magic and data[-8:] == magic
    fmt, footer_len = struct.unpack(">ii", data[-16:-8])
    assert fmt in (1, 2)
    footer = memoryview(data)[len(data) - 16 - footer_len:len(data) - 16]
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, footer, pos)
        pos += struct.calcsize(fmt)
        return v

    (alg_len,) = take(">H")
    algorithm = bytes(footer[pos:pos + alg_len]).decode()
    pos += alg_len
    (n_sections,) = take(">i")
    sections = [dict(zip(("offset", "block_bytes", "blocks", "files"), take(">qiii"))) for _ in range(n_sections)]
    (n_files,) = take(">i")
    bitsets = {}
    for _ in range(n_files):
        (plen,) = take(">i")
        p = bytes(footer[pos:pos + plen]).decode()
        pos += plen
        _size, _mtime, _rows, _nulls, section, position, _k = take(">qqqqiib")
        if fmt == 2:
            _ndv, _from_footer = take(">qb")
        s = sections[section]
        bb, m = s["block_bytes"], s["files"]
        bitsets[p] = b"".join(
            data[s["offset"] + (b * m + position) * bb: s["offset"] + (b * m + position + 1) * bb]
            for b in range(s["blocks"]))
    assert pos == len(footer)
    return algorithm, sections, bitsets
