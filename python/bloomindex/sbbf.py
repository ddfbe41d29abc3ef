"""Parquet's split block Bloom filter (SBBF) in NumPy, bit for bit the JVM's and Parquet's."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ._checks import (MAX_BYTES, MIN_BYTES, check_data, check_fpp, check_ndv, check_power_of_two, check_sbbf_bytes,
                      hashes_array)
from ._headers import is_murmur3_header, read_sbbf_header, sbbf_header
from .hashing import check_values, hash_values
from .types import check_stored

__all__ = ["Sbbf", "optimal_num_bytes", "MIN_BYTES", "MAX_BYTES"]

SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
                 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31], dtype=np.uint32)
# Up to this many filter bits (8 MiB filters), inserts go through a one-byte-per-bit scratch.
_SCRATCH_BITS_LIMIT = 1 << 26
# Hashes per step: the step's temporaries (8 words per hash) stay in the CPU's cache.
_CHUNK = 16384
# Values per block past which the split block rate is 1.0 in double precision.
_SATURATED_LOAD = 2000.0


def blocked_fpp(num_blocks: int, ndv: int) -> float:
    """False positive rate of a filter of ``num_blocks`` blocks holding ``ndv`` hashes.

    A probe lands in a block holding ``i`` values with Poisson probability (mean
    ``ndv / num_blocks``) and passes when all 8 words have its bit: ``sum P(i) (1-(31/32)^i)^8``.
    Same computation as the JVM's ``SbbfSizing.blockedFpp``.
    """
    if ndv == 0:
        return 0.0
    lam = ndv / num_blocks
    if lam > _SATURATED_LOAD:  # every bit of the block set, but for a chance under e^-40
        return 1.0
    lo = max(0, int(lam - 12 * math.sqrt(lam) - 20))
    hi = int(lam + 12 * math.sqrt(lam) + 40)
    log_lam = math.log(lam)
    log_miss = math.log(31.0 / 32.0)
    log_fact = 0.0  # log((i - 1)!) on entering the loop below at i = lo
    for i in range(1, lo):
        log_fact += math.log(i)
    total = 0.0
    for i in range(lo, hi + 1):
        if i > 0:
            log_fact += math.log(i)
        p = math.exp(i * log_lam - lam - log_fact)
        total += p * (-math.expm1(i * log_miss)) ** 8
    return min(1.0, total)


def optimal_num_bytes(ndv: int, fpp: float, power_of_two: bool = False) -> int:
    """Bytes of an ``sbbf`` filter for ``ndv`` distinct values at false positive rate ``fpp``.

    ``power_of_two=False`` (the default, as everywhere in bloomindex and as an index's default
    ``sizing = 'exact'``): the smallest multiple of 32 bytes whose split-block false positive
    rate meets ``fpp``. ``True``: Arrow C++'s rule for Parquet files (``m = -8 ndv /
    ln(1 - fpp^(1/8))`` bits, rounded up to a power of two), the size Parquet writers give a
    filter. Either way 32 B to 128 MiB.

    >>> optimal_num_bytes(1000, 0.01), optimal_num_bytes(1000, 0.01, power_of_two=True)
    (1344, 2048)
    """
    check_ndv(ndv)
    check_fpp(fpp)
    check_power_of_two(power_of_two)
    if power_of_two:
        # As the JVM's SbbfSizing.optimalBits in double arithmetic: log(0) is -inf, x / 0 is
        # +-inf or nan (an fpp so small that 1 - fpp^(1/8) rounds to 1 wants the largest filter).
        base = 1 - math.pow(fpp, 1.0 / 8)
        denominator = math.log(base) if base > 0 else -math.inf
        m = -8.0 * ndv / denominator if denominator != 0 else (math.nan if ndv == 0 else -math.inf)
        max_bits = MAX_BYTES * 8
        bits = max_bits if (math.isnan(m) or math.isinf(m) or m > max_bits) else int(m)
        bits = max(bits, MIN_BYTES * 8)
        if bits & (bits - 1):
            bits = 1 << bits.bit_length()
        return min(bits, max_bits) // 8
    lo, hi = 1, MAX_BYTES // 32
    if blocked_fpp(hi, ndv) > fpp:
        return MAX_BYTES
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if blocked_fpp(mid, ndv) <= fpp:
            hi = mid
        else:
            lo = mid + 1
    return lo * 32


class Sbbf:
    """A split block Bloom filter exactly as Parquet defines it.

    >>> f = Sbbf.for_ndv(1000, 0.01)
    >>> f.insert(["apple", "pear"], "string")
    >>> f.might_contain("apple", "string")
    True
    >>> Sbbf.deserialize(f.serialize()) == f
    True

    The bit set is ``num_bytes // 32`` blocks of eight little-endian 32-bit words
    (:meth:`bitset_bytes`); :meth:`serialize` puts Parquet's Thrift header before it.
    """

    __slots__ = ("_words", "stored")

    #: The design's name in an index's options (see :mod:`bloomindex.filters`).
    algorithm = "sbbf"
    #: The hash function :meth:`insert` hashes plain-encoded values with (see :func:`~bloomindex.hash_values`).
    hash_name = "xxh64"

    def __init__(self, num_bytes: int):
        check_sbbf_bytes(num_bytes)
        self._words = np.zeros((int(num_bytes) // 32, 8), dtype=np.uint32)

    @classmethod
    def for_ndv(cls, ndv: int, fpp: float, power_of_two: bool = False) -> "Sbbf":
        """An empty filter sized for ``ndv`` distinct values at ``fpp``: the smallest that
        meets it, or with ``power_of_two=True`` Parquet writers' size (see :func:`optimal_num_bytes`)."""
        return cls(optimal_num_bytes(ndv, fpp, power_of_two))

    @classmethod
    def deserialize(cls, data: bytes | bytearray | memoryview) -> "Sbbf":
        """Reads :meth:`serialize`'s form (Parquet's: Thrift ``BloomFilterHeader``, then the
        bit set), as a Parquet file or an index stores it. Bytes after the bit set are
        ignored, as Parquet readers do; the deprecated MurmurHash3 form is refused (read it
        with :meth:`SbbfMurmur3.deserialize <bloomindex.filters.SbbfMurmur3.deserialize>`)."""
        data = check_data(data)
        if is_murmur3_header(data):
            raise ValueError("data: the deprecated MurmurHash3 form (sbbf-murmur3); read it with "
                             "SbbfMurmur3.deserialize")
        num_bytes, header_len = read_sbbf_header(data)
        bitset = data[header_len:header_len + num_bytes]
        if len(bitset) != num_bytes:
            raise ValueError(f"data: header says {num_bytes} bytes of bit set, {len(bitset)} follow")
        return cls._from_bitset(bitset)

    @classmethod
    def _from_bitset(cls, bitset: bytes) -> "Sbbf":
        """A filter over a copy of a bit set in Parquet's layout (no header)."""
        check_sbbf_bytes(len(bitset))
        f = cls.__new__(cls)
        f._words = np.frombuffer(bitset, dtype="<u4").astype(np.uint32).reshape(-1, 8)
        return f

    @property
    def num_bytes(self) -> int:
        return self._words.size * 4

    @property
    def num_blocks(self) -> int:
        return self._words.shape[0]

    def _locate(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Block index and the eight bit positions of each hash (``h`` is ``np.uint64``)."""
        blocks = ((h >> np.uint64(32)) * np.uint64(self.num_blocks)) >> np.uint64(32)
        low = h.astype(np.uint32)  # keeps the low 32 bits
        with np.errstate(over="ignore"):
            shifts = (low[:, None] * SALT[None, :]) >> np.uint32(27)
        return blocks.astype(np.intp), shifts

    def insert_hashes(self, hashes: np.ndarray) -> None:
        """Inserts 64-bit hashes (``np.uint64``), as Parquet's ``filter_insert``.

        Works in chunks that stay in cache. Filters up to 8 MiB use a scratch of one byte per
        filter bit (repeated blocks need no ``ufunc.at``: setting a byte twice is harmless,
        and packing little-endian bits gives the words' LE bytes); larger ones OR rows in
        place and redo the few hashes whose block appeared twice in a chunk.

        ``hashes``: a NumPy integer array (signed ones wrap), or a list or tuple of ints;
        other types are a ``TypeError``.
        """
        h = np.ascontiguousarray(hashes_array(hashes).ravel())
        if h.size == 0:
            return
        if self._words.size * 32 <= _SCRATCH_BITS_LIMIT:
            scratch = np.zeros(self._words.size * 32, dtype=np.uint8)
            lanes = np.arange(8, dtype=np.intp) * 32
            for start in range(0, h.size, _CHUNK):
                blocks, shifts = self._locate(h[start:start + _CHUNK])
                scratch[(blocks[:, None] * 256 + lanes + shifts).ravel()] = 1
            packed = np.packbits(scratch, bitorder="little").view("<u4")
            self._words |= packed.reshape(self._words.shape)
            return
        for start in range(0, h.size, _CHUNK):
            blocks, shifts = self._locate(h[start:start + _CHUNK])
            masks = np.left_shift(np.uint32(1), shifts)
            while blocks.size:
                # With repeated blocks in `blocks`, the last row written wins: check, redo.
                self._words[blocks] |= masks
                done = ((self._words[blocks] & masks) == masks).all(axis=1)
                blocks, masks = blocks[~done], masks[~done]

    def check_hashes(self, hashes: np.ndarray) -> np.ndarray:
        """``np.bool_`` per hash (``hashes`` as :meth:`insert_hashes`'s), in their shape: False
        when it was certainly never inserted."""
        arr = hashes_array(hashes)
        h = np.ascontiguousarray(arr.ravel())
        out = np.empty(h.size, dtype=np.bool_)
        for start in range(0, h.size, _CHUNK):
            blocks, shifts = self._locate(h[start:start + _CHUNK])
            masks = np.left_shift(np.uint32(1), shifts)
            out[start:start + _CHUNK] = ((self._words[blocks] & masks) == masks).all(axis=1)
        return out.reshape(arr.shape)

    def insert(self, values: Iterable[Any], spark_type: str) -> None:
        """Hashes non-null ``values`` as Spark type ``spark_type`` (e.g. ``'bigint'``) and inserts them."""
        check_stored(self, spark_type)
        self.insert_hashes(hash_values(values, spark_type, self.hash_name))

    def might_contain(self, value: Any, spark_type: str) -> bool:
        """False when ``value`` (of Spark type ``spark_type``) is certainly not in the filter."""
        if value is None:
            raise ValueError("value: None is never in a Bloom filter; use the null count")
        return bool(self.check([value], spark_type)[0])

    def check(self, values: Iterable[Any], spark_type: str) -> np.ndarray:
        """:meth:`might_contain` for many non-null values at once: ``np.bool_`` per value (a
        float or double zero is looked for as either zero, as Spark's equality matches both)."""
        check_stored(self, spark_type)
        return check_values(self.check_hashes, values, spark_type, self.hash_name)

    def merge(self, other: "Sbbf") -> "Sbbf":
        """ORs ``other`` (an :class:`Sbbf` of the same size) into this filter and returns ``self``."""
        if not isinstance(other, Sbbf):
            raise TypeError(f"other: must be an Sbbf of {self.num_bytes} bytes, got {type(other).__name__}")
        if other.num_bytes != self.num_bytes:
            raise ValueError(f"other: cannot merge {other.num_bytes} bytes into a filter of {self.num_bytes} bytes")
        self._words |= other._words
        return self

    def copy(self) -> "Sbbf":
        f = Sbbf.__new__(Sbbf)
        f._words = self._words.copy()
        return f

    def expected_fpp(self, ndv: int) -> float:
        """The false positive rate to expect once this filter holds ``ndv`` distinct values."""
        check_ndv(ndv)
        return blocked_fpp(self.num_blocks, ndv)

    def bitset_bytes(self) -> bytes:
        """The bit set alone, as Parquet stores it after the header: little-endian words."""
        return self._words.astype("<u4").tobytes()

    def serialize(self) -> bytes:
        """The design's serialized form, Parquet's: Thrift compact ``BloomFilterHeader`` + bit
        set. The JVM's ``BloomFilter.toBytes``; what an index stores; :meth:`deserialize` reads it."""
        return sbbf_header(self.num_bytes) + self.bitset_bytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sbbf) and np.array_equal(self._words, other._words)

    __hash__ = None  # mutable, compared by content: unhashable, like a list

    def __repr__(self) -> str:
        return f"Sbbf(num_bytes={self.num_bytes})"
