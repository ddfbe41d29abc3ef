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
    layout from the probe files, each filter put back together. On Spark Connect (no JVM in
    this process) the probe files are read in Python (:func:`probe_rows`)."""
    from pyspark.sql import DataFrame

    try:
        jvm = spark._jvm
    except Exception:  # Spark Connect
        active = [e for e in log_entries(root, name) if e["state"] == "ACTIVE"][-1]
        data_dir = os.path.join(root, name, active["data"]["dir"])
        if active["data"].get("layout") == "probes":
            return probe_rows(data_dir)
        return spark.read.parquet(data_dir).collect()
    jdf = jvm.bloomindex.layout.IndexStore.activeRows(spark._jsparkSession, os.path.join(root, name))
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
    jvm.layout.IndexStore.resetLoaded()


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


def batched_answers(spark, source: str, wheres: list[str]) -> list[list[int]]:
    """For each predicate of `wheres`, the sorted `hash(*)` of the rows of `SELECT * FROM source
    WHERE w`, all in one query: a UNION ALL of one branch per predicate, each branch a scan of its
    own, which the pruning rule decides on its own. One Spark job of one task instead of a job
    per predicate: the differential suites run several predicates in the time of one."""
    branches = " UNION ALL ".join(
        f"SELECT {i} AS q__, hash(*) AS h__ FROM {source} WHERE {w}" for i, w in enumerate(wheres))
    out: list[list[int]] = [[] for _ in wheres]
    # One task reads every branch's files (a tiny table: the tasks' own cost is what counts here).
    for r in spark.sql(branches).coalesce(1).collect():
        out[r[0]].append(r[1])
    return [sorted(h) for h in out]


def assert_batch_same_with_pruning_off(spark, source: str, wheres: list[str]) -> list[list[int]]:
    """`batched_answers` with pruning on and with it off, asserted equal predicate by predicate
    (the failing predicate named); returns the answers."""
    on = batched_answers(spark, source, wheres)
    with confs(spark, {"spark.bloomindex.pruning.enabled": "false"}):
        off = batched_answers(spark, source, wheres)
    for w, a, b in zip(wheres, on, off):
        assert a == b, f"WHERE {w}: pruning on {len(a)} rows {a[:5]}..., off {len(b)} rows {b[:5]}..."
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


def assert_icu_change_reads_what_was_skipped(spark, table: str) -> None:
    """Over `table` (k INT, s STRING: rows (1, 'ΑΣ_Β'), (2, 'zzz'), (3, 'yyy'), one a file; an
    index on s USING TOKENS with case = 'lower'): a DataFrame planned under ICU's folding
    (explained first) and run under the JDK's returns with the index on what it returns off.
    lower('ΑΣ_Β') is 'ασ_β' with the JDK, 'ας_β' with ICU, so the filter (built with ICU's
    folding) lacks the JDK's token and the plan skips every file. A plan made and run under
    the same setting keeps its pruning."""
    from bloomindex import BloomIndex

    icu, pruning = "spark.sql.icu.caseMappings.enabled", "spark.bloomindex.pruning.enabled"
    with confs(spark, {icu: None, pruning: None}):
        for where in ("lower(s) = 'ασ_β'", "s ILIKE 'ασ_β'"):
            answers = {}
            for on in ("false", "true"):
                spark.conf.set(pruning, on)
                spark.conf.unset(icu)
                df = spark.sql(f"SELECT k FROM {table} WHERE {where}")
                df.explain()  # planned with ICU's folding: nothing holds 'ας_β'
                spark.conf.set(icu, "false")
                answers[on] = sorted(r.k for r in df.collect())
            assert answers["false"] == [1] and answers["true"] == answers["false"], (where, answers)
        spark.conf.unset(icu)
        spark.conf.set(pruning, "true")
        df = spark.sql(f"SELECT k FROM {table} WHERE lower(s) = 'zzz'")
        df.explain()
        assert sorted(r.k for r in df.collect()) == [2]
        assert "kept 1/3 files" in BloomIndex(spark).explain(df)


_CRC32C_TABLE: list[int] = []


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli), as ``java.util.zip.CRC32C`` computes it: the checksums of the index's
    files (log format 6 on). Table-driven, pure Python: for tests and tools, not for speed."""
    if not _CRC32C_TABLE:
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            _CRC32C_TABLE.append(c)
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def probe_file_entries(path: str) -> tuple[str, list[dict], list[dict]]:
    """A probe file (layouts ``probes`` and ``blocks``: a column's filters block-major), read with
    nothing but ``struct``: its algorithm, its sections, and per indexed file its footer entry
    (path, size, mtime, rows, nulls, hash count; format 2: ndv, from footer) with its bit set put
    back together from the block rows (``bits``, in Parquet's layout). Format 3 (log format 6):
    the footer's checksum and every block row's are checked (an AssertionError if one fails).
    Format 4: the entries compact (the paths' shared folder once, varints). Format 5: the footer's
    checksum covers the column's name too (the file's folder names it)."""
    import struct

    data = open(path, "rb").read()
    magic = b"BIXPROBE"
    assert data[:8] == magic and data[-8:] == magic
    fmt, footer_len = struct.unpack(">ii", data[-16:-8])
    assert fmt in (1, 2, 3, 4, 5)
    end = len(data) - 16 - (4 if fmt >= 3 else 0)
    footer = memoryview(data)[end - footer_len:end]
    if fmt >= 3:
        (want,) = struct.unpack(">I", data[end:end + 4])
        covered = bytes(footer) + data[-16:-8]
        if fmt >= 5:
            # Format 5: the column's name too, the one its folder (`column=<escaped name>`) names.
            from urllib.parse import unquote

            folder = os.path.basename(os.path.dirname(path))
            assert folder.startswith("column="), path
            name = unquote(folder[len("column="):]).encode()
            covered += struct.pack(">i", len(name)) + name
        assert crc32c(covered) == want, f"{path}: footer fails its checksum"
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
    for s in sections:
        # Format 3: each block row followed by its CRC32C.
        row = s["block_bytes"] * s["files"]
        s["stride"] = row + (4 if fmt >= 3 else 0)
        if fmt >= 3:
            for b in range(s["blocks"]):
                at = s["offset"] + b * s["stride"]
                (want,) = struct.unpack(">I", data[at + row:at + row + 4])
                assert crc32c(data[at:at + row]) == want, f"{path}: block row {b} fails its checksum"

    def varint():
        # Format 4: 7 bits a byte, low first (Parquet's Thrift compact protocol).
        nonlocal pos
        v = shift = 0
        while True:
            b = footer[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v
            shift += 7

    def zigzag():
        v = varint()
        return (v >> 1) ^ -(v & 1)

    folder = ""
    if fmt >= 4:
        # The folder every path of the file shares, then compact entries.
        (flen,) = take(">i")
        folder = bytes(footer[pos:pos + flen]).decode()
        pos += flen
    (n_files,) = take(">i")
    entries = []
    for _ in range(n_files):
        plen = varint() if fmt >= 4 else take(">i")[0]
        e = {"path": folder + bytes(footer[pos:pos + plen]).decode()}
        pos += plen
        if fmt >= 4:
            e.update(size=zigzag(), mtime=zigzag(), rows=zigzag(), nulls=zigzag(), section=varint(), position=varint())
            e.update(num_hashes=take(">b")[0], ndv=zigzag(), from_footer=take(">b")[0])
        else:
            e.update(zip(("size", "mtime", "rows", "nulls", "section", "position", "num_hashes"), take(">qqqqiib")))
            e.update(zip(("ndv", "from_footer"), take(">qb") if fmt >= 2 else (-1, 0)))
        s = sections[e["section"]]
        bb, m = s["block_bytes"], s["files"]
        e["bits"] = b"".join(
            data[s["offset"] + b * s["stride"] + e["position"] * bb: s["offset"] + b * s["stride"] + (e["position"] + 1) * bb]
            for b in range(s["blocks"]))
        entries.append(e)
    assert pos == len(footer)
    return algorithm, sections, entries


def read_probe_file(path: str) -> tuple[str, list[dict], dict[str, bytes]]:
    """:func:`probe_file_entries` as (algorithm, sections, path -> bit set)."""
    algorithm, sections, entries = probe_file_entries(path)
    return algorithm, sections, {e["path"]: e["bits"] for e in entries}


def probe_rows(data_dir: str) -> list:
    """The rows of a ``probes`` version's data folder, read from its probe files in Python (as
    the JVM's ``IndexStore.rows`` reads them): each filter in its design's serialized form."""
    from pyspark.sql import Row

    from bloomindex._headers import classic_header, murmur3_header, sbbf_header

    def serialized(algorithm, bits, k):
        if algorithm == "sbbf":
            return sbbf_header(len(bits)) + bits
        if algorithm == "sbbf-murmur3":
            return murmur3_header(len(bits)) + bits
        return classic_header(len(bits) * 8, k) + bits

    # Probe files an incremental refresh kept from earlier versions: listed in the summary,
    # relative to the index's folder.
    index_dir = os.path.dirname(os.path.dirname(data_dir))
    summary_path = os.path.join(data_dir, "_summary.json")
    kept = {}
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            for column, c in json.load(f)["columns"].items():
                kept[column] = [os.path.join(index_dir, rel) for rel in sorted(c.get("reusedProbeFiles", {}))]
    rows = []
    for folder in sorted(glob.glob(os.path.join(data_dir, "column=*"))):
        column = os.path.basename(folder)[len("column="):]
        for p in sorted(glob.glob(os.path.join(folder, "_*.probe"))) + kept.get(column, []):
            algorithm, _, entries = probe_file_entries(p)
            rows += [Row(file_path=e["path"], file_size=e["size"], modification_time=e["mtime"], column=column,
                         row_count=e["rows"], null_count=e["nulls"], ndv=e["ndv"],
                         filter=bytearray(serialized(algorithm, e["bits"], e["num_hashes"])),
                         built_from="footer" if e["from_footer"] else "data") for e in entries]
    return rows


def entry_text(entry: dict) -> str:
    """A log entry's text as the JVM writes it (tests that rewrite an entry as an earlier build
    wrote it): compact JSON, and from log format 6 on sealed with its CRC32C as the last field
    (``"crc32c":"xxxxxxxx"`` over the text before the 8 digits); a stale checksum field is dropped."""
    entry = {k: v for k, v in entry.items() if k != "crc32c"}
    text = json.dumps(entry, separators=(",", ":"))
    if entry.get("formatVersion", 0) < 6:
        return text
    body = text[:-1] + ',"crc32c":"'
    return body + "%08x" % crc32c(body.encode()) + '"}'


def native_kernel(vector_bits: int) -> str:
    """The SBBF kernel a JVM whose preferred vectors have `vector_bits` bits runs: the Vector
    API one needs 256-bit integer vectors in hardware (AVX2; not 128-bit NEON)."""
    return "vector" if vector_bits >= 256 else "scalar"
