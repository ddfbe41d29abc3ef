"""The sbbf-murmur3 and classic designs in Python: hashing, sizing, bits, serde, errors."""

from __future__ import annotations

import math
import struct

import mmh3
import numpy as np
import pytest

from bloomindex import ClassicBloomFilter, Sbbf, SbbfMurmur3, hash_value, hash_values
from bloomindex.filters import (ALGORITHMS, deserialize, expected_fpp, for_ndv, num_bytes,
                                num_hashes_for)
from bloomindex.sbbf import SALT

SEED = 1361930890


def _random_hashes(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**64, n, dtype=np.uint64)


def test_murmur3_hashes_the_plain_encoding_with_parquet_mrs_seed():
    assert hash_value(b"\x00\x01\x02\x03\x04\x05\x06\x07", "binary", "murmur3") == 913737700387071329
    ints = [0, 1, -1, 2**31 - 1, -(2**31), 12345]
    assert hash_values(ints, "int", "murmur3").tolist() == [
        mmh3.hash64(struct.pack("<i", v), SEED, signed=False)[0] for v in ints]
    longs = [0, -1, 2**63 - 1, -(2**63)]
    assert hash_values(longs, "bigint", "murmur3").tolist() == [
        mmh3.hash64(struct.pack("<q", v), SEED, signed=False)[0] for v in longs]
    assert hash_value("héllo", "string", "murmur3") == mmh3.hash64("héllo".encode(), SEED, signed=False)[0]
    assert hash_value(1.5, "double", "murmur3") == mmh3.hash64(struct.pack("<d", 1.5), SEED, signed=False)[0]
    with pytest.raises(ValueError, match="hash"):
        hash_values([1], "int", "md5")


