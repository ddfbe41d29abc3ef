"""The three Bloom filter designs an index can hold, with one interface, bit for bit the JVM's.

==============  ==========================================  =======  ================
name            design                                      hash     sizes
==============  ==========================================  =======  ================
``sbbf``        Parquet's split block filter (:class:`Sbbf`)  XXH64    multiples of 32 B
``sbbf-murmur3``  the earlier blocked design (:class:`SbbfMurmur3`)  Murmur3  powers of two
``classic``     m bits, k hashes (:class:`ClassicBloomFilter`)  XXH64    multiples of 8 B
==============  ==========================================  =======  ================

>>> from bloomindex.filters import for_ndv, deserialize
>>> f = for_ndv(1000, 0.01, algorithm="classic")
>>> f.insert([1, 2, 3], "bigint")
>>> deserialize(f.serialize(), "classic") == f
True

Each class has ``for_ndv``, ``insert_hashes`` / ``check_hashes`` (``np.uint64``),
``insert`` / ``check`` / ``might_contain`` (Spark values of a ``spark_type``, hashed with the
design's ``hash_name``), ``merge``, ``copy``, ``expected_fpp``, ``serialize`` / ``deserialize``
(the design's serialized form, header and bit set: the JVM's ``BloomFilter.toBytes`` and
``FilterAlgorithm.fromBytes``, what an index stores) and ``bitset_bytes`` (the bit set alone,
the JVM's ``bitsetBytes``).

Sizes: ``power_of_two=False`` is the default everywhere (:func:`for_ndv`, :func:`num_bytes`,
each class's ``for_ndv``, :func:`bloomindex.optimal_num_bytes`): the smallest filter that meets
``fpp``, as an index's default ``sizing = 'exact'``.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Union

import numpy as np

from ._checks import (CLASSIC_MIN_BYTES, MAX_BYTES, MAX_HASHES, check_classic_bytes, check_data, check_fpp, check_ndv,
                      check_num_hashes, check_power_of_two, check_power_of_two_bytes, check_sbbf_bytes, check_str,
                      hashes_array)
from ._headers import (CLASSIC_HEADER, MURMUR3_HEADER, classic_header, murmur3_header, read_classic_header,
                       read_murmur3_header)
from .hashing import check_values, hash_values
from .types import check_stored
from .sbbf import Sbbf, blocked_fpp, optimal_num_bytes

__all__ = ["ALGORITHMS", "BloomFilter", "ClassicBloomFilter", "SbbfMurmur3", "deserialize",
           "expected_fpp", "for_ndv", "num_bytes", "num_hashes_for"]

ALGORITHMS = ("sbbf", "sbbf-murmur3", "classic")
_CHUNK = 16384
_SCRATCH_BITS_LIMIT = 1 << 26


def _check_algorithm(algorithm: str) -> str:
    check_str("algorithm", algorithm, "'sbbf', 'sbbf-murmur3' or 'classic'")
    name = algorithm.strip().lower()
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm: expected one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    return name


class _Values:
    """Spark values in and out of a filter, hashed with the design's ``hash_name``."""

    __slots__ = ()
    hash_name = "xxh64"

    def insert(self, values: Iterable[Any], spark_type: str) -> None:
        """Hashes non-null ``values`` of Spark type ``spark_type`` and inserts them."""
        check_stored(self, spark_type)
        self.insert_hashes(hash_values(values, spark_type, self.hash_name))

    def check(self, values: Iterable[Any], spark_type: str) -> np.ndarray:
        """``np.bool_`` per non-null value: False when it was certainly never inserted (a float
        or double zero is looked for as either zero, as Spark's equality matches both)."""
        check_stored(self, spark_type)
        return check_values(self.check_hashes, values, spark_type, self.hash_name)

    def might_contain(self, value: Any, spark_type: str) -> bool:
        """False when ``value`` (of Spark type ``spark_type``) is certainly not in the filter."""
        if value is None:
            raise ValueError("value: None is never in a Bloom filter; use the null count")
        return bool(self.check([value], spark_type)[0])


