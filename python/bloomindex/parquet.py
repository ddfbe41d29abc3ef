"""Reading Bloom filters out of Parquet files, without pyarrow (it has no API for them).

>>> from bloomindex.parquet import read_bloom_filter
>>> f = read_bloom_filter("part-0.parquet", "user_id")   # doctest: +SKIP
>>> f.might_contain(42, "bigint")                         # doctest: +SKIP
>>> read_bloom_filter("bloom_filter.bin")                 # doctest: +SKIP
SbbfMurmur3(num_bytes=1024)

Both of Parquet's forms are read: the current one (Thrift ``BloomFilterHeader``, XXH64) as
:class:`~bloomindex.Sbbf`, and the deprecated first one (a 12-byte little-endian header,
MurmurHash3) as :class:`~bloomindex.filters.SbbfMurmur3`. They cannot be confused: a Thrift
header starts with byte 0x15, the low byte of no power of two from 32 up.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from ._thrift import CompactReader, zigzag_i32
from .filters import SbbfMurmur3, _parse_murmur3_header
from .sbbf import MAX_BYTES, Sbbf

__all__ = ["read_bloom_filter", "bloom_filter_header", "parse_bloom_filter", "parse_sbbf", "read_footer"]

_MAGIC = b"PAR1"
# Without bloom_filter_length we read this much at the offset: enough for any header.
_HEADER_PROBE = 256

# FileMetaData.row_groups = 4; RowGroup.columns = 1; ColumnChunk.meta_data = 3;
# ColumnMetaData.path_in_schema = 3, bloom_filter_offset = 14, bloom_filter_length = 15.
_FMD_ROW_GROUPS, _RG_COLUMNS, _CC_META, _CMD_PATH = 4, 1, 3, 3
_CMD_BLOOM_OFFSET, _CMD_BLOOM_LENGTH = 14, 15


def bloom_filter_header(num_bytes: int) -> bytes:
    """Thrift compact ``BloomFilterHeader{numBytes, BLOCK, XXHASH, UNCOMPRESSED}``."""
    empty_union_member = b"\x1c\x00\x00"  # field 1: empty struct, then the union's stop
    return (b"\x15" + zigzag_i32(num_bytes)
            + b"\x1c" + empty_union_member
            + b"\x1c" + empty_union_member
            + b"\x1c" + empty_union_member
            + b"\x00")


def _parse_header(data: bytes) -> tuple[int, int]:
    """Returns (numBytes, header length); refuses what this project cannot read."""
    reader = CompactReader(data)
    header = reader.read_struct()
    num_bytes = header.get(1)
    for fid, what in ((2, "algorithm BLOCK"), (3, "hash XXHASH"), (4, "compression UNCOMPRESSED")):
        union = header.get(fid)
        if not isinstance(union, dict) or 1 not in union:
            raise ValueError(f"bloom filter header: unsupported or missing {what} ({union!r})")
    if not isinstance(num_bytes, int) or num_bytes <= 0 or num_bytes > MAX_BYTES or num_bytes % 32:
        raise ValueError(f"bloom filter header: bad numBytes {num_bytes!r}")
    return num_bytes, reader.pos


def _is_deprecated(head: bytes) -> bool:
    """True when ``head`` starts with the deprecated 12-byte header rather than a Thrift one."""
    try:
        _parse_murmur3_header(head[:12])
    except ValueError:
        return False
    return True


def _parse_any(data: bytes) -> tuple[Sbbf | SbbfMurmur3, int]:
    """The filter at the start of ``data`` (either form) and how many bytes it takes."""
    if _is_deprecated(data):
        num_bytes, header_len = _parse_murmur3_header(data), 12
    else:
        num_bytes, header_len = _parse_header(data)
    bitset = data[header_len:header_len + num_bytes]
    if len(bitset) != num_bytes:
        raise ValueError(f"bloom filter: header says {num_bytes} bytes, {len(bitset)} follow")
    f = SbbfMurmur3.from_bytes(bitset) if header_len == 12 else Sbbf.from_bytes(bitset)
    return f, header_len + num_bytes


def parse_bloom_filter(data: bytes) -> Sbbf | SbbfMurmur3:
    """A filter from one of Parquet's serialized forms, header then bitset (bytes after it are ignored)."""
    return _parse_any(bytes(data))[0]


