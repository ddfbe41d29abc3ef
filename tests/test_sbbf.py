"""The Python filter on its own: sizing, inserts at every size, errors, hashing rules."""

from __future__ import annotations

import datetime as dt
import decimal
import struct

import numpy as np
import pytest
import xxhash

import bloomindex
from bloomindex import Sbbf, expected_fpp, hash_value, hash_values, optimal_num_bytes
from bloomindex.filters import for_ndv


def test_fixed_width_hashing_is_xxh64_of_the_plain_encoding():
    rng = np.random.default_rng(0)
    ints = rng.integers(-(2**31), 2**31, 1000).tolist() + [0, -1, 2**31 - 1, -(2**31)]
    longs = rng.integers(-(2**63), 2**63 - 1, 1000).tolist() + [0, -1, 2**63 - 1, -(2**63)]
    assert hash_values(ints, "int").tolist() == [xxhash.xxh64_intdigest(struct.pack("<i", v)) for v in ints]
    assert hash_values(longs, "bigint").tolist() == [xxhash.xxh64_intdigest(struct.pack("<q", v)) for v in longs]
    doubles = [0.0, -0.0, float("nan"), float("inf"), 1e-310, 3.14]
    assert hash_values(doubles, "double").tolist() == [xxhash.xxh64_intdigest(struct.pack("<d", v)) for v in doubles]
    assert hash_value(-0.0, "double") != hash_value(0.0, "double")  # raw bits, as Parquet


def test_numpy_input_hashes_like_python_values():
    arr = np.arange(-500, 500, dtype=np.int16)
    assert hash_values(arr, "smallint").tolist() == hash_values(arr.tolist(), "smallint").tolist()
    days = np.array(["1969-07-20", "2024-02-29"], dtype="datetime64[D]")
    assert hash_values(days, "date").tolist() == hash_values([dt.date(1969, 7, 20), dt.date(2024, 2, 29)], "date").tolist()
    micros = np.array(["1969-07-20T20:17:40.000001"], dtype="datetime64[us]")
    assert hash_values(micros, "timestamp_ntz").tolist() == hash_values([dt.datetime(1969, 7, 20, 20, 17, 40, 1)], "timestamp_ntz").tolist()


def test_numpy_ints_are_decimal_numbers_not_unscaled_values():
    """An int array for a decimal is the numbers themselves, as a list of ints is (5 is 5.00 of
    decimal(5,2)), at every precision (INT32, INT64 and FIXED_LEN_BYTE_ARRAY decimals)."""
    ints = [5, -7, 0, 99]
    for t in ("decimal(5,2)", "decimal(9,0)", "decimal(18,3)", "decimal(20,2)", "decimal(38,10)"):
        for dtype in (np.int8, np.int16, np.int64, np.uint32):
            arr = np.array([i for i in ints if dtype is not np.uint32 or i >= 0], dtype=dtype)
            assert hash_values(arr, t).tolist() == hash_values(arr.tolist(), t).tolist(), (t, dtype)
    f = Sbbf(1024)
    f.insert([decimal.Decimal("5.00")], "decimal(5,2)")
    assert f.check(np.array([5]), "decimal(5,2)").tolist() == [True]
    with pytest.raises(ValueError, match="1000 does not fit decimal.5,2."):
        hash_values(np.array([1000]), "decimal(5,2)")


def test_nat_is_a_null_and_a_lone_surrogate_is_refused():
    days = np.array(["2024-02-29", "NaT"], dtype="datetime64[D]")
    assert hash_values(days, "date").tolist() == hash_values([dt.date(2024, 2, 29), None], "date").tolist()
    micros = np.array(["NaT"], dtype="datetime64[us]")
    assert hash_values(micros, "timestamp").size == 0
    # A NaT in a list (NumPy's or pandas') is a null too, skipped as None is.
    import pandas as pd
    when = dt.datetime(2024, 2, 29, 12)
    for t in ("timestamp", "timestamp_ntz"):
        assert hash_values([pd.NaT, when, np.datetime64("NaT"), None], t).tolist() == hash_values([when], t).tolist()
    assert hash_values([np.datetime64("NaT"), dt.date(2024, 2, 29)], "date").tolist() == \
        hash_values([dt.date(2024, 2, 29)], "date").tolist()
    with pytest.raises(ValueError, match="values: .* lone surrogate"):
        hash_values(["ok", "\ud800"], "string")


