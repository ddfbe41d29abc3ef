"""The index build, path by path: each file's filter equals a reference built here from that
file's own values (hashed by the JVM's row hasher, counted, sized and filled in Python), for
columnar and row reads, files Spark splits over tasks, files read twice (over the distinct
limit), and filters taken from Parquet footers."""

from __future__ import annotations

import contextlib
import glob
import os
import random

import numpy as np
import pytest
from pyspark.sql import functions as F, types as T

import bloomindex
from bloomindex.parquet import read_bloom_filter, read_footer
from index_helpers import assert_filters_hold_values, index_rows, row_path
from typedata import COLUMNS, rows


@contextlib.contextmanager
def conf(spark, **settings):
    keys = {k.replace("__", "."): v for k, v in settings.items()}
    for k, v in keys.items():
        spark.conf.set(k, str(v))
    try:
        yield
    finally:
        for k in keys:
            spark.conf.unset(k)


def _describe(spark, name):
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}


def _data_files(path: str, ext: str) -> list[str]:
    return sorted(glob.glob(os.path.join(path, "**", f"*.{ext}"), recursive=True))


def _hashes(spark, jvm_api, reader, file: str, column: str) -> tuple[np.ndarray, int]:
    """The file's non-null hashes of `column` (JVM row hasher) and its row count."""
    df = reader.load(file)
    h = np.array(jvm_api.hashColumn(df._jdf, f"`{column}`"), dtype=np.int64).view(np.uint64)
    return h, df.count()


def _assert_equals_reference(spark, jvm_api, root, name, reader, columns, fpp=0.01, power_of_two=False):
    """Every (file, column) row of the index equals the filter built here from the file's values."""
    rows_ = index_rows(spark, root, name)
    assert {r.column for r in rows_} == set(columns)
    for r in rows_:
        h, n_rows = _hashes(spark, jvm_api, reader, r.file_path, r.column)
        distinct = np.unique(h)
        if n_rows == 0:
            expected = bloomindex.Sbbf(32)
        else:
            expected = bloomindex.Sbbf(bloomindex.optimal_num_bytes(max(len(distinct), 1), fpp, power_of_two))
            expected.insert_hashes(distinct)
        where = f"{row_path(r.file_path)} {r.column}"
        assert (r.row_count, r.null_count, r.ndv) == (n_rows, n_rows - len(h), len(distinct)), where
        assert bytes(r.filter) == expected.serialize(), where
        assert r.built_from == "data", where
    return rows_


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize("sizing", ["exact", "power-of-two"])
def test_every_type_equals_a_reference(spark, jvm_api, root, tmp_path, fmt, sizing):
    data, schema = rows(400, seed=11)
    path = str(tmp_path / "t")
    spark.createDataFrame(data, schema).repartition(3).write.format(fmt).save(path)
    names = [c for c, _, _ in COLUMNS]
    spark.sql(f"CREATE BLOOM INDEX every ON {fmt}.`{path}` FOR COLUMNS ({', '.join(names)}) "
              f"OPTIONS (sizing = '{sizing}')")
    built = _assert_equals_reference(spark, jvm_api, root, "every", spark.read.format(fmt).schema(schema), names,
                                     power_of_two=sizing == "power-of-two")
    assert len(built) == 3 * len(names)


def test_row_reads_and_split_files_equal_a_reference(spark, jvm_api, root, tmp_path):
    """CSV goes through rows; with small splits every file is read by several tasks."""
    schema = T.StructType([T.StructField("k", T.LongType()), T.StructField("s", T.StringType()),
                           T.StructField("d", T.DecimalType(12, 2)), T.StructField("t", T.TimestampType())])
    df = (spark.range(3000).select(
        F.when(F.col("id") % 13 == 0, None).otherwise(F.col("id") * 7919 % 1000).alias("k"),
        F.concat(F.lit("v"), (F.col("id") % 700).cast("string")).alias("s"),
        (F.col("id") / 8).cast("decimal(12,2)").alias("d"),
        F.timestamp_seconds(F.col("id") * 3600).alias("t")))
    path = str(tmp_path / "csv")
    df.repartition(2).write.csv(path)
    with conf(spark, spark__sql__files__maxPartitionBytes=2048, spark__sql__files__openCostInBytes=0):
        assert spark.read.schema(schema).csv(path).rdd.getNumPartitions() >= 2 * len(_data_files(path, "csv"))
        spark.sql(f"CREATE TABLE csv_t (k BIGINT, s STRING, d DECIMAL(12,2), t TIMESTAMP) USING csv LOCATION '{path}'")
        spark.sql("CREATE BLOOM INDEX rows_split ON csv_t FOR COLUMNS (k, s, d, t)")
    try:
        _assert_equals_reference(spark, jvm_api, root, "rows_split", spark.read.schema(schema).format("csv"),
                                 ["k", "s", "d", "t"])
    finally:
        spark.sql("DROP TABLE csv_t")  # drops its index too


