"""MurmurHash3 x64 128 (low 64 bits) with parquet-mr's seed, vectorized for 4- and 8-byte values.

The hash of the deprecated blocked Bloom filter design (``sbbf-murmur3``). Byte strings go
through the ``mmh3`` package; values of 4 and 8 little-endian bytes are hashed here in uint64
arithmetic (inputs under 16 bytes only take MurmurHash3's tail and finalization steps).
"""

from __future__ import annotations

import mmh3
import numpy as np

# parquet-mr's DEFAULT_SEED (a System.nanoTime() it once drew); parquet-cpp used it too.
SEED = 1361930890

_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k: np.ndarray) -> np.ndarray:
    k ^= k >> np.uint64(33)
    k *= np.uint64(0xFF51AFD7ED558CCD)
    k ^= k >> np.uint64(33)
    k *= np.uint64(0xC4CEB9FE1A85EC53)
    k ^= k >> np.uint64(33)
    return k


def _short(lanes: np.ndarray, length: int) -> np.ndarray:
    """h1 of inputs of ``length`` (1 to 8) bytes whose little-endian value is ``lanes``."""
    with np.errstate(over="ignore"):
        k1 = _rotl(lanes * _C1, 31) * _C2
        h1 = np.full(lanes.shape, np.uint64(SEED), dtype=np.uint64) ^ k1
        h2 = np.full(lanes.shape, np.uint64(SEED ^ length), dtype=np.uint64)
        h1 ^= np.uint64(length)
        h1 += h2
        h2 += h1
        h1 = _fmix(h1)
        h2 = _fmix(h2)
        return h1 + h2


def murmur3_u32(values: np.ndarray) -> np.ndarray:
    """The hash of each value's 4 little-endian bytes; ``values`` is any 32-bit integer array."""
    return _short(np.ascontiguousarray(values).view(np.uint32).astype(np.uint64), 4)


def murmur3_u64(values: np.ndarray) -> np.ndarray:
    """The hash of each value's 8 little-endian bytes; ``values`` is any 64-bit array."""
    return _short(np.ascontiguousarray(values).view(np.uint64).copy(), 8)


def murmur3_bytes(data: bytes) -> int:
    """The hash of a byte string, as an int in [0, 2**64)."""
    return mmh3.hash64(data, SEED, signed=False)[0]
