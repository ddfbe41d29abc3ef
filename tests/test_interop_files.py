"""The filters in apache/parquet-testing, written by parquet-mr and parquet-rs, rebuilt exactly."""

from __future__ import annotations

import pytest

import bloomindex
import bloomindex.filters
from bloomindex.parquet import parse_bloom_filter, read_bloom_filter

FOUR = ["hello", "parquet", "bloom", "filter"]
STRINGS = ["Hello", "This is", "a", "test", "How", "are you", "doing ", "today", "the quick",
           "brown fox", "jumps", "over", "the lazy", "dog"]


def test_bare_xxhash_filter_rebuilt_bit_for_bit(parquet_testing):
    data = (parquet_testing / "bloom_filter.xxhash.bin").read_bytes()
    ours = bloomindex.Sbbf(1024)
    ours.insert(FOUR, "string")
    assert ours.serialize() == data
    theirs = bloomindex.Sbbf.deserialize(data)
    assert theirs == ours
    assert theirs.check(FOUR, "string").all()
    for absent in ["b", "c", "d", "Hello"]:
        assert not theirs.might_contain(absent, "string"), absent


@pytest.mark.parametrize("name,num_bytes", [("data_index_bloom_encoding_stats.parquet", 1024),
                                            ("data_index_bloom_encoding_with_length.parquet", 2048)])
def test_file_filters_rebuilt_bit_for_bit(parquet_testing, name, num_bytes):
    theirs = read_bloom_filter(parquet_testing / name, "String")
    assert theirs is not None and theirs.num_bytes == num_bytes
    ours = bloomindex.Sbbf(num_bytes)
    ours.insert(STRINGS, "string")
    assert ours.bitset_bytes() == theirs.bitset_bytes()
    assert theirs.check(STRINGS, "string").all()
    for absent in ["b", "c", "d", "doing", "hello"]:
        assert not theirs.might_contain(absent, "string"), absent


def test_deprecated_murmur3_filter_rebuilt_bit_for_bit_and_read(parquet_testing):
    path = parquet_testing / "bloom_filter.bin"
    data = path.read_bytes()
    ours = bloomindex.SbbfMurmur3(1024)
    ours.insert(FOUR, "string")
    assert ours.serialize() == data
    for theirs in (read_bloom_filter(path), bloomindex.filters.deserialize(data, "sbbf-murmur3"),
                   parse_bloom_filter(data)):
        assert isinstance(theirs, bloomindex.SbbfMurmur3) and theirs == ours
        assert theirs.check(FOUR, "string").all()
        for absent in ["b", "c", "d", "Hello"]:
            assert not theirs.might_contain(absent, "string"), absent
    assert read_bloom_filter(parquet_testing / "bloom_filter.xxhash.bin") == bloomindex.Sbbf.deserialize(
        (parquet_testing / "bloom_filter.xxhash.bin").read_bytes())


def test_bare_filters_and_parquet_files_are_told_apart(parquet_testing, tmp_path):
    with pytest.raises(ValueError, match="column"):
        read_bloom_filter(parquet_testing / "bloom_filter.bin", "String")
    with pytest.raises(ValueError, match="column"):
        read_bloom_filter(parquet_testing / "data_index_bloom_encoding_stats.parquet")
    extra = tmp_path / "extra.bin"
    extra.write_bytes((parquet_testing / "bloom_filter.bin").read_bytes() + b"\x00")
    with pytest.raises(ValueError, match="1 bytes follow"):
        read_bloom_filter(extra)