def test_a_zero_is_looked_for_as_either_zero():
    """Spark's (and Python's) 0.0 = -0.0: the filter holds whichever bits were written."""
    for t in ("double", "float"):
        for stored, asked in ((-0.0, 0.0), (0.0, -0.0)):
            f = Sbbf(1024)
            f.insert([stored, 2.5], t)
            assert f.might_contain(asked, t), (t, stored)
            assert f.check(np.array([asked, 2.5, 7.0]), t).tolist() == [True, True, False]
            assert f.check([asked, None, 7.0], t).tolist() == [True, False]
            for design in ("sbbf-murmur3", "classic"):
                g = for_ndv(100, 0.01, design)
                g.insert([stored], t)
                assert g.might_contain(asked, t) and g.check([asked, 7.0], t).tolist() == [True, False], design
    # Nonzero values are not widened: a filter of -1.0 says nothing of 1.0.
    f = Sbbf(32)
    f.insert([-1.0], "double")
    assert hash_value(1.0, "double") != hash_value(-1.0, "double")


def test_a_nan_is_always_maybe():
    """Spark's NaN = NaN holds for any two NaNs, whatever their bits (a NaN another writer, or
    `inf * 0.0` on x86, wrote as 0xfff8... where Spark writes 0x7ff8...): a NaN looked for is
    "maybe" in every filter, even one that holds no NaN, as no bits can rule it out."""
    import struct

    quiet = float("nan")
    negative = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]
    payload = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0]
    for t in ("double", "float"):
        for design in ("sbbf", "sbbf-murmur3", "classic"):
            g = for_ndv(100, 0.01, design)
            g.insert([quiet, 2.5], t)
            for asked in (quiet, negative, payload):
                assert g.might_contain(asked, t), (t, design, hex(struct.unpack("<Q", struct.pack("<d", asked))[0]))
            assert g.check([negative, None, 7.0, 2.5], t).tolist() == [True, False, True], (t, design)
            assert g.check(np.array([payload, 7.0]), t).tolist() == [True, False], (t, design)
            empty = for_ndv(100, 0.01, design)
            empty.insert([1.0], t)
            assert empty.might_contain(negative, t) and not empty.might_contain(7.0, t), (t, design)


def test_dates_timestamps_and_decimals_hash_their_plain_integers():
    assert hash_value(dt.date(1969, 12, 31), "date") == hash_value(-1, "int")
    aware = dt.datetime(1970, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert hash_value(aware, "timestamp") == hash_value(0, "bigint")
    assert hash_value(dt.datetime(1970, 1, 1, 0, 0, 0, 5), "timestamp") == hash_value(5, "bigint")
    assert hash_value(decimal.Decimal("-1.5"), "decimal(9,2)") == hash_value(-150, "int")
    assert hash_value("12.5", "decimal(18,3)") == hash_value(12500, "bigint")
    # decimal(20,2): 9 bytes, big-endian two's complement.
    assert hash_value(decimal.Decimal("-0.01"), "decimal(20,2)") == xxhash.xxh64_intdigest(b"\xff" * 9)
    assert hash_value("1.0", "decimal(38,0)") == xxhash.xxh64_intdigest((1).to_bytes(16, "big"))


@pytest.mark.parametrize("values,type_name,error,match", [
    ([128], "tinyint", ValueError, "out of range"),
    ([2**31], "int", ValueError, "out of range"),
    ([2**63], "bigint", ValueError, "out of range"),
    (["1"], "int", TypeError, "not an integer"),
    ([True], "bigint", TypeError, "not an integer"),
    ([1.5], "string", TypeError, "not a str"),
    (["x"], "binary", TypeError, "not bytes"),
    ([1.5], "decimal(5,2)", TypeError, "not a decimal"),
    ([decimal.Decimal("1.234")], "decimal(5,2)", ValueError, "fractional digits"),
    ([decimal.Decimal("1000")], "decimal(5,2)", ValueError, "does not fit"),
    (["abc"], "decimal(5,2)", ValueError, "not a decimal number"),
    ([dt.datetime(2020, 1, 1)], "date", TypeError, "not a date"),
    ([dt.date(2020, 1, 1)], "timestamp", TypeError, "not a datetime"),
    ([dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)], "timestamp_ntz", ValueError, "naive"),
    (np.array(["x"]), "double", TypeError, "must be numbers"),
    (5, "bigint", TypeError, "values: must be an iterable"),
    ("abc", "string", TypeError, "values: .*got one str"),
    ([1], 5, TypeError, "spark_type: must be a str"),
    ([1], "boolean", ValueError, "type: boolean"),
    ([1], "array<int>", ValueError, "type: array<int>"),
    ([1], "decimal(40,2)", ValueError, "precision"),
    ([1], "varint", ValueError, "unknown"),
    ([decimal.Decimal("1e999999999")], "decimal(10,2)", ValueError, "does not fit"),
    ([10**400], "double", ValueError, "out of range"),
    (np.array(["2024-01-01"], "datetime64[D]"), "bigint", TypeError, "dates and times, not bigint"),
    (np.array(["2024-01-01"], "datetime64[D]"), "decimal(18,0)", TypeError, "dates and times"),
    (np.array(["2024-01-01T10:00"], "datetime64[m]"), "date", TypeError, "time of day"),
])
def test_bad_values_and_types_raise_type_or_value_error_naming_the_problem(values, type_name, error, match):
    # A value of the wrong type for the Spark type is a TypeError; of the right type but not
    # representable (range, digits, timezone), or an unsupported type name, a ValueError.
    with pytest.raises(error, match=match) as e:
        hash_values(values, type_name)
    assert not isinstance(e.value, ValueError if error is TypeError else TypeError)


