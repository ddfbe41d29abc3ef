"""bloomindex.parquet and _thrift on their own: pyarrow locates a filter, the small compact-Thrift
reader reads its header (skipping fields it does not know), and damage is a ValueError."""

from __future__ import annotations

import sys
import types

import pyarrow
import pytest

import bloomindex
from bloomindex._thrift import CompactReader, zigzag_i32
from bloomindex.parquet import parse_bloom_filter, read_bloom_filter, read_footer

STATS = "data_index_bloom_encoding_stats.parquet"        # bloom_filter_offset only (192)
WITH_LENGTH = "data_index_bloom_encoding_with_length.parquet"  # offset 253, length 2064


def _header_with_unknown_fields(num_bytes: int) -> bytes:
    """A BloomFilterHeader followed by a field of every compact type a later writer might add
    (ids 5 to 14), and one under an id too far for a delta (100)."""
    union = b"\x1c\x1c\x00\x00"  # the next field, a struct: {1: {}}
    return (b"\x15" + zigzag_i32(num_bytes) + union * 3  # 1: numBytes; 2, 3, 4: the unions
            + b"\x13\x7f"                         # 5: byte
            + b"\x17" + b"\x00" * 8               # 6: double
            + b"\x18\x03abc"                      # 7: binary
            + b"\x19\x25\x02\x04"                 # 8: list<i32> [1, 2]
            + b"\x19\xf5\x10" + b"\x02" * 16      # 9: list<i32> of 16 (the long form)
            + b"\x1a\x21\x01\x00"                 # 10: set<bool> {true, false}, a byte each
            + b"\x1b\x01\x81\x01k\x01"             # 11: map<binary, bool> {"k": true}
            + b"\x11"                              # 12: bool true
            + b"\x1c\x19\x1c\x00\x00"              # 13: struct {1: list<struct> [{}]}
            + b"\x16\x02"                          # 14: i64 1
            + b"\x0c\xc8\x01\x00"                  # 100 (zigzag varint id): struct {}
            + b"\x00")


def test_header_fields_of_other_types_are_skipped():
    header = _header_with_unknown_fields(32)
    fields = CompactReader(header).read_struct()
    assert fields[1] == 32 and fields[2] == {1: {}} and fields[3] == {1: {}} and fields[4] == {1: {}}
    assert {k: fields[k] for k in (12, 13, 14, 100)} == {12: True, 13: {}, 14: 1, 100: {}}
    assert set(fields) == {1, 2, 3, 4, 12, 13, 14, 100}  # the others skipped
    bits = bytes(range(32))
    for read in (parse_bloom_filter, bloomindex.Sbbf.deserialize):
        f = read(header + bits)
        assert f.num_bytes == 32 and f.bitset_bytes() == bits


@pytest.mark.parametrize("data,match", [
    (b"\x15", "end of data"),                                     # numBytes missing
    (b"\x15\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", "varint"),  # over 64 bits
    (b"\x18\x7f", "overruns"),                                    # binary of 127 bytes, none there
    (b"\x19\xf5\x7f", "list of 127"),                             # more elements than bytes
    (b"\x1b\x7f", "map of 127"),
    (b"\x1f", "unknown type 15"),
    (b"\x1c" * 200, "nesting too deep"),
])
def test_damaged_headers_raise_value_error(data, match):
    with pytest.raises(ValueError, match=match):
        CompactReader(data).read_struct()
    with pytest.raises(ValueError):
        parse_bloom_filter(data)


def _copy(parquet_testing, name, tmp_path, patch=None):
    data = bytearray((parquet_testing / name).read_bytes())
    if patch:
        at, new = patch
        data[at:at + len(new)] = new
    path = tmp_path / name
    path.write_bytes(bytes(data))
    return path


def test_footer_from_pyarrow(parquet_testing):
    assert read_footer(parquet_testing / STATS) == {3: 14, 4: [{1: [{3: {3: [b"String"], 14: 192}}], 3: 14}]}
    assert read_footer(parquet_testing / WITH_LENGTH)[4][0][1][0][3] == {3: [b"String"], 14: 253, 15: 2064}


def test_damaged_filters_raise_value_error(parquet_testing, tmp_path):
    # Without a length in the footer: a header saying 4096 bytes (zigzag 8192: 80 40), 1024 there.
    path = _copy(parquet_testing, STATS, tmp_path, (193, b"\x80\x40"))
    with pytest.raises(ValueError, match="runs past the end of the file"):
        read_bloom_filter(path, "String")
    # With one: the header says more than the footer's length holds.
    path = _copy(parquet_testing, WITH_LENGTH, tmp_path, (254, b"\x80\x40"))
    with pytest.raises(ValueError, match="header says 4096 bytes"):
        read_bloom_filter(path, "String")
    # No header at the offset.
    path = _copy(parquet_testing, STATS, tmp_path, (192, b"\xff"))
    with pytest.raises(ValueError, match="thrift"):
        read_bloom_filter(path, "String")


def test_damaged_footers_raise_value_error(parquet_testing, tmp_path):
    data = (parquet_testing / WITH_LENGTH).read_bytes()
    footer_len = int.from_bytes(data[-8:-4], "little")
    cases = {
        "garbage footer": (data[:-8 - footer_len] + b"\xff" * footer_len + data[-8:], "damaged Parquet footer"),
        "footer too long": (data[:-8] + (len(data) * 2).to_bytes(4, "little") + b"PAR1", "footer length"),
        "encrypted": (data[:-4] + b"PARE", "encrypted"),
        "truncated": (data[:100] + data[-8:], "footer length|damaged"),
    }
    for name, (content, match) in cases.items():
        path = tmp_path / f"{name}.parquet"
        path.write_bytes(content)
        with pytest.raises(ValueError, match=match):
            read_bloom_filter(path, "String")
        with pytest.raises(ValueError, match=match):
            read_footer(path)


def test_pyarrow_missing_or_too_old(parquet_testing, monkeypatch):
    bare = read_bloom_filter(parquet_testing / "bloom_filter.xxhash.bin")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match="needs pyarrow >=25"):
        read_bloom_filter(parquet_testing / STATS, "String")
    old = types.SimpleNamespace(ColumnChunkMetaData=type("ColumnChunkMetaData", (), {}))
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", old)
    monkeypatch.setattr(pyarrow, "parquet", old, raising=False)
    with pytest.raises(ImportError, match=f"bloom_filter_offset.*not {pyarrow.__version__}"):
        read_footer(parquet_testing / STATS)
    # A bare filter needs no pyarrow.
    assert read_bloom_filter(parquet_testing / "bloom_filter.xxhash.bin") == bare
