"""Indexes of columns encrypted with Parquet modular encryption (issue 7).

The keys live in bloomindex.testing.InMemoryKms (parquet-hadoop's test-only InMemoryKMS is not
in the PySpark wheel). Every test sets the crypto settings on the shared session and restores
them after.
"""

from __future__ import annotations

import base64
import glob
import os

import pyarrow.parquet as pq
import pytest
from pyspark.errors import AnalysisException

import bloomindex
from index_helpers import assert_same_with_pruning_off

KEYS = {"footk": bytes(range(16)), "colk": bytes(range(16, 32)), "otherk": bytes(range(32, 48))}
CRYPTO = {
    "parquet.crypto.factory.class": "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory",
    "parquet.encryption.kms.client.class": "bloomindex.testing.InMemoryKms",
    "parquet.encryption.key.list": ", ".join(f"{k}: {base64.b64encode(v).decode()}" for k, v in KEYS.items()),
}
FILES = 6


def _set(spark, settings: dict[str, str | None]) -> dict[str, str | None]:
    """Sets (or unsets, for None) session settings; returns the previous values."""
    before = {}
    for k, v in settings.items():
        before[k] = spark.conf.get(k, None)
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)
    return before


@pytest.fixture()
def keys(spark):
    """The session can encrypt and decrypt (crypto factory + in-memory KMS)."""
    before = _set(spark, CRYPTO)
    yield
    _set(spark, before)


def _no_keys(spark):
    return _set(spark, {k: None for k in CRYPTO})


def _write_encrypted(spark, path: str, plaintext_footer: bool = False):
    """FILES files; `id` encrypted with colk, `name` and `v` plaintext; the keys are options of this write only."""
    from pyspark.sql import functions as F

    df = (spark.range(0, FILES * 300, 1, FILES)
          .select(F.col("id"), F.concat(F.lit("n"), (F.col("id") % 997).cast("string")).alias("name"),
                  (F.col("id") * 3).alias("v")))
    (df.write.mode("overwrite")
       .option("parquet.encryption.column.keys", "colk:id")
       .option("parquet.encryption.footer.key", "footk")
       .option("parquet.encryption.plaintext.footer", str(plaintext_footer).lower())
       .parquet(path))


def _data_files(root: str, name: str, sub: str = "") -> dict[str, list[str]]:
    """Index Parquet files by indexed column (`column=<c>` folders)."""
    out = {}
    for f in glob.glob(os.path.join(root, name, "data", "*", sub, "column=*", "*.parquet")):
        out.setdefault(os.path.basename(os.path.dirname(f)).split("=", 1)[1], []).append(f)
    return out


def test_index_of_an_encrypted_column_is_encrypted_and_prunes(spark, root, keys, tmp_path):
    path = str(tmp_path / "enc")
    _write_encrypted(spark, path)
    bi = bloomindex.BloomIndex(spark)
    bi.create("enc_idx", path, ["id", "name"], source_format="parquet", global_filter=True)
    d = bi.describe("enc_idx")
    # Found from the footers' key metadata: the session does not name the column.
    assert d["encryption"] == "id (key colk)"
    assert d["damage"] == "none" and d["files_indexed"] == str(FILES)
    files = _data_files(root, "enc_idx")
    assert set(files) == {"id", "name"}
    stored = spark.read.parquet(os.path.join(root, "enc_idx", "data")).collect()
    id_filters = [bytes(r.filter) for r in stored if r.column == "id"]
    assert len(id_filters) == FILES
    for f in files["id"]:
        raw = open(f, "rb").read()
        assert raw[:4] == b"PARE" and raw[-4:] == b"PARE"      # encrypted footer
        assert not any(flt[-64:] in raw for flt in id_filters)  # no filter bits in the clear
        with pytest.raises(Exception):
            pq.read_table(f)
    for f in files["name"]:                                      # a plaintext column stays plaintext
        assert pq.read_table(f).num_rows >= 1
    globals_ = _data_files(root, "enc_idx", "_global")
    assert open(globals_["id"][0], "rb").read()[:4] == b"PARE"
    assert pq.read_table(globals_["name"][0]).num_rows == 1

    # Pruning with the keys, and pruning on == off.
    df = spark.read.parquet(path)
    total = len(df.inputFiles())
    q = df.filter("id = 1234")
    assert q.count() == 1 and len(q.inputFiles()) == 1 < total
    for where in ["id IN (3, 999, 1501, 100000)", "id = 7 OR name = 'n5'", "id = -1"]:
        assert_same_with_pruning_off(spark, lambda: df.filter(where))

    # The global filter (joins, bloom_might_contain) decrypts with the keys too.
    assert spark.sql("SELECT bloom_might_contain('enc_idx', 'id', CAST(1234 AS BIGINT))").head()[0] is True

    # Incremental refresh re-encrypts the carried rows.
    more = str(tmp_path / "more")
    _write_encrypted(spark, more)
    for f in glob.glob(os.path.join(more, "*.parquet"))[:1]:
        os.rename(f, os.path.join(path, "part-99999-extra.parquet"))
    bi.refresh("enc_idx")
    d = bi.describe("enc_idx")
    assert d["files_indexed"] == str(FILES + 1) and d["damage"] == "none"
    assert all(open(f, "rb").read()[:4] == b"PARE" for f in _data_files(root, "enc_idx")["id"])
    assert len(spark.read.parquet(path).filter("id = 1234").inputFiles()) <= 2


