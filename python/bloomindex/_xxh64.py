"""XXH64 (seed 0) of 4- and 8-byte little-endian values, vectorized over NumPy arrays.

The hash Parquet's Bloom filters use. Byte strings go through the ``xxhash`` package; the
fixed-width case is done here in uint64 arithmetic so that millions of values hash without a
Python loop. Follows the XXH64 specification for inputs shorter than 32 bytes.
"""

from __future__ import annotations

import numpy as np

P1 = np.uint64(0x9E3779B185EBCA87)
P2 = np.uint64(0xC2B2AE3D27D4EB4F)
P3 = np.uint64(0x165667B19E3779F9)
P4 = np.uint64(0x85EBCA77C2B2AE63)
P5 = np.uint64(0x27D4EB2F165667C5)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _avalanche(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint64(33)
    h *= P2
    h ^= h >> np.uint64(29)
    h *= P3
    h ^= h >> np.uint64(32)
    return h


def xxh64_u32(values: np.ndarray) -> np.ndarray:
    """XXH64 of each value's 4 little-endian bytes; ``values`` is any 32-bit integer array."""
    lanes = np.ascontiguousarray(values).view(np.uint32).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(lanes.shape, P5 + np.uint64(4), dtype=np.uint64)
        h ^= lanes * P1
        h = _rotl(h, 23) * P2 + P3
        return _avalanche(h)


def xxh64_u64(values: np.ndarray) -> np.ndarray:
    """XXH64 of each value's 8 little-endian bytes; ``values`` is any 64-bit array."""
    lanes = np.ascontiguousarray(values).view(np.uint64)
    with np.errstate(over="ignore"):
        k1 = _rotl(lanes * P2, 31) * P1
        h = np.full(lanes.shape, P5 + np.uint64(8), dtype=np.uint64)
        h ^= k1
        h = _rotl(h, 27) * P1 + P4
        return _avalanche(h)