def test_footer_reader_finds_the_filters_where_pyarrow_says(parquet_testing, tmp_path):
    """pyarrow (25 and later: bloom_filter_offset / _length) locates the filters; read_footer's
    dict says what pyarrow says, and read_bloom_filter reads each filter there, with the footer's
    length or, without one (data_index_bloom_encoding_stats.parquet), the header's numBytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bloomindex.parquet import read_footer

    written = tmp_path / "arrow.parquet"
    pq.write_table(pa.table({"k": [f"v{i}" for i in range(500)], "n": list(range(500))}), written,
                   bloom_filter_options={"k": {"ndv": 500, "fpp": 0.01}}, row_group_size=200)
    files = [parquet_testing / "data_index_bloom_encoding_stats.parquet",
             parquet_testing / "data_index_bloom_encoding_with_length.parquet", written]
    found = 0
    for path in files:
        theirs = pq.ParquetFile(path).metadata
        ours = read_footer(path)[4]  # FileMetaData.row_groups
        assert len(ours) == theirs.num_row_groups
        for g, group in enumerate(ours):
            for c, chunk in enumerate(group[1]):  # RowGroup.columns
                meta = theirs.row_group(g).column(c)
                assert chunk[3].get(14) == meta.bloom_filter_offset, (path, g, c)  # ColumnMetaData.bloom_filter_offset
                if 15 in chunk[3]:
                    assert chunk[3][15] == meta.bloom_filter_length, (path, g, c)
                found += meta.bloom_filter_offset is not None
                filt = read_bloom_filter(path, meta.path_in_schema, g)
                assert (filt is None) == (meta.bloom_filter_offset is None), (path, g, c)
                if filt is not None and meta.bloom_filter_length is not None:
                    assert len(filt.serialize()) == meta.bloom_filter_length, (path, g, c)
    assert found >= 4  # both parquet-testing files and every row group of pyarrow's


def test_a_filter_read_from_a_file_refuses_a_type_the_file_stores_otherwise(tmp_path):
    """pyarrow stores a decimal(5,2) as a 3-byte array, a millisecond timestamp as milliseconds
    and a uint32 as INT32 bits, where Spark's layout (what a Spark type's values are hashed as)
    is an INT32 unscaled value, microseconds, an INT64: checked under those types, a filter read
    out of the file would answer "absent" for values the file holds. It refuses them, naming the
    column and how it is stored; types stored as Spark stores them are checked as before."""
    import datetime as dt
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "arrow.parquet")
    table = pa.table({"d": pa.array([decimal.Decimal("1.23")], pa.decimal128(5, 2)),
                      "ms": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("ms")),
                      "us": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("us")),
                      "u": pa.array([3_000_000_000], pa.uint32()), "s": ["x"], "day": pa.array([dt.date(2020, 1, 1)]),
                      "i8": pa.array([7], pa.int8())})
    pq.write_table(table, path, bloom_filter_options={c: {"ndv": 10, "fpp": 0.01} for c in table.column_names})
    refused = [("d", "decimal(5,2)", decimal.Decimal("1.23"), "stored as FIXED_LEN_BYTE_ARRAY"),
               ("d", "decimal(20,2)", decimal.Decimal("1.23"), "stored as 3-byte arrays"),
               ("ms", "timestamp_ntz", dt.datetime(2020, 1, 1), "milliseconds"),
               ("u", "bigint", 3_000_000_000, "stored as INT32"),
               ("i8", "date", dt.date(2020, 1, 1), "hashed as days")]
    for column, spark_type, value, match in refused:
        f = read_bloom_filter(path, column)
        with pytest.raises(ValueError, match=f"column '{column}'") as e:
            f.might_contain(value, spark_type)
        assert match in str(e.value), str(e.value)
        with pytest.raises(ValueError, match="column"):
            f.check([value], spark_type)
    for column, spark_type, value in [("us", "timestamp_ntz", dt.datetime(2020, 1, 1)), ("s", "string", "x"),
                                      ("day", "date", dt.date(2020, 1, 1)), ("i8", "tinyint", 7), ("i8", "int", 7),
                                      ("day", "int", 18262)]:  # the same INT32 bytes: days as ints
        assert read_bloom_filter(path, column).might_contain(value, spark_type), (column, spark_type)


def test_a_dotted_path_naming_two_columns_is_refused(tmp_path):
    """A top-level column named "a.b" and the nested field b of struct a have the same dotted
    path: the reader took the first, another column's filter."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "dots.parquet")
    pq.write_table(pa.table({"a.b": [1, 2, 3], "a": [{"b": 100}, {"b": 200}, {"b": 300}]}), path,
                   bloom_filter_options={"a.b": {"ndv": 10, "fpp": 0.01}})
    with pytest.raises(ValueError, match="names 2 columns"):
        read_bloom_filter(path, "a.b")
    with pytest.raises(ValueError, match="row_group: expected an int"):
        read_bloom_filter(path, "a", row_group=True)