@pytest.mark.parametrize("route", ["driver", "job"])
def test_without_keys_the_index_is_skipped_and_answers_stay_right(spark, root, keys, tmp_path, route):
    """On either route of the encrypted index's data (the driver, or Spark jobs past
    `load.driverMaxFiles`); and a read refused for want of keys is not damage: DESCRIBE, with
    the keys back, says none."""
    path = str(tmp_path / "enc")
    _write_encrypted(spark, path, plaintext_footer=True)
    bi = bloomindex.BloomIndex(spark)
    bi.create("enc_nokeys", path, ["id", "name"], source_format="parquet")
    if route == "job":
        spark.conf.set("spark.bloomindex.load.driverMaxFiles", "0")
    spark.sparkContext._jvm.bloomindex.catalog.IndexCache.clear()
    q = "name = 'n5'"
    with_keys = spark.read.parquet(path).select("name").filter(q)
    assert len(with_keys.inputFiles()) < FILES
    expected = with_keys.count()
    before = _no_keys(spark)
    try:
        # Plaintext footer: the unencrypted columns stay readable, and so does the index of
        # `name` (one folder per column, issue 15: only `id`'s index files are encrypted).
        df = spark.read.parquet(path).select("name").filter(q)
        assert df.count() == expected
        assert len(df.inputFiles()) < FILES
        # The index of `id` is not: a query on it is planned without it (every file kept), and
        # the warning says why: encrypted, not damaged (the reader skips files it cannot read).
        assert len(spark.read.parquet(path).filter("id = 1234").inputFiles()) == FILES
        warnings = list(spark.sparkContext._jvm.bloomindex.log.IndexLog.warnings())
        assert any("enc_nokeys" in w and "cannot decrypt" in w for w in warnings), warnings
    finally:
        _set(spark, before)
    try:
        # Back with the keys, the index prunes again, and nothing of it was taken for damage.
        assert len(spark.read.parquet(path).select("name").filter(q).inputFiles()) < FILES
        assert len(spark.read.parquet(path).filter("id = 1234").inputFiles()) < FILES
        d = dict(tuple(r) for r in spark.sql("DESCRIBE BLOOM INDEX enc_nokeys").collect())
        assert d["damage"] == "none", d["damage"]
    finally:
        spark.conf.unset("spark.bloomindex.load.driverMaxFiles")


