"""The filters in apache/parquet-testing, written by parquet-mr and parquet-rs, rebuilt exactly."""

from __future__ import annotations

import pytest

import bloomindex
from bloomindex.parquet import read_bloom_filter

FOUR = ["hello", "parquet", "bloom", "filter"]
STRINGS = ["Hello", "This is", "a", "test", "How", "are you", "doing ", "today", "the quick",
           "brown fox", "jumps", "over", "the lazy", "dog"]


def test_bare_xxhash_filter_rebuilt_bit_for_bit(parquet_testing):
    data = (parquet_testing / "bloom_filter.xxhash.bin").read_bytes()
    ours = bloomindex.Sbbf(1024)
    ours.insert(FOUR, "string")
    assert ours.to_parquet_bytes() == data
    theirs = bloomindex.Sbbf.from_parquet_bytes(data)
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
    assert ours.to_bytes() == theirs.to_bytes()
    assert theirs.check(STRINGS, "string").all()
    for absent in ["b", "c", "d", "doing", "hello"]:
        assert not theirs.might_contain(absent, "string"), absent
