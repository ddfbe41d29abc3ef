"""Reading Bloom filters out of Parquet files, without pyarrow (it has no API for them).

>>> from bloomindex.parquet import read_bloom_filter
>>> f = read_bloom_filter("part-0.parquet", "user_id")   # doctest: +SKIP
>>> f.might_contain(42, "bigint")                         # doctest: +SKIP
"""

from __future__ import annotations

import os
import struct
from typing import Any

from ._thrift import CompactReader, zigzag_i32
from .sbbf import MAX_BYTES, Sbbf

__all__ = ["read_bloom_filter", "bloom_filter_header", "parse_bloom_filter", "read_footer"]

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


def parse_bloom_filter(data: bytes) -> Sbbf:
    """A filter from Parquet's serialized form: header then bitset."""
    num_bytes, header_len = _parse_header(data)
    bitset = data[header_len:header_len + num_bytes]
    if len(bitset) != num_bytes:
        raise ValueError(f"bloom filter: header says {num_bytes} bytes, {len(bitset)} follow")
    return Sbbf.from_bytes(bitset)


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


def read_bloom_filter(path: str | os.PathLike, column: str, row_group: int = 0) -> Sbbf | None:
    """The split block Bloom filter a Parquet writer stored for ``column`` in ``row_group``.

    ``column`` is the dotted path in the Parquet schema. Returns ``None`` when the column
    chunk has no filter. Works whether or not the footer records ``bloom_filter_length``
    (parquet-java 1.13 does not; parquet-rs and Arrow 25+ do).
    """
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
        num_bytes, header_len = _parse_header(head)
        f.seek(offset + header_len)
        bitset = f.read(num_bytes)
    if len(bitset) != num_bytes:
        raise ValueError(f"{path}: bloom filter of {num_bytes} bytes runs past the end of the file")
    return Sbbf.from_bytes(bitset)