class SbbfMurmur3(_Values):
    """The deprecated blocked design of ``bloom_filter.bin``: Parquet's blocks and salt, MurmurHash3.

    The block of hash ``h`` is ``(h >> 32) & (num_blocks - 1)`` (sizes are powers of two, 32 B
    to 128 MiB); the low 32 bits set one bit per word as in :class:`Sbbf`. Serialized with a
    12-byte header: three little-endian int32 (num_bytes, hash 0 = MURMUR3_X64_128,
    algorithm 0 = BLOCK).

    >>> f = SbbfMurmur3(1024)
    >>> f.insert(["hello", "parquet", "bloom", "filter"], "string")
    >>> f.might_contain("hello", "string")
    True
    """

    __slots__ = ("_bits", "_log2_blocks", "stored")

    algorithm = "sbbf-murmur3"
    hash_name = "murmur3"

    def __init__(self, num_bytes: int):
        check_power_of_two_bytes(num_bytes)
        self._bits = Sbbf(num_bytes)
        self._log2_blocks = (int(num_bytes) // 32).bit_length() - 1

    @classmethod
    def _wrap(cls, bits: Sbbf) -> "SbbfMurmur3":
        f = cls.__new__(cls)
        f._bits = bits
        f._log2_blocks = bits.num_blocks.bit_length() - 1
        return f

    @classmethod
    def for_ndv(cls, ndv: int, fpp: float, power_of_two: bool = False) -> "SbbfMurmur3":
        """Sized for ``ndv`` values at ``fpp``: the smallest power of two meeting it, or with
        ``power_of_two=True`` Parquet writers' formula; see :func:`num_bytes`."""
        return cls(num_bytes(ndv, fpp, "sbbf-murmur3", power_of_two))

    @classmethod
    def deserialize(cls, data: bytes | bytearray | memoryview) -> "SbbfMurmur3":
        """Reads :meth:`serialize`'s form: the 12-byte header and the bit set, nothing after
        it (the whole of parquet-testing's ``bloom_filter.bin``)."""
        data = check_data(data)
        n = read_murmur3_header(data)
        header_len = MURMUR3_HEADER.size
        if len(data) - header_len != n:
            raise ValueError(f"data: header says {n} bytes of bit set, {len(data) - header_len} follow")
        return cls._wrap(Sbbf._from_bitset(data[header_len:]))

    @property
    def num_bytes(self) -> int:
        return self._bits.num_bytes

    @property
    def num_blocks(self) -> int:
        return self._bits.num_blocks

    def _remap(self, hashes: np.ndarray) -> np.ndarray:
        """Hashes whose multiply-shift block is this design's masked block (see the JVM's)."""
        h = np.ascontiguousarray(hashes_array(hashes).ravel())
        b = self._log2_blocks
        upper = h >> np.uint64(32)
        rotated = ((upper >> np.uint64(b)) | (upper << np.uint64(32 - b))) & np.uint64(0xFFFFFFFF)
        return (rotated << np.uint64(32)) | (h & np.uint64(0xFFFFFFFF))

    def insert_hashes(self, hashes: np.ndarray) -> None:
        self._bits.insert_hashes(self._remap(hashes))

    def check_hashes(self, hashes: np.ndarray) -> np.ndarray:
        arr = hashes_array(hashes)
        return self._bits.check_hashes(self._remap(arr)).reshape(arr.shape)

    def merge(self, other: "SbbfMurmur3") -> "SbbfMurmur3":
        if not isinstance(other, SbbfMurmur3):
            raise TypeError(f"other: must be an SbbfMurmur3 of {self.num_bytes} bytes, got {type(other).__name__}")
        if other.num_bytes != self.num_bytes:
            raise ValueError(f"other: cannot merge {other!r} into {self!r}")
        self._bits.merge(other._bits)
        return self

    def copy(self) -> "SbbfMurmur3":
        return SbbfMurmur3._wrap(self._bits.copy())

    def expected_fpp(self, ndv: int) -> float:
        """The false positive rate to expect once this filter holds ``ndv`` distinct values."""
        return self._bits.expected_fpp(ndv)

    def bitset_bytes(self) -> bytes:
        """The bit set alone: little-endian 32-bit words, as :class:`Sbbf`'s."""
        return self._bits.bitset_bytes()

    def serialize(self) -> bytes:
        """The design's serialized form: the 12-byte header, then the bit set. The JVM's
        ``BloomFilter.toBytes``; what an index stores; :meth:`deserialize` reads it."""
        return murmur3_header(self.num_bytes) + self.bitset_bytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SbbfMurmur3) and self._bits == other._bits

    __hash__ = None

    def __repr__(self) -> str:
        return f"SbbfMurmur3(num_bytes={self.num_bytes})"


