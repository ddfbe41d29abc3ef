"""Python Sbbf == JVM Sbbf, bit for bit, for every indexable type and both JVM kernels."""

from __future__ import annotations

import numpy as np
import pytest

import bloomindex
from index_helpers import native_kernel
from typedata import COLUMNS, rows


@pytest.fixture(scope="module")
def typed_df(spark):
    data, schema = rows(300, seed=7)
    return spark.createDataFrame(data, schema).coalesce(1), data


def _signed_to_uint64(values) -> np.ndarray:
    return np.array(list(values), dtype=np.int64).view(np.uint64)


def test_the_vector_kernel_is_available_where_the_cpu_runs_it(jvm_api, vector_bits):
    # vector_bits fails where the session's JVM lacks the Vector API module.
    assert jvm_api.vectorAvailable() == (vector_bits >= 256), f"preferred vectors of {vector_bits} bits"
    assert jvm_api.defaultKernel() == native_kernel(vector_bits)


def _unless_vector_refused(kernel, vector_bits, call) -> None:
    """Where `kernel` is the vector one and this CPU lacks it, `call` must be refused by name, and
    the test stops there, reported as skipped: the kernel's parity cannot be shown on this CPU."""
    if kernel != "vector" or vector_bits >= 256:
        return
    with pytest.raises(Exception, match="'vector' needs --add-modules jdk.incubator.vector and 256-bit SIMD"):
        call()
    pytest.skip(f"{vector_bits}-bit vectors: the vector kernel is refused here (asserted); its parity needs 256")


@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_hashes_match_jvm(typed_df, jvm_api, column, type_name):
    df, data = typed_df
    idx = [c for c, _, _ in COLUMNS].index(column)
    values = [row[idx] for row in data]
    ours = bloomindex.hash_values(values, type_name)
    theirs = _signed_to_uint64(jvm_api.hashColumn(df._jdf, column))
    assert len(ours) == len([v for v in values if v is not None])
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("kernel", ["vector", "scalar"])
@pytest.mark.parametrize("column,type_name", [(c, t) for c, t, _ in COLUMNS])
def test_filter_bytes_match_jvm(typed_df, jvm_api, vector_bits, column, type_name, kernel):
    df, data = typed_df
    _unless_vector_refused(kernel, vector_bits, lambda: jvm_api.buildFilter(df._jdf, column, 32, kernel))
    idx = [c for c, _, _ in COLUMNS].index(column)
    values = [row[idx] for row in data]
    for num_bytes in (32, 1024, 96 * 32):
        ours = bloomindex.Sbbf(num_bytes)
        ours.insert(values, type_name)
        theirs = bytes(jvm_api.buildFilter(df._jdf, column, num_bytes, kernel))
        assert ours.bitset_bytes() == theirs, f"{column} at {num_bytes} bytes, {kernel} kernel"


@pytest.mark.parametrize("kernel", ["vector", "scalar"])
def test_bulk_check_matches_jvm(jvm_api, vector_bits, kernel):
    rng = np.random.default_rng(3)
    inserted = rng.integers(0, 2**64, 5000, dtype=np.uint64)
    _unless_vector_refused(kernel, vector_bits,
                           lambda: jvm_api.filterFromHashes(inserted.astype("<u8").tobytes(), 4096, kernel))
    probes = np.concatenate([rng.integers(0, 2**64, 20000, dtype=np.uint64), inserted[:100]])
    f = bloomindex.Sbbf(4096)
    f.insert_hashes(inserted)
    jvm_bits = bytes(jvm_api.filterFromHashes(inserted.astype("<u8").tobytes(), 4096, kernel))
    assert jvm_bits == f.bitset_bytes()
    jvm_answers = np.frombuffer(bytes(jvm_api.checkHashes(jvm_bits, probes.astype("<u8").tobytes(), kernel)),
                                dtype=np.uint8).astype(bool)
    ours = f.check_hashes(probes)
    np.testing.assert_array_equal(ours, jvm_answers)
    assert ours[-100:].all()
    assert 0 < ours[:-100].sum() < len(probes)  # some false positives, not all


def test_serialized_form_matches_jvm(jvm_api):
    f = bloomindex.Sbbf(2048)
    f.insert(["a", "b", "c"], "string")
    assert bytes(jvm_api.toParquetBytes(f.bitset_bytes())) == f.serialize()
    assert bytes(jvm_api.fromParquetBytes(f.serialize())) == f.bitset_bytes()


@pytest.mark.parametrize("ndv,fpp", [(0, 0.01), (1, 0.5), (1000, 0.01), (12345, 0.001), (10**6, 0.05),
                                     (3 * 10**7, 0.01), (10**9, 0.001)])
def test_sizing_matches_jvm(jvm_api, ndv, fpp):
    for power_of_two, name in ((True, "power-of-two"), (False, "exact")):
        assert bloomindex.optimal_num_bytes(ndv, fpp, power_of_two) == jvm_api.numBytesFor(ndv, fpp, name)