def test_refused_without_a_crypto_factory_unless_allowed(spark, root, keys, tmp_path):
    path = str(tmp_path / "enc")
    _write_encrypted(spark, path, plaintext_footer=True)
    bi = bloomindex.BloomIndex(spark)
    before = _no_keys(spark)
    try:
        # The footers (plaintext) say `id` is encrypted; this session could not encrypt its index.
        with pytest.raises(AnalysisException, match="allow_unencrypted_index") as e:
            bi.create("refused", path, ["id"], source_format="parquet")
        assert "encrypted" in str(e.value) and "id" in str(e.value)
        assert "refused" not in [r.name for r in bi.list().collect()]
        # Only the plaintext column: nothing to protect.
        bi.create("plain_ok", path, ["name"], source_format="parquet")
        assert bi.describe("plain_ok")["encryption"] == "none"

        # The session says `v` is to be encrypted but has no factory: refused, or plaintext if allowed.
        plain = str(tmp_path / "plain")
        spark.range(0, 1000, 1, 4).selectExpr("id AS v").write.parquet(plain)
        spark.conf.set("parquet.encryption.column.keys", "otherk:v")
        with pytest.raises(AnalysisException, match="crypto factory"):
            bi.create("refused2", plain, ["v"], source_format="parquet")
        spark.sql(f"CREATE BLOOM INDEX allowed ON parquet.`{plain}` FOR COLUMNS (v) "
                  "OPTIONS (allow_unencrypted_index = true)")
        assert bi.describe("allowed")["encryption"] == "none"
        assert len(spark.read.parquet(plain).filter("v = 5").inputFiles()) == 1
        bi.refresh("allowed", mode="full")   # the choice is kept in the log
        with pytest.raises(AnalysisException, match="allow_unencrypted_index"):
            spark.sql(f"CREATE BLOOM INDEX bad ON parquet.`{plain}` FOR COLUMNS (v) "
                      "OPTIONS (allow_unencrypted_index = maybe)")
    finally:
        spark.conf.unset("parquet.encryption.column.keys")
        _set(spark, before)


def test_session_column_keys_encrypt_the_index(spark, root, keys, tmp_path):
    # Files written with the session's settings: the session names the column, the files agree.
    path = str(tmp_path / "sess")
    before = _set(spark, {"parquet.encryption.column.keys": "otherk:v", "parquet.encryption.footer.key": "footk"})
    try:
        spark.range(0, 2000, 1, 4).selectExpr("id AS v", "id % 7 AS w").write.parquet(path)
        bloomindex.BloomIndex(spark).create("sess_idx", path, ["v", "w"], source_format="parquet")
        assert bloomindex.BloomIndex(spark).describe("sess_idx")["encryption"] == "v (key otherk)"
        assert len(spark.read.parquet(path).filter("v = 1500").inputFiles()) == 1
    finally:
        _set(spark, before)
    assert all(open(f, "rb").read()[:4] == b"PARE" for f in _data_files(root, "sess_idx")["v"])


def _move_encrypted_file_in(spark, tmp_path, path: str, name: str, start: int) -> None:
    """One file whose `id` is encrypted with colk (rows start..start+99), moved into `path` as `name`."""
    from pyspark.sql import functions as F

    enc = str(tmp_path / f"enc-{start}")
    (spark.range(start, start + 100, 1, 1).select("id", (F.col("id") % 7).alias("w")).write
       .option("parquet.encryption.column.keys", "colk:id").option("parquet.encryption.footer.key", "footk")
       .parquet(enc))
    (f,) = glob.glob(os.path.join(enc, "*.parquet"))
    os.rename(f, os.path.join(path, name))


def _no_filter_in_the_clear(root: str, name: str, spark) -> None:
    """No index file anyone can read without a key holds an `id` filter or checksum of it."""
    stored = [bytes(r.filter) for r in spark.read.parquet(os.path.join(root, name, "data")).collect() if r.column == "id"]
    assert stored
    for f in glob.glob(os.path.join(root, name, "data", "**", "*"), recursive=True):
        if os.path.isfile(f) and not os.path.basename(f).startswith("."):
            raw = open(f, "rb").read()
            assert not any(flt[-64:] in raw for flt in stored), f