class ClassicBloomFilter(_Values):
    """parquet-mr's first Bloom filter: ``m`` bits as 64-bit words, ``k`` positions per value.

    Position ``i`` (1 to k) of hash ``h`` is ``c % m`` with ``c = h1 + i * h2`` in 32-bit
    wrapping arithmetic (``h1``, ``h2`` the low and high halves of ``h``, as signed int32),
    complemented when negative (Kirsch and Mitzenmacher). Serialized as int32 LE numBits,
    int32 LE numHashFunctions, then the words little-endian.

    >>> f = ClassicBloomFilter.for_ndv(1000, 0.01)
    >>> f.num_hashes
    7
    """

    __slots__ = ("_words", "num_hashes")

    algorithm = "classic"
    hash_name = "xxh64"
    MIN_BYTES = CLASSIC_MIN_BYTES
    MAX_HASHES = MAX_HASHES

    def __init__(self, num_bytes: int, num_hashes: int):
        check_classic_bytes(num_bytes)
        check_num_hashes(num_hashes)
        self._words = np.zeros(int(num_bytes) // 8, dtype=np.uint64)
        self.num_hashes = int(num_hashes)

    @classmethod
    def for_ndv(cls, ndv: int, fpp: float, power_of_two: bool = False) -> "ClassicBloomFilter":
        """Sized for ``ndv`` values at ``fpp``: ``k = round(-log2 fpp)``, see :func:`num_bytes`."""
        return cls(num_bytes(ndv, fpp, "classic", power_of_two), num_hashes_for(fpp))

    @classmethod
    def deserialize(cls, data: bytes | bytearray | memoryview) -> "ClassicBloomFilter":
        """Reads :meth:`serialize`'s form: the 8-byte header and the bit set, nothing after it."""
        data = check_data(data)
        num_bits, k = read_classic_header(data)
        header_len = CLASSIC_HEADER.size
        if len(data) - header_len != num_bits // 8:
            raise ValueError(f"data: header says {num_bits // 8} bytes of bit set, {len(data) - header_len} follow")
        f = cls(CLASSIC_MIN_BYTES, k)
        f._words = np.frombuffer(data, dtype="<u8", offset=header_len).astype(np.uint64)
        return f

    @property
    def num_bytes(self) -> int:
        return self._words.size * 8

    @property
    def num_bits(self) -> int:
        return self._words.size * 64

    def _positions(self, h: np.ndarray) -> np.ndarray:
        """(n, k) bit positions of ``np.uint64`` hashes."""
        h1 = (h & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        h2 = (h >> np.uint64(32)).astype(np.uint32)
        i = np.arange(1, self.num_hashes + 1, dtype=np.uint32)
        with np.errstate(over="ignore"):
            c = (h1[:, None] + i[None, :] * h2[:, None]).view(np.int32)
        c = c ^ (c >> np.int32(31))  # ~c where negative
        return c.astype(np.int64) % self.num_bits

    def insert_hashes(self, hashes: np.ndarray) -> None:
        h = np.ascontiguousarray(hashes_array(hashes).ravel())
        if h.size == 0:
            return
        if self.num_bits <= _SCRATCH_BITS_LIMIT:
            scratch = np.zeros(self.num_bits, dtype=np.uint8)
            for start in range(0, h.size, _CHUNK):
                scratch[self._positions(h[start:start + _CHUNK]).ravel()] = 1
            self._words |= np.packbits(scratch, bitorder="little").view("<u8").astype(np.uint64)
            return
        for start in range(0, h.size, _CHUNK):
            p = self._positions(h[start:start + _CHUNK]).ravel()
            np.bitwise_or.at(self._words, p >> 6, np.left_shift(np.uint64(1), (p & 63).astype(np.uint64)))

    def check_hashes(self, hashes: np.ndarray) -> np.ndarray:
        arr = hashes_array(hashes)
        h = np.ascontiguousarray(arr.ravel())
        out = np.empty(h.size, dtype=np.bool_)
        for start in range(0, h.size, _CHUNK):
            p = self._positions(h[start:start + _CHUNK])
            bits = (self._words[p >> 6] >> (p & 63).astype(np.uint64)) & np.uint64(1)
            out[start:start + _CHUNK] = bits.all(axis=1)
        return out.reshape(arr.shape)

    def merge(self, other: "ClassicBloomFilter") -> "ClassicBloomFilter":
        if not isinstance(other, ClassicBloomFilter):
            raise TypeError(f"other: must be a ClassicBloomFilter of {self.num_bytes} bytes and "
                            f"{self.num_hashes} hashes, got {type(other).__name__}")
        if other.num_bits != self.num_bits or other.num_hashes != self.num_hashes:
            raise ValueError(f"other: cannot merge {other!r} into {self!r}")
        self._words |= other._words
        return self

    def copy(self) -> "ClassicBloomFilter":
        f = ClassicBloomFilter(8, self.num_hashes)
        f._words = self._words.copy()
        return f

    def expected_fpp(self, ndv: int) -> float:
        """The false positive rate to expect once this filter holds ``ndv`` distinct values."""
        return classic_fpp(self.num_bits, self.num_hashes, ndv)

    def bitset_bytes(self) -> bytes:
        """The bit set alone: little-endian 64-bit words."""
        return self._words.astype("<u8").tobytes()

    def serialize(self) -> bytes:
        """The design's serialized form: the 8-byte header (numBits, numHashFunctions), then
        the bit set. The JVM's ``BloomFilter.toBytes``; what an index stores; :meth:`deserialize`
        reads it."""
        return classic_header(self.num_bits, self.num_hashes) + self.bitset_bytes()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ClassicBloomFilter) and other.num_hashes == self.num_hashes
                and np.array_equal(self._words, other._words))

    __hash__ = None

    def __repr__(self) -> str:
        return f"ClassicBloomFilter(num_bytes={self.num_bytes}, num_hashes={self.num_hashes})"