def _murmur3_reference(num_bytes: int, hashes: np.ndarray) -> bytes:
    words = np.zeros(num_bytes // 4, dtype=np.uint32)
    blocks = num_bytes // 32
    for h in hashes.tolist():
        block = (h >> 32) & (blocks - 1)
        for i in range(8):
            words[block * 8 + i] |= np.uint32(1 << ((((h & 0xFFFFFFFF) * int(SALT[i])) & 0xFFFFFFFF) >> 27))
    return words.astype("<u4").tobytes()


@pytest.mark.parametrize("size", [32, 64, 1024, 1 << 16])
def test_murmur3_design_sets_the_masked_block(size):
    hashes = _random_hashes(3000, size)
    f = SbbfMurmur3(size)
    f.insert_hashes(hashes)
    assert f.bitset_bytes() == _murmur3_reference(size, hashes)
    assert f.check_hashes(hashes).all()


def _classic_reference(num_bytes: int, k: int, hashes: np.ndarray) -> bytes:
    m = num_bytes * 8
    bits = bytearray(num_bytes)
    for h in hashes.tolist():
        h1, h2 = h & 0xFFFFFFFF, h >> 32
        for i in range(1, k + 1):
            c = (h1 + i * h2) & 0xFFFFFFFF
            c = c - (1 << 32) if c >= 1 << 31 else c
            p = (~c if c < 0 else c) % m
            bits[p >> 3] |= 1 << (p & 7)  # LE words: bit p is bit p & 7 of byte p >> 3
    return bytes(bits)


@pytest.mark.parametrize("size,k", [(8, 1), (24, 3), (1000, 7), (4096, 13)])
def test_classic_design_sets_kirsch_mitzenmacher_positions(size, k):
    hashes = _random_hashes(2000, size + k)
    f = ClassicBloomFilter(size, k)
    f.insert_hashes(hashes)
    assert f.bitset_bytes() == _classic_reference(size, k, hashes)
    assert f.check_hashes(hashes).all()


def test_classic_large_filters_take_the_in_place_path():
    hashes = _random_hashes(5000, 9)
    big = ClassicBloomFilter(16 * 1024 * 1024, 4)  # 2^27 bits: past the scratch limit
    big.insert_hashes(hashes)
    assert big.check_hashes(hashes).all()
    small_probe = _random_hashes(20000, 10)
    assert big.check_hashes(small_probe).sum() == 0  # 20,000 absent probes, rate ~1e-17


def test_classic_sizing():
    assert [num_hashes_for(p) for p in (0.5, 0.1, 0.01, 0.001)] == [1, 3, 7, 10]
    for ndv, fpp in [(1000, 0.01), (12345, 0.001), (1_000_000, 0.05), (3, 0.5)]:
        k = num_hashes_for(fpp)
        exact = num_bytes(ndv, fpp, "classic")
        assert exact % 8 == 0 and expected_fpp(exact, ndv, "classic", fpp) <= fpp
        if exact > 8:
            assert expected_fpp(exact - 8, ndv, "classic", fpp) > fpp
        p2 = num_bytes(ndv, fpp, "classic", power_of_two=True)
        assert p2 & (p2 - 1) == 0 and exact <= p2 < 2 * exact
        assert for_ndv(ndv, fpp, "classic").num_hashes == k
    with pytest.raises(ValueError, match="fpp"):
        num_hashes_for(1e-30)


def test_murmur3_sizing_is_powers_of_two():
    for ndv, fpp in [(1000, 0.01), (12345, 0.001), (4, 0.01)]:
        exact = num_bytes(ndv, fpp, "sbbf-murmur3")
        assert exact & (exact - 1) == 0
        assert expected_fpp(exact, ndv, "sbbf-murmur3") <= fpp
        if exact > 32:
            assert expected_fpp(exact // 2, ndv, "sbbf-murmur3") > fpp
        assert num_bytes(ndv, fpp, "sbbf-murmur3", power_of_two=True) == num_bytes(ndv, fpp, "sbbf", power_of_two=True)


def test_classic_measured_rate_is_near_the_target():
    f = for_ndv(20000, 0.01, "classic")
    f.insert_hashes(_random_hashes(20000, 11))
    rate = f.check_hashes(_random_hashes(200_000, 12)).mean()
    assert 0.006 < rate < 0.0125
    assert math.isclose(f.expected_fpp(20000), 0.01, rel_tol=0.1)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_design_round_trips_merges_and_checks_values(algorithm):
    a = for_ndv(500, 0.01, algorithm)
    b = for_ndv(500, 0.01, algorithm)
    a.insert(range(0, 250), "bigint")
    b.insert(range(250, 500), "bigint")
    assert deserialize(a.serialize(), algorithm) == a
    both = a.copy().merge(b)
    assert both.check(list(range(500)), "bigint").all()
    assert both.might_contain(499, "bigint")
    assert not a.copy().merge(b) == a
    assert a.algorithm == algorithm
    other = [x for x in ALGORITHMS if x != algorithm][0]
    with pytest.raises(TypeError, match="other"):  # another design: a wrong type
        a.merge(for_ndv(500, 0.01, other))
    with pytest.raises(ValueError, match="value"):
        a.might_contain(None, "bigint")


def test_bad_sizes_headers_and_names_are_value_errors():
    for n in (0, 16, 96, 3000, 2**28):
        with pytest.raises(ValueError, match="num_bytes"):
            SbbfMurmur3(n)
    for n in (0, 4, 12, 1001):
        with pytest.raises(ValueError, match="num_bytes"):
            ClassicBloomFilter(n, 3)
    for k in (0, 65):
        with pytest.raises(ValueError, match="num_hashes"):
            ClassicBloomFilter(64, k)
    for k in (True, 3.0, "3"):
        with pytest.raises(TypeError, match="num_hashes"):
            ClassicBloomFilter(64, k)
    with pytest.raises(ValueError, match="hash"):
        SbbfMurmur3.deserialize(struct.pack("<iii", 1024, 1, 0) + bytes(1024))
    with pytest.raises(ValueError, match="algorithm"):
        SbbfMurmur3.deserialize(struct.pack("<iii", 1024, 0, 3) + bytes(1024))
    with pytest.raises(ValueError, match="1023"):
        SbbfMurmur3.deserialize(struct.pack("<iii", 1024, 0, 0) + bytes(1023))
    with pytest.raises(ValueError, match="num_bytes"):
        SbbfMurmur3.deserialize(struct.pack("<iii", 1 << 30, 0, 0))
    with pytest.raises(ValueError, match="numBits"):
        ClassicBloomFilter.deserialize(struct.pack("<ii", 100, 3) + bytes(13))
    with pytest.raises(ValueError, match="79"):
        ClassicBloomFilter.deserialize(struct.pack("<ii", 640, 3) + bytes(79))
    with pytest.raises(ValueError, match="num_hashes"):
        ClassicBloomFilter.deserialize(struct.pack("<ii", 640, 0) + bytes(80))
    with pytest.raises(ValueError, match="algorithm"):
        for_ndv(10, 0.01, "cuckoo")
    with pytest.raises(ValueError, match="fpp"):
        expected_fpp(1024, 10, "classic")
    with pytest.raises(ValueError, match="deprecated"):
        Sbbf.deserialize(SbbfMurmur3(32).serialize())