def test_an_encrypted_file_outside_the_footer_sample_encrypts_the_index(spark, root, keys, tmp_path):
    """CREATE samples 16 footers; a file the sample misses that encrypts `id` must still make the
    index of `id` encrypted (else its filter would be readable with no key). Then a REFRESH that
    brings the first encrypted file into a plaintext index encrypts the new version."""
    from pyspark.sql import functions as F

    import pyarrow as pa

    path = str(tmp_path / "mixed")
    os.makedirs(path)
    # 200 plaintext files (pyarrow: quicker than 200 Spark tasks) and one encrypted: the sample
    # reads 16 footers spread over the listing (in directory order), so it misses that one in
    # about 92% of runs; the index must be encrypted in all of them.
    for i in range(200):
        ids = pa.array(range(i * 20, i * 20 + 20), pa.int64())
        pq.write_table(pa.table({"id": ids, "w": pa.compute.remainder(ids, 7)}), os.path.join(path, f"part-{i:05d}.parquet"))
    _move_encrypted_file_in(spark, tmp_path, path, "part-99999-late.parquet", 100000)
    bi = bloomindex.BloomIndex(spark)
    bi.create("mixed_idx", path, ["id"], source_format="parquet")
    d = bi.describe("mixed_idx")
    assert d["encryption"] == "id (key colk)" and d["files_indexed"] == "201"
    assert all(open(f, "rb").read()[:4] == b"PARE" for f in _data_files(root, "mixed_idx")["id"])
    _no_filter_in_the_clear(root, "mixed_idx", spark)
    df = spark.read.parquet(path)
    assert_same_with_pruning_off(spark, lambda: df.filter("id IN (100005, 17, 100150)"))
    read = df.filter("id = 100005").inputFiles()
    assert any(f.endswith("part-99999-late.parquet") for f in read) and len(read) <= 10  # pruned (fpp 1%)

    # A plaintext index, then an encrypted file appended and refreshed.
    path2 = str(tmp_path / "later")
    spark.range(0, 600, 1, 6).select("id", (F.col("id") % 7).alias("w")).write.parquet(path2)
    bi.create("later_idx", path2, ["id"], source_format="parquet")
    assert bi.describe("later_idx")["encryption"] == "none"
    _move_encrypted_file_in(spark, tmp_path, path2, "part-99999-late.parquet", 200000)
    bi.refresh("later_idx")
    d = bi.describe("later_idx")
    assert d["encryption"] == "id (key colk)" and d["files_indexed"] == "7" and d["damage"] == "none"
    latest = max(glob.glob(os.path.join(root, "later_idx", "data", "*")), key=os.path.getmtime)
    ids = glob.glob(os.path.join(latest, "column=id", "*.parquet"))
    assert ids and all(open(f, "rb").read()[:4] == b"PARE" for f in ids)
    df2 = spark.read.parquet(path2)
    assert_same_with_pruning_off(spark, lambda: df2.filter("id IN (200005, 17, 1000)"))


def test_an_encrypted_global_filter_keeps_its_checksum_and_count_encrypted(spark, root, keys, tmp_path):
    """The global filter's CRC32C would confirm a guessed set of values, and its distinct count
    tells how many there are: both only in the encrypted file, not in the clear nor in the log."""
    import json
    import struct

    path = str(tmp_path / "g")
    (spark.range(0, 600, 1, 3).selectExpr("id", "id % 3 AS k").write
       .option("parquet.encryption.column.keys", "colk:id,k").option("parquet.encryption.footer.key", "footk")
       .parquet(path))
    bi = bloomindex.BloomIndex(spark)
    bi.create("gck_idx", path, ["k"], source_format="parquet", global_filter=True)
    d = bi.describe("gck_idx", extended=True)
    assert d["encryption"] == "k (key colk)" and d["column.k.global_ndv"] == "encrypted"
    (g_file,) = _data_files(root, "gck_idx", "_global")["k"]
    (g,) = spark.read.parquet(os.path.dirname(os.path.dirname(g_file))).collect()
    raw = open(g_file, "rb").read()
    assert raw[:4] == b"PARE"
    assert struct.pack("<i", g.checksum) not in raw and bytes(g.filter)[-32:] not in raw
    logs = sorted(glob.glob(os.path.join(root, "gck_idx", "_log", "*.json")))
    assert "k" not in json.load(open(logs[-1]))["data"]["globalNdv"]
    # A refresh sizes from the encrypted count, and the join filter still answers.
    spark.range(600, 700, 1, 1).selectExpr("id", "id % 5 AS k").write.mode("append") \
        .option("parquet.encryption.column.keys", "colk:id,k").option("parquet.encryption.footer.key", "footk") \
        .parquet(path)
    bi.refresh("gck_idx")
    assert bi.describe("gck_idx")["damage"] == "none"
    assert spark.sql("SELECT bloom_might_contain('gck_idx', 'k', CAST(4 AS BIGINT))").head()[0] is True

    def global_ndv() -> int:
        latest = max(glob.glob(os.path.join(root, "gck_idx", "data", "*")), key=os.path.getmtime)
        (row,) = spark.read.parquet(os.path.join(latest, "_global")).collect()
        return row.ndv

    # The running count (3 + the new file's 5: an upper bound), in the encrypted row, refresh after refresh.
    assert global_ndv() == 8
    for f in glob.glob(os.path.join(path, "*.parquet"))[:1]:
        os.remove(f)
    bi.refresh("gck_idx")
    assert global_ndv() == 8