def num_hashes_for(fpp: float) -> int:
    """The classic design's ``k`` for a target rate: ``round(-log2 fpp)``, at least 1."""
    check_fpp(fpp)
    k = max(1, math.floor(-math.log(fpp) / math.log(2) + 0.5))
    if k > MAX_HASHES:
        raise ValueError(f"fpp: {fpp} needs {k} hash functions, more than the classic design's 64")
    return k


def classic_fpp(num_bits: int, num_hashes: int, ndv: int) -> float:
    """``(1 - e^(-k n / m))^k``: the classic filter's rate with ``ndv`` values in ``num_bits``."""
    check_ndv(ndv)
    if ndv == 0:
        return 0.0
    return math.pow(-math.expm1(-float(num_hashes) * ndv / num_bits), num_hashes)


def num_bytes(ndv: int, fpp: float, algorithm: str = "sbbf", power_of_two: bool = False) -> int:
    """Bit set bytes of ``algorithm``'s filter for ``ndv`` values at ``fpp``; same as the JVM.

    ``power_of_two=False`` (the default): the smallest size of the design meeting ``fpp`` (an
    index's ``sizing = 'exact'``); ``True``: a power of two (``sizing = 'power-of-two'``).
    ``sbbf``: :func:`bloomindex.optimal_num_bytes`. ``sbbf-murmur3``: powers of two only; the
    smallest meeting the split block rate, or with ``power_of_two=True`` Parquet writers'
    formula. ``classic``: the smallest multiple of 64 bits meeting ``(1 - e^(-k n / m))^k <= fpp``,
    or that rounded up to a power of two.
    """
    name = _check_algorithm(algorithm)
    check_ndv(ndv)
    check_fpp(fpp)
    check_power_of_two(power_of_two)
    if name == "sbbf":
        return optimal_num_bytes(ndv, fpp, power_of_two)
    if name == "sbbf-murmur3":
        exact = optimal_num_bytes(ndv, fpp, power_of_two)
        return exact if power_of_two or not exact & (exact - 1) else min(1 << exact.bit_length(), MAX_BYTES)
    k = num_hashes_for(fpp)
    lo, hi = 1, MAX_BYTES // 8
    if classic_fpp(hi * 64, k, ndv) > fpp:
        exact = MAX_BYTES
    else:
        while lo < hi:
            mid = lo + (hi - lo) // 2
            if classic_fpp(mid * 64, k, ndv) <= fpp:
                hi = mid
            else:
                lo = mid + 1
        exact = lo * 8
    if not power_of_two or not exact & (exact - 1):
        return exact
    return min(1 << exact.bit_length(), MAX_BYTES)


