"""Our filters == the ones parquet-java (inside Spark) and Arrow C++ (inside pyarrow) write.

Each writer writes one row group per file with a filter per column; we read each filter back
from the file's bytes and rebuild it from the same values at the same size.
"""

from __future__ import annotations

import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bloomindex
from bloomindex.parquet import read_bloom_filter
from typedata import COLUMNS, rows


@pytest.fixture(scope="module")
def data():
    return rows(400, seed=11)


def _column_values(data, column):
    values, _ = data
    idx = [c for c, _, _ in COLUMNS].index(column)
    return [row[idx] for row in values]


@pytest.fixture(scope="module")
def spark_file(spark, data, tmp_path_factory):
    values, schema = data
    out = str(tmp_path_factory.mktemp("parquet_java") / "t")
    writer = spark.createDataFrame(values, schema).coalesce(1).write
    for column, _, _ in COLUMNS:
        writer = (writer.option(f"parquet.bloom.filter.enabled#{column}", "true")
                  .option(f"parquet.bloom.filter.expected.ndv#{column}", "500"))
    # Timestamps as INT64 micros: Spark's default INT96 is not what a filter over them hashes.
    previous = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        (writer.option("parquet.enable.dictionary", "false")
         .option("datetimeRebaseMode", "CORRECTED")
         .parquet(out))
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", previous)
    files = glob.glob(os.path.join(out, "*.parquet"))
    assert len(files) == 1
    return files[0]


@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_parquet_java_filters(spark, spark_file, data, column, type_name):
    theirs = read_bloom_filter(spark_file, column)
    assert theirs is not None, f"Spark wrote no filter for {column}"
    ours = bloomindex.Sbbf(theirs.num_bytes)
    values = _column_values(data, column)
    ours.insert(values, type_name)
    assert ours.bitset_bytes() == theirs.bitset_bytes()
    assert theirs.check([v for v in values if v is not None], type_name).all()


_ARROW_TYPES = {
    "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
    "float": pa.float32(), "double": pa.float64(), "string": pa.string(), "binary": pa.binary(),
    "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
}


def _arrow_type(type_name: str) -> pa.DataType:
    if type_name.startswith("decimal"):
        p, s = (int(x) for x in type_name[8:-1].split(","))
        return pa.decimal128(p, s)
    return _ARROW_TYPES[type_name]


@pytest.fixture(scope="module")
def arrow_file(data, tmp_path_factory):
    arrays = {c: pa.array(_column_values(data, c), type=_arrow_type(t)) for c, t, _ in COLUMNS}
    path = str(tmp_path_factory.mktemp("arrow") / "t.parquet")
    # Spark's physical types: decimals up to 18 digits as INT32/INT64, timestamps as INT64 micros.
    pq.write_table(pa.table(arrays), path, use_dictionary=False, store_decimal_as_integer=True,
                   bloom_filter_options={c: {"ndv": 700, "fpp": 0.01} for c, _, _ in COLUMNS})
    return path


@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_arrow_filters(arrow_file, data, column, type_name):
    theirs = read_bloom_filter(arrow_file, column)
    assert theirs is not None, f"pyarrow wrote no filter for {column}"
    values = _column_values(data, column)
    # Arrow sizes a chunk's filter for min(ndv option, distinct values in the chunk), by the
    # rule of our power-of-two sizing.
    distinct = len(set(bloomindex.hash_values(values, type_name).tolist()))
    assert theirs.num_bytes == bloomindex.optimal_num_bytes(min(700, distinct), 0.01, power_of_two=True)
    ours = bloomindex.Sbbf(theirs.num_bytes)
    ours.insert(values, type_name)
    assert ours.bitset_bytes() == theirs.bitset_bytes()


def test_arrow_footer_records_filter_length(arrow_file):
    # pyarrow 25+ writes bloom_filter_length; the reader must also work without it (below).
    from bloomindex.parquet import read_footer

    meta = read_footer(arrow_file)[4][0][1][0][3]
    assert 14 in meta and 15 in meta


def test_missing_filter_and_bad_column(data, tmp_path):
    path = str(tmp_path / "nofilter.parquet")
    pq.write_table(pa.table({"a": pa.array([1, 2, 3], pa.int64())}), path)
    assert read_bloom_filter(path, "a") is None
    with pytest.raises(ValueError, match="column: 'b'"):
        read_bloom_filter(path, "b")
    with pytest.raises(ValueError, match="row_group"):
        read_bloom_filter(path, "a", row_group=3)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="not a Parquet file"):
        read_bloom_filter(str(junk), "a")