def test_nulls_are_skipped():
    assert hash_values([None, 1, None, 2], "int").tolist() == hash_values([1, 2], "int").tolist()
    with pytest.raises(ValueError, match="None"):
        Sbbf(32).might_contain(None, "int")


@pytest.mark.parametrize("num_bytes", [32, 1024, 96 * 32, 1 << 20, 16 << 20])
def test_no_false_negatives_and_bulk_equals_single_at_every_size(num_bytes):
    # 16 MiB takes the in-place path, the others the scratch path: both must agree.
    rng = np.random.default_rng(num_bytes)
    hashes = rng.integers(0, 2**64, 40000, dtype=np.uint64)
    bulk = Sbbf(num_bytes)
    bulk.insert_hashes(hashes)
    halves = Sbbf(num_bytes)
    halves.insert_hashes(hashes[:20000])
    halves.insert_hashes(hashes[20000:])
    assert bulk == halves
    assert bulk.check_hashes(hashes).all()
    # Each hash on its own, through the other path, sets the same bits.
    one_by_one = Sbbf(num_bytes)
    for h in hashes[:300]:
        one_by_one.insert_hashes(np.array([h], dtype=np.uint64))
    part = Sbbf(num_bytes)
    part.insert_hashes(hashes[:300])
    assert one_by_one == part


def test_in_place_path_handles_many_hashes_in_one_block():
    # 16 MiB filter (in-place path) with the same block hit thousands of times in a chunk.
    f = Sbbf(16 << 20)
    low = np.random.default_rng(5).integers(0, 2**32, 5000, dtype=np.uint64)
    same_block = (np.uint64(7) << np.uint64(32)) | low
    f.insert_hashes(same_block)
    assert f.check_hashes(same_block).all()
    ref = Sbbf(16 << 20)
    for h in same_block[:50]:
        ref.insert_hashes(np.array([h], dtype=np.uint64))
    part = Sbbf(16 << 20)
    part.insert_hashes(same_block[:50])
    assert ref == part


def test_measured_false_positive_rate_meets_the_exact_sizing_target():
    for fpp in (0.1, 0.01):
        f = Sbbf.for_ndv(20000, fpp, power_of_two=False)
        f.insert_hashes(np.random.default_rng(1).integers(0, 2**64, 20000, dtype=np.uint64))
        probes = np.random.default_rng(2).integers(0, 2**64, 400000, dtype=np.uint64)
        measured = f.check_hashes(probes).mean()
        assert measured < fpp * 1.15, (fpp, measured)
        assert abs(measured - expected_fpp(f.num_bytes, 20000)) < expected_fpp(f.num_bytes, 20000) * 0.15