BloomFilter = Union[Sbbf, SbbfMurmur3, ClassicBloomFilter]


def for_ndv(ndv: int, fpp: float, algorithm: str = "sbbf", power_of_two: bool = False) -> BloomFilter:
    """An empty filter of ``algorithm`` sized for ``ndv`` values at ``fpp`` (the index's sizing;
    ``power_of_two`` as in :func:`num_bytes`)."""
    name = _check_algorithm(algorithm)
    n = num_bytes(ndv, fpp, name, power_of_two)
    if name == "sbbf":
        return Sbbf(n)
    if name == "sbbf-murmur3":
        return SbbfMurmur3(n)
    return ClassicBloomFilter(n, num_hashes_for(fpp))


def deserialize(data: bytes | bytearray | memoryview, algorithm: str) -> BloomFilter:
    """Reads ``filter.serialize()`` of ``algorithm`` (an index's stored filters are these): the
    class's ``deserialize``.

    >>> deserialize(SbbfMurmur3(32).serialize(), "sbbf-murmur3")
    SbbfMurmur3(num_bytes=32)
    """
    name = _check_algorithm(algorithm)
    cls = {"sbbf": Sbbf, "sbbf-murmur3": SbbfMurmur3, "classic": ClassicBloomFilter}[name]
    return cls.deserialize(data)


def expected_fpp(num_bytes: int, ndv: int, algorithm: str = "sbbf", fpp: float | None = None) -> float:
    """The false positive rate theory expects of an ``algorithm`` filter of ``num_bytes`` bytes
    holding ``ndv`` distinct values (as each filter's ``expected_fpp(ndv)``).

    ``classic`` needs ``fpp``, the target its number of hash functions comes from
    (:func:`num_hashes_for`); the blocked designs ignore it.

    >>> expected_fpp(1312, 1000) > 0.01 >= expected_fpp(1344, 1000)   # optimal_num_bytes(1000, 0.01) == 1344
    True
    >>> round(expected_fpp(1200, 1000, "classic", fpp=0.01), 4)
    0.01
    """
    name = _check_algorithm(algorithm)
    check_ndv(ndv)
    if fpp is not None:
        check_fpp(fpp)
    if name == "classic":
        if fpp is None:
            raise ValueError("fpp: the classic design's rate depends on k, which comes from fpp")
        check_classic_bytes(num_bytes)
        return classic_fpp(num_bytes * 8, num_hashes_for(fpp), ndv)
    if name == "sbbf-murmur3":
        check_power_of_two_bytes(num_bytes)
    else:
        check_sbbf_bytes(num_bytes)
    return blocked_fpp(num_bytes // 32, ndv)
