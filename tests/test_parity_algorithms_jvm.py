"""sbbf-murmur3 and classic: Python == JVM bit for bit, every indexable type, every kernel."""

from __future__ import annotations

import numpy as np
import pytest

from bloomindex.filters import ALGORITHMS, deserialize, for_ndv, num_bytes, num_hashes_for
from bloomindex.filters import ClassicBloomFilter, SbbfMurmur3
from bloomindex.hashing import hash_values
from bloomindex.session import jvm_object
from typedata import COLUMNS, rows


@pytest.fixture(scope="module")
def filters_api(spark):
    return jvm_object(spark, "bloomindex.api.FiltersApi$")


@pytest.fixture(scope="module")
def typed_df(spark):
    data, schema = rows(200, seed=11)
    return spark.createDataFrame(data, schema).coalesce(1), data


def _kernels(filters_api, algorithm):
    if algorithm == "classic":
        return ["scalar", "vector"] if filters_api.classicVectorAvailable() else ["scalar"]
    return ["scalar", "vector"]


def _le(hashes: np.ndarray) -> bytes:
    return hashes.astype("<u8").tobytes()


def test_the_jvm_offers_the_three_designs_and_the_classic_vector_kernel_where_it_runs(spark, filters_api):
    assert list(filters_api.algorithms()) == list(ALGORITHMS)
    # The driver JVM's own word on the CPU (configure() puts the Vector API module in its boot
    # layer; without it this lookup fails): the classic vector kernel needs 512-bit vectors.
    bits = spark._jvm.jdk.incubator.vector.LongVector.SPECIES_PREFERRED.vectorBitSize()
    assert filters_api.classicVectorAvailable() == (bits >= 512), f"preferred vectors of {bits} bits"


@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_murmur3_hashes_match_jvm(typed_df, filters_api, column, type_name):
    df, data = typed_df
    idx = [c for c, _, _ in COLUMNS].index(column)
    ours = hash_values([row[idx] for row in data], type_name, "murmur3")
    theirs = np.array(list(filters_api.hashColumn(df._jdf, column, "sbbf-murmur3")), dtype=np.int64).view(np.uint64)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("algorithm", ["sbbf-murmur3", "classic"])
@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_filter_bytes_match_jvm(typed_df, filters_api, algorithm, column, type_name):
    df, data = typed_df
    idx = [c for c, _, _ in COLUMNS].index(column)
    values = [row[idx] for row in data]
    sizes = (32, 1024) if algorithm == "sbbf-murmur3" else (8, 1000)
    for size in sizes:
        ours = SbbfMurmur3(size) if algorithm == "sbbf-murmur3" else ClassicBloomFilter(size, num_hashes_for(0.01))
        ours.insert(values, type_name)
        for kernel in _kernels(filters_api, algorithm):
            theirs = bytes(filters_api.buildFilter(df._jdf, column, algorithm, size, 0.01, kernel))
            assert ours.serialize() == theirs, f"{column}, {size} bytes, {kernel} kernel"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_bulk_inserts_checks_and_merges_match_jvm(filters_api, algorithm):
    rng = np.random.default_rng(5)
    inserted = rng.integers(0, 2**64, 4000, dtype=np.uint64)
    probes = np.concatenate([rng.integers(0, 2**64, 20000, dtype=np.uint64), inserted[:100]])
    size = num_bytes(4000, 0.05, algorithm)
    for kernel in _kernels(filters_api, algorithm):
        ours = for_ndv(4000, 0.05, algorithm)
        ours.insert_hashes(inserted)
        theirs = bytes(filters_api.filterFromHashes(algorithm, _le(inserted), size, 0.05, kernel))
        assert theirs == ours.serialize()
        answers = np.frombuffer(bytes(filters_api.checkHashes(algorithm, theirs, _le(probes), kernel)),
                                dtype=np.uint8).astype(bool)
        np.testing.assert_array_equal(ours.check_hashes(probes), answers)
        assert answers[-100:].all() and 0 < answers[:-100].sum() < 20000
    other = for_ndv(4000, 0.05, algorithm)
    other.insert_hashes(probes[:50])
    merged = bytes(filters_api.merge(algorithm, ours.serialize(), other.serialize()))
    assert merged == ours.copy().merge(other).serialize()
    assert bytes(filters_api.roundTrip(algorithm, merged)) == deserialize(merged, algorithm).serialize()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ndv,fpp", [(0, 0.01), (1, 0.5), (1000, 0.01), (12345, 0.001), (10**6, 0.05),
                                     (3 * 10**7, 0.01), (10**9, 0.001)])
def test_sizing_matches_jvm(filters_api, algorithm, ndv, fpp):
    for power_of_two, name in ((True, "power-of-two"), (False, "exact")):
        assert num_bytes(ndv, fpp, algorithm, power_of_two) == filters_api.numBytesFor(algorithm, ndv, fpp, name)


def test_jvm_refuses_bad_input_with_the_argument_named(filters_api):
    from pyspark.errors import IllegalArgumentException

    for call, word in [(lambda: filters_api.numBytesFor("cuckoo", 10, 0.01, "exact"), "algorithm"),
                       (lambda: filters_api.roundTrip("sbbf-murmur3", bytes(12)), "numBytes"),
                       (lambda: filters_api.roundTrip("classic", b"\x01"), "bytes")]:
        with pytest.raises(IllegalArgumentException, match=word):
            call()
