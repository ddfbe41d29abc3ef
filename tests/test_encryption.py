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


def test_without_keys_the_index_is_skipped_and_answers_stay_right(spark, root, keys, tmp_path):
    path = str(tmp_path / "enc")
    _write_encrypted(spark, path, plaintext_footer=True)
    bi = bloomindex.BloomIndex(spark)
    bi.create("enc_nokeys", path, ["id", "name"], source_format="parquet")
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
    # Back with the keys, the index prunes again.
    assert len(spark.read.parquet(path).select("name").filter(q).inputFiles()) < FILES


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
