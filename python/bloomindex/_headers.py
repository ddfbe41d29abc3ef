"""The headers of the three designs' serialized forms: written, and read with every field checked.

==================  ==========================================================================
design              header (then the bit set)
==================  ==========================================================================
``sbbf``            Parquet's Thrift compact ``BloomFilterHeader{numBytes, BLOCK, XXHASH,
                    UNCOMPRESSED}``
``sbbf-murmur3``    12 bytes: int32 LE numBytes, hash 0 (MURMUR3_X64_128), algorithm 0 (BLOCK)
``classic``         8 bytes: int32 LE numBits, int32 LE numHashFunctions
==================  ==========================================================================

Parquet's two forms cannot be confused: a Thrift header starts with byte 0x15, the low byte of
no power of two from 32 up.
"""

from __future__ import annotations

import struct

from ._checks import MAX_BYTES, MIN_BYTES, check_power_of_two_bytes
from ._thrift import CompactReader, zigzag_i32

MURMUR3_HEADER = struct.Struct("<iii")
CLASSIC_HEADER = struct.Struct("<ii")
_EMPTY_UNION_MEMBER = b"\x1c\x00\x00"  # field 1: an empty struct, then the union's stop


def sbbf_header(num_bytes: int) -> bytes:
    """Thrift compact ``BloomFilterHeader{numBytes, BLOCK, XXHASH, UNCOMPRESSED}``."""
    return (b"\x15" + zigzag_i32(num_bytes)
            + b"\x1c" + _EMPTY_UNION_MEMBER
            + b"\x1c" + _EMPTY_UNION_MEMBER
            + b"\x1c" + _EMPTY_UNION_MEMBER
            + b"\x00")


def read_sbbf_header(data: bytes) -> tuple[int, int]:
    """(numBytes, header length) of the Thrift header at the start of ``data``; ``ValueError``
    for anything this project cannot read."""
    reader = CompactReader(data)
    header = reader.read_struct()
    num_bytes = header.get(1)
    for fid, what in ((2, "algorithm BLOCK"), (3, "hash XXHASH"), (4, "compression UNCOMPRESSED")):
        union = header.get(fid)
        if not isinstance(union, dict) or 1 not in union:
            raise ValueError(f"bloom filter header: unsupported or missing {what} ({union!r})")
    if not isinstance(num_bytes, int) or not MIN_BYTES <= num_bytes <= MAX_BYTES or num_bytes % 32:
        raise ValueError(f"bloom filter header: bad numBytes {num_bytes!r} (a multiple of 32 "
                         f"between {MIN_BYTES} and {MAX_BYTES})")
    return num_bytes, reader.pos


def murmur3_header(num_bytes: int) -> bytes:
    return MURMUR3_HEADER.pack(num_bytes, 0, 0)


def read_murmur3_header(data: bytes) -> int:
    """numBytes of the 12-byte header at the start of ``data``; ``ValueError`` for anything else."""
    if len(data) < MURMUR3_HEADER.size:
        raise ValueError(f"data: {len(data)} bytes are too short for the 12-byte sbbf-murmur3 header")
    n, hash_id, alg = MURMUR3_HEADER.unpack_from(data, 0)
    if hash_id != 0:
        raise ValueError(f"data: unsupported hash {hash_id} in an sbbf-murmur3 header (0 = MURMUR3_X64_128)")
    if alg != 0:
        raise ValueError(f"data: unsupported algorithm {alg} in an sbbf-murmur3 header (0 = BLOCK)")
    check_power_of_two_bytes(n)
    return n


def is_murmur3_header(data: bytes) -> bool:
    """True when ``data`` starts with the deprecated 12-byte header rather than a Thrift one."""
    try:
        read_murmur3_header(data[:MURMUR3_HEADER.size])
    except ValueError:
        return False
    return True


def classic_header(num_bits: int, num_hashes: int) -> bytes:
    return CLASSIC_HEADER.pack(num_bits, num_hashes)


def read_classic_header(data: bytes) -> tuple[int, int]:
    """(numBits, numHashFunctions) of the 8-byte header at the start of ``data`` (the number
    of hash functions is checked by the filter)."""
    if len(data) < CLASSIC_HEADER.size:
        raise ValueError(f"data: {len(data)} bytes are too short for the 8-byte header of a classic filter")
    num_bits, num_hashes = CLASSIC_HEADER.unpack_from(data, 0)
    if num_bits <= 0 or num_bits % 64 or num_bits // 8 > MAX_BYTES:
        raise ValueError(f"data: numBits must be a positive multiple of 64 up to {MAX_BYTES * 8}, got {num_bits}")
    return num_bits, num_hashes