def parse_sbbf(data: bytes) -> Sbbf:
    """Parquet's current form only (Thrift header): what :meth:`Sbbf.from_parquet_bytes` reads."""
    f = parse_bloom_filter(data)
    if not isinstance(f, Sbbf):
        raise ValueError("bloom filter: the deprecated MurmurHash3 form; read it with SbbfMurmur3.deserialize")
    return f


def read_footer(path: str | os.PathLike) -> dict[int, Any]:
    """The Parquet footer (``FileMetaData``) of ``path`` as a ``{field_id: value}`` dict."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size < 12:
            raise ValueError(f"{path}: too small to be a Parquet file")
        f.seek(size - 8)
        tail = f.read(8)
        if tail[4:] == b"PARE":
            raise ValueError(f"{path}: the footer is encrypted; read it with the key through Spark")
        if tail[4:] != _MAGIC:
            raise ValueError(f"{path}: not a Parquet file (no PAR1 magic at the end)")
        (footer_len,) = struct.unpack("<i", tail[:4])
        if footer_len <= 0 or footer_len > size - 12:
            raise ValueError(f"{path}: footer length {footer_len} does not fit the file")
        f.seek(size - 8 - footer_len)
        return CompactReader(f.read(footer_len)).read_struct()


def _column_meta(footer: dict[int, Any], column: str, row_group: int, path: Any) -> dict[int, Any]:
    groups = footer.get(_FMD_ROW_GROUPS) or []
    if not 0 <= row_group < len(groups):
        raise ValueError(f"row_group: {path} has {len(groups)} row groups, asked for {row_group}")
    names = []
    for chunk in groups[row_group].get(_RG_COLUMNS, []):
        meta = chunk.get(_CC_META) or {}
        name = ".".join(p.decode("utf-8") for p in meta.get(_CMD_PATH, []))
        if name == column:
            return meta
        names.append(name)
    raise ValueError(f"column: {column!r} is not in {path} (columns: {', '.join(names)})")


def _is_parquet(path: str | os.PathLike) -> bool:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() < 12:
            return False
        f.seek(-4, os.SEEK_END)
        return f.read(4) in (_MAGIC, b"PARE")


def read_bloom_filter(path: str | os.PathLike, column: str | None = None,
                      row_group: int = 0) -> Sbbf | SbbfMurmur3 | None:
    """The Bloom filter a Parquet writer stored for ``column`` in ``row_group``.

    ``column`` is the dotted path in the Parquet schema. Returns ``None`` when the column
    chunk has no filter. Works whether or not the footer records ``bloom_filter_length``
    (parquet-java 1.13 does not; parquet-rs and Arrow 25+ do), and for the deprecated
    MurmurHash3 form as well as the current one. A file that is not a Parquet file is read as
    one bare serialized filter (such as parquet-testing's ``bloom_filter.bin``), without
    ``column``.
    """
    if not _is_parquet(path):
        if column is not None:
            raise ValueError(f"column: {path} is not a Parquet file but a bare filter; pass no column")
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + _HEADER_PROBE + 1)
        filt, used = _parse_any(data)
        if used != len(data):
            raise ValueError(f"{path}: {len(data) - used} bytes follow the filter; not one bare filter")
        return filt
    if column is None:
        raise ValueError(f"column: required to read a filter out of the Parquet file {path}")
    meta = _column_meta(read_footer(path), column, row_group, path)
    offset = meta.get(_CMD_BLOOM_OFFSET)
    if offset is None:
        return None
    length = meta.get(_CMD_BLOOM_LENGTH)
    with open(path, "rb") as f:
        f.seek(offset)
        if length is not None:
            return parse_bloom_filter(f.read(length))
        head = f.read(_HEADER_PROBE)
        if _is_deprecated(head):
            num_bytes, header_len = _parse_murmur3_header(head), 12
        else:
            num_bytes, header_len = _parse_header(head)
        f.seek(offset + header_len)
        bitset = f.read(num_bytes)
    if len(bitset) != num_bytes:
        raise ValueError(f"{path}: bloom filter of {num_bytes} bytes runs past the end of the file")
    return SbbfMurmur3.from_bytes(bitset) if header_len == 12 else Sbbf.from_bytes(bitset)