def _row_groups(path: str) -> int:
    return sum(len(read_footer(f)[4]) for f in _data_files(path, "parquet"))


def test_split_parquet_files_equal_a_reference(spark, jvm_api, root, tmp_path):
    path = str(tmp_path / "split")
    (spark.range(6000).select((F.col("id") * 31 % 2500).alias("k"),
                              F.concat(F.lit("x"), (F.col("id") % 1800).cast("string")).alias("s"))
     .repartition(3).write.option("parquet.block.size", 4096).parquet(path))
    files = _data_files(path, "parquet")
    assert _row_groups(path) >= 4 * len(files)
    with conf(spark, spark__sql__files__maxPartitionBytes=4096, spark__sql__files__openCostInBytes=0):
        assert spark.read.parquet(path).rdd.getNumPartitions() >= 2 * len(files)
        spark.sql(f"CREATE BLOOM INDEX split ON parquet.`{path}` FOR COLUMNS (k, s)")
    _assert_equals_reference(spark, jvm_api, root, "split", spark.read.format("parquet"), ["k", "s"])


@pytest.mark.parametrize("split", [False, True])
def test_files_over_the_distinct_limit_are_read_again(spark, jvm_api, root, tmp_path, split):
    path = str(tmp_path / "big")
    (spark.range(9000).select(F.col("id").alias("many"), (F.col("id") % 10).alias("few"))
     .repartition(3).write.option("parquet.block.size", 8192).parquet(path))
    split_conf = {"spark__sql__files__maxPartitionBytes": 8192, "spark__sql__files__openCostInBytes": 0} if split else {}
    with conf(spark, spark__bloomindex__build__maxDistinctPerFile=100, **split_conf):
        spark.sql(f"CREATE BLOOM INDEX big ON parquet.`{path}` FOR COLUMNS (many, few) OPTIONS (global = true)")
    reader = spark.read.format("parquet")
    for r in index_rows(spark, root, "big"):
        h, n_rows = _hashes(spark, jvm_api, reader, r.file_path, r.column)
        distinct = len(np.unique(h))
        assert (r.row_count, r.null_count) == (n_rows, 0)
        f = bloomindex.Sbbf.deserialize(bytes(r.filter))
        assert f.check_hashes(h).all()
        if r.column == "few":  # 10 distinct: counted exactly, one read
            assert r.ndv == distinct == 10
            assert f.num_bytes == bloomindex.optimal_num_bytes(10, 0.01, power_of_two=False)
        else:  # 3000 distinct: an HLL estimate, sized with 5% headroom, filled in a second read
            assert abs(r.ndv - distinct) <= 0.05 * distinct
            assert f.num_bytes == bloomindex.optimal_num_bytes(min(-(-r.ndv * 105 // 100), n_rows), 0.01,
                                                               power_of_two=False)
    d = _describe(spark, "big")
    assert abs(int(d["column.many.global_ndv"]) - 9000) <= 450 and int(d["column.few.global_ndv"]) == 10
    globals_ = {r.column: bloomindex.Sbbf.deserialize(bytes(r.filter))
                for r in spark.read.parquet(os.path.join(root, "big", _active_dir(root, "big"), "_global")).collect()}
    assert globals_["many"].check(list(range(9000)), "bigint").all()
    assert globals_["few"].check(list(range(10)), "bigint").all()


def _active_dir(root: str, name: str) -> str:
    from index_helpers import log_entries

    return [e for e in log_entries(root, name) if e["state"] == "ACTIVE"][-1]["data"]["dir"]


def test_global_filter_of_split_files_and_after_an_incremental_refresh(spark, root, tmp_path):
    path = str(tmp_path / "g")
    spark.range(4000).select(F.col("id").alias("k")).repartition(2) \
        .write.option("parquet.block.size", 4096).parquet(path)
    with conf(spark, spark__sql__files__maxPartitionBytes=4096, spark__sql__files__openCostInBytes=0):
        spark.sql(f"CREATE BLOOM INDEX g ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (global = true)")
        spark.range(10_000, 10_500).select(F.col("id").alias("k")).repartition(1).write.mode("append").parquet(path)
        spark.sql("REFRESH BLOOM INDEX g")  # the global filter keeps its size and gets the new values
    g = spark.read.parquet(os.path.join(root, "g", _active_dir(root, "g"), "_global")).collect()[0]
    f = bloomindex.Sbbf.deserialize(bytes(g.filter))
    assert f.check(list(range(4000)) + list(range(10_000, 10_500)), "bigint").all()
    assert_filters_hold_values(spark, root, "g", spark.read.parquet(path), {"k": "bigint"})


# ---------------------------------------------------------------- the footer path

def _write_with_filters(df, path, columns, ndv=2000, fpp="0.002", block_size=None, **options):
    w = df.write.option("parquet.enable.dictionary", "false")
    if block_size:
        w = w.option("parquet.block.size", block_size)
    for c in columns:
        w = (w.option(f"parquet.bloom.filter.enabled#{c}", "true")
             .option(f"parquet.bloom.filter.expected.ndv#{c}", str(ndv))
             .option(f"parquet.bloom.filter.fpp#{c}", fpp))
    for k, v in options.items():
        w = w.option(k, v)
    w.parquet(path)


def _or_of_row_groups(file: str, column: str) -> bloomindex.Sbbf:
    groups = len(read_footer(file)[4])
    merged = read_bloom_filter(file, column, row_group=0)
    for g in range(1, groups):
        merged.merge(read_bloom_filter(file, column, row_group=g))
    return merged


def _fold(f: bloomindex.Sbbf) -> bloomindex.Sbbf:
    """The same values in half the blocks: blocks 2j and 2j+1 OR-ed into block j."""
    blocks = np.frombuffer(f.bitset_bytes(), dtype=np.uint8).reshape(-1, 2, 32)
    half = bloomindex.Sbbf(f.num_bytes // 2).serialize()
    header = half[:len(half) - f.num_bytes // 2]  # Parquet's header of a filter of half the size
    return bloomindex.Sbbf.deserialize(header + (blocks[:, 0, :] | blocks[:, 1, :]).tobytes())


def test_footer_filters_are_taken_when_every_row_group_has_one(spark, root, tmp_path):
    path = str(tmp_path / "bf")
    df = (spark.range(6000).select(
        F.when(F.col("id") % 11 == 0, None).otherwise(F.col("id") * 3 % 5000).alias("k"),
        F.concat(F.lit("s"), (F.col("id") % 1500).cast("string")).alias("s"),
        (F.col("id") % 7).alias("other")))
    _write_with_filters(df.repartition(3), path, ["k", "s"], ndv=8000, block_size=8192)
    files = _data_files(path, "parquet")
    assert _row_groups(path) >= 3 * len(files)
    spark.sql(f"CREATE BLOOM INDEX bf ON parquet.`{path}` FOR COLUMNS (k, s)")
    d = _describe(spark, "bf")
    assert (d["files_from_footer"], d["files_from_data"]) == (str(len(files)), "0")
    assert d["column.k.files_from_footer"] == d["column.s.files_from_footer"] == str(len(files))
    assert d["column.k.files_from_data"] == "0"
    source = spark.read.parquet(path)
    truth = {(row_path(r.p), c): r for c in ("k", "s") for r in source.groupBy(F.col("_metadata.file_path").alias("p"))
             .agg(F.count(F.lit(1)).alias("rows"), F.count(c).alias("nn"), F.countDistinct(c).alias("ndv")).collect()}
    for r in index_rows(spark, root, "bf"):
        t = truth[(row_path(r.file_path), r.column)]
        assert r.built_from == "footer"
        assert (r.row_count, r.null_count) == (t.rows, t.rows - t.nn)
        assert abs(r.ndv - t.ndv) <= 0.1 * t.ndv
        # The OR of the row groups' filters, halved while within the fpp: bit for bit.
        ours = bloomindex.Sbbf.deserialize(bytes(r.filter))
        theirs = _or_of_row_groups(row_path(r.file_path), r.column)
        halvings = 0
        while theirs.num_bytes > ours.num_bytes:
            theirs = _fold(theirs)
            halvings += 1
        assert ours == theirs and halvings >= 1  # the writer's filters (ndv 8000) are larger than needed
        assert bloomindex.expected_fpp(ours.num_bytes, t.ndv) <= 0.011
    assert_filters_hold_values(spark, root, "bf", source, {"k": "bigint", "s": "string"})


def test_footer_filters_of_every_type_hold_every_value(spark, root, tmp_path):
    """parquet-java hashed these values when it wrote them; our hashing of Spark's values must agree."""
    data, schema = rows(300, seed=5)
    names = [c for c, _, _ in COLUMNS]
    path = str(tmp_path / "typed_bf")
    with conf(spark, spark__sql__parquet__outputTimestampType="TIMESTAMP_MICROS"):
        _write_with_filters(spark.createDataFrame(data, schema).repartition(2), path, names, ndv=400, fpp="0.005")
    spark.sql(f"CREATE BLOOM INDEX typed_bf ON parquet.`{path}` FOR COLUMNS ({', '.join(names)})")
    d = _describe(spark, "typed_bf")
    assert {c: d[f"column.{c}.files_from_footer"] for c in names} == {c: "2" for c in names}
    assert_filters_hold_values(spark, root, "typed_bf", spark.read.parquet(path), {c: t for c, t, _ in COLUMNS})

    # Spark's defaults: INT96 timestamps; the legacy format stores small decimals as fixed-length
    # byte arrays. Those columns are built from the data, the others from the footers.
    legacy = str(tmp_path / "legacy_bf")
    with conf(spark, spark__sql__parquet__writeLegacyFormat="true"):
        _write_with_filters(spark.createDataFrame(data, schema).repartition(2), legacy, names, ndv=400, fpp="0.005")
    spark.sql(f"CREATE BLOOM INDEX legacy_bf ON parquet.`{legacy}` FOR COLUMNS ({', '.join(names)})")
    from_data = {"c_timestamp", "c_dec_5_2", "c_dec_18_4"}
    built = {(r.column, r.built_from) for r in index_rows(spark, root, "legacy_bf")}
    assert built == {(c, "data" if c in from_data else "footer") for c in names}
    assert_filters_hold_values(spark, root, "legacy_bf", spark.read.parquet(legacy), {c: t for c, t, _ in COLUMNS})


def _write_int8_annotated(spark, out: str, values: list[int]) -> None:
    """A Parquet file of one column `b`, INT32 annotated as an 8-bit integer, holding `values` as
    given (parquet-java's example writer checks no range), with a Bloom filter."""
    jvm = spark._jvm
    schema = jvm.org.apache.parquet.schema.MessageTypeParser.parseMessageType(
        "message m { required int32 b (INTEGER(8,true)); }")
    writer = (jvm.org.apache.parquet.hadoop.example.ExampleParquetWriter.builder(jvm.org.apache.hadoop.fs.Path(out))
              .withType(schema).withConf(spark._jsc.hadoopConfiguration()).withBloomFilterEnabled("b", True).build())
    factory = jvm.org.apache.parquet.example.data.simple.SimpleGroupFactory(schema)
    for v in values:
        writer.write(factory.newGroup().append("b", v))
    writer.close()


def test_a_tinyint_footer_filter_is_not_taken_for_values_spark_reads_narrowed(spark, root, tmp_path):
    # A malformed file: 300 in a column annotated as an 8-bit integer. Spark reads it as the byte
    # (byte) 300 = 44; the footer's filter holds 300. Built from the footer, `b = 44` skipped the
    # file; the statistics show the value out of range, so the file is built from its data.
    table = tmp_path / "narrow"
    table.mkdir()
    _write_int8_annotated(spark, str(table / "part-0.parquet"), [1, 300, 5])
    _write_int8_annotated(spark, str(table / "part-1.parquet"), [7, 8, 9])
    spark.sql(f"CREATE BLOOM INDEX narrow ON parquet.`{table}` FOR COLUMNS (b)")
    built = {os.path.basename(row_path(r.file_path)): r.built_from for r in index_rows(spark, root, "narrow")}
    assert built == {"part-0.parquet": "data", "part-1.parquet": "footer"}
    with conf(spark, spark__sql__parquet__filterPushdown="false"):
        q = lambda: spark.read.parquet(str(table)).where("b = 44").select("b")
        with conf(spark, spark__bloomindex__pruning__enabled="false"):
            off = sorted(r.b for r in q().collect())
        assert off == [44]
        assert sorted(r.b for r in q().collect()) == off


def _rewrite(spark, out: str, parts: list[tuple[str, int, set[str]]]) -> None:
    """A Parquet file made of row groups copied from others (file, row group, columns whose
    Bloom filter is left out), with parquet-java's own writer."""
    jvm = spark._jvm
    hconf = spark._jsc.hadoopConfiguration()
    Path = jvm.org.apache.hadoop.fs.Path
    Reader = jvm.org.apache.parquet.hadoop.ParquetFileReader
    first = Reader.open(hconf, Path(parts[0][0]))
    meta = first.getFooter().getFileMetaData()
    schema, kv = meta.getSchema(), meta.getKeyValueMetaData()
    first.close()
    writer = jvm.org.apache.parquet.hadoop.ParquetFileWriter(hconf, schema, Path(out))
    writer.start()
    for src, g, drop in parts:
        reader = Reader.open(hconf, Path(src))
        stream = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(Path(src), hconf).newStream()
        block = reader.getRowGroups().get(g)
        writer.startBlock(block.getRowCount())
        columns = schema.getColumns()
        for i in range(columns.size()):
            chunk = block.getColumns().get(i)
            bf = None if columns.get(i).getPath()[0] in drop else reader.readBloomFilter(chunk)
            writer.appendColumnChunk(columns.get(i), stream, chunk, bf, None, None)
        writer.endBlock()
        stream.close()
        reader.close()
    writer.end(kv)


def test_footer_path_falls_back_to_the_data_file_by_file(spark, root, tmp_path):
    def part(lo, hi, ndv, fpp="0.002", where=None):
        p = str(tmp_path / f"src_{lo}_{ndv}_{fpp}")
        df = spark.range(lo, hi).select((F.col("id") * 7).alias("k"), F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"))
        _write_with_filters(df.coalesce(1), p, ["k", "s"], ndv=ndv, fpp=fpp, block_size=4096)
        f = _data_files(p, "parquet")
        assert len(f) == 1 and len(read_footer(f[0])[4]) >= 2
        return f[0]

    table = tmp_path / "mixed"
    table.mkdir()
    good = part(0, 800, 1000)
    # One row group without a filter for k: k from the data, s still from the footer.
    holed = part(1000, 1800, 1000)
    _rewrite(spark, str(table / "part-a-holed.parquet"), [(holed, 0, set()), (holed, 1, {"k"})])
    # Row groups whose filters differ in size (written for 1000 and for 50 values): both from the data.
    small = part(2000, 2800, 50)
    _rewrite(spark, str(table / "part-b-sizes.parquet"), [(good, 0, set()), (small, 1, set())])
    # Filters far too small for the file (16 values, fpp 0.3): over the fpp, from the data.
    tiny = part(3000, 3800, 16, fpp="0.3")
    for name, src in (("part-c-good.parquet", good), ("part-d-tiny.parquet", tiny)):
        _rewrite(spark, str(table / name), [(src, g, set()) for g in range(len(read_footer(src)[4]))])
    spark.sql(f"CREATE BLOOM INDEX mixed ON parquet.`{table}` FOR COLUMNS (k, s)")
    built = {(os.path.basename(row_path(r.file_path)), r.column): r.built_from for r in index_rows(spark, root, "mixed")}
    assert built == {
        ("part-a-holed.parquet", "k"): "data", ("part-a-holed.parquet", "s"): "footer",
        ("part-b-sizes.parquet", "k"): "data", ("part-b-sizes.parquet", "s"): "data",
        ("part-c-good.parquet", "k"): "footer", ("part-c-good.parquet", "s"): "footer",
        ("part-d-tiny.parquet", "k"): "data", ("part-d-tiny.parquet", "s"): "data"}
    d = _describe(spark, "mixed")
    assert (d["files_indexed"], d["files_from_footer"], d["files_from_data"]) == ("4", "1", "3")
    assert (d["column.k.files_from_footer"], d["column.k.files_from_data"]) == ("1", "3")
    assert (d["column.s.files_from_footer"], d["column.s.files_from_data"]) == ("2", "2")
    source = spark.read.parquet(str(table))
    assert_filters_hold_values(spark, root, "mixed", source, {"k": "bigint", "s": "string"})

    # Pruning with the mixed index answers as without it.
    source.createOrReplaceTempView("mixed_t")
    rng = random.Random(3)
    try:
        for _ in range(60):
            v = rng.randrange(0, 4000) * (7 if rng.random() < 0.5 else 1)
            where = f"k = {v} OR s = 's{rng.randrange(0, 4000)}'"
            answers = []
            for on in ("true", "false"):
                spark.conf.set("spark.bloomindex.pruning.enabled", on)
                answers.append(spark.sql(f"SELECT count(*), sum(k) FROM mixed_t WHERE {where}").collect()[0])
            assert answers[0] == answers[1], where
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")


def test_footer_path_can_be_turned_off(spark, root, tmp_path):
    path = str(tmp_path / "off")
    _write_with_filters(spark.range(500).select(F.col("id").alias("k")).repartition(2), path, ["k"])
    with conf(spark, spark__bloomindex__build__footerFilters="false"):
        spark.sql(f"CREATE BLOOM INDEX off ON parquet.`{path}` FOR COLUMNS (k)")
    assert {r.built_from for r in index_rows(spark, root, "off")} == {"data"}
    assert _describe(spark, "off")["files_from_footer"] == "0"