def test_fpp_estimate_of_a_loaded_filter_matches_a_measured_rate():
    """About 190 values a block and more, the Poisson sum starts past 0; its first term's
    factorial was counted once too often, dividing the rate by the start (0.0017 for 1,000
    values in one block, really about 1), and sizing for a high target came out too small."""
    rng = np.random.default_rng(5)
    for num_bytes, ndv in ((32, 1000), (1024, 8000), (1024, 12000)):
        f = Sbbf(num_bytes)
        f.insert_hashes(rng.integers(0, 2**64, ndv, dtype=np.uint64))
        measured = f.check_hashes(rng.integers(0, 2**64, 200000, dtype=np.uint64)).mean()
        assert abs(measured - expected_fpp(num_bytes, ndv)) < 0.02, (num_bytes, ndv, measured)
    for ndv, fpp in ((1000, 0.9), (100000, 0.7)):
        f = Sbbf.for_ndv(ndv, fpp)
        f.insert_hashes(rng.integers(0, 2**64, ndv, dtype=np.uint64))
        assert f.check_hashes(rng.integers(0, 2**64, 200000, dtype=np.uint64)).mean() < fpp + 0.01, (ndv, fpp)


def test_sizing_rules():
    # An fpp so small that 1 - fpp^(1/8) rounds to 1: the largest filter (it divided by zero).
    assert optimal_num_bytes(1000, 1e-200, power_of_two=True) == 128 * 1024 * 1024
    assert optimal_num_bytes(1000, 0.9999999999999999, power_of_two=True) == 32
    assert optimal_num_bytes(0, 0.01) == 32
    assert optimal_num_bytes(10**12, 0.01) == 128 * 1024 * 1024
    for ndv in (1, 100, 5000, 123456):
        b = optimal_num_bytes(ndv, 0.01, power_of_two=True)
        assert b & (b - 1) == 0
        e = optimal_num_bytes(ndv, 0.01, power_of_two=False)
        assert e % 32 == 0 and expected_fpp(e, ndv) <= 0.01 and (e == 32 or expected_fpp(e - 32, ndv) > 0.01)


@pytest.mark.parametrize("call,match", [
    (lambda: Sbbf(100), "num_bytes"),
    (lambda: Sbbf(0), "num_bytes"),
    (lambda: Sbbf(256 * 1024 * 1024), "num_bytes"),
    (lambda: Sbbf.for_ndv(10, 0.0), "fpp"),
    (lambda: Sbbf.for_ndv(10, 1.0), "fpp"),
    (lambda: Sbbf.for_ndv(10, float("nan")), "fpp"),
    (lambda: Sbbf.for_ndv(-1, 0.1), "ndv"),
    # A well-formed header saying 33 bytes (zigzag 66 = 0x42; Sbbf(32)'s says 32, 0x40), then 33 bytes.
    (lambda: Sbbf.deserialize(b"\x15\x42" + Sbbf(32).serialize()[2:] + b"\x00"), "numBytes 33"),
    (lambda: Sbbf(32).merge(Sbbf(64)), "other"),
    (lambda: Sbbf.deserialize(Sbbf(1024).serialize()[:-1]), "1024"),
    (lambda: Sbbf.deserialize(b"\x15\x80\x80\x80\x80\x08\x00"), "header"),
    (lambda: Sbbf.deserialize(b"\xff\xff"), "thrift|header"),
])
def test_bad_arguments_raise_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_merge_serde_and_copy():
    a, b = Sbbf(1024), Sbbf(1024)
    a.insert(range(100), "int")
    b.insert(range(100, 200), "int")
    both = Sbbf(1024)
    both.insert(range(200), "int")
    assert a.copy().merge(b) == both
    assert Sbbf.deserialize(both.serialize()) == both
    assert both.serialize()[-1024:] == both.bitset_bytes()  # Parquet's form: header, then the bit set
    assert len(both.bitset_bytes()) == both.num_bytes == 1024 and both.num_blocks == 32
    with pytest.raises(TypeError):
        hash(both)


def test_public_api():
    assert {"Sbbf", "configure", "hash_values"} <= set(bloomindex.__all__)
