"""Reading Bloom filters out of Parquet files, without pyarrow (it has no API for them).

>>> from bloomindex.parquet import read_bloom_filter
>>> f = read_bloom_filter("part-0.parquet", "user_id")   # doctest: +SKIP
>>> f.might_contain(42, "bigint")                         # doctest: +SKIP
>>> read_bloom_filter("bloom_filter.bin")                 # doctest: +SKIP
SbbfMurmur3(num_bytes=1024)

Both of Parquet's forms are read: the current one (Thrift ``BloomFilterHeader``, XXH64) as
:class:`~bloomindex.Sbbf`, and the deprecated first one (a 12-byte little-endian header,
MurmurHash3) as :class:`~bloomindex.filters.SbbfMurmur3`. They cannot be confused: a Thrift
header starts with byte 0x15, the low byte of no power of two from 32 up. Each form is its
class's ``serialize()`` / ``deserialize()``; this module finds them in files.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from ._checks import MAX_BYTES
from ._headers import MURMUR3_HEADER, is_murmur3_header, read_murmur3_header, read_sbbf_header
from ._thrift import CompactReader
from .filters import SbbfMurmur3
from .sbbf import Sbbf

__all__ = ["read_bloom_filter", "parse_bloom_filter", "read_footer"]

_MAGIC = b"PAR1"
# Without bloom_filter_length we read this much at the offset: enough for any header.
_HEADER_PROBE = 256

# FileMetaData.row_groups = 4; RowGroup.columns = 1; ColumnChunk.meta_data = 3;
# ColumnMetaData.path_in_schema = 3, bloom_filter_offset = 14, bloom_filter_length = 15.
_FMD_ROW_GROUPS, _RG_COLUMNS, _CC_META, _CMD_PATH = 4, 1, 3, 3
_CMD_BLOOM_OFFSET, _CMD_BLOOM_LENGTH = 14, 15


def _locate(head: bytes) -> tuple[type[Sbbf] | type[SbbfMurmur3], int, int]:
    """The class of the filter whose serialized form starts ``head`` (at least its header),
    its header's length and its bit set's."""
    if is_murmur3_header(head):
        return SbbfMurmur3, MURMUR3_HEADER.size, read_murmur3_header(head)
    num_bytes, header_len = read_sbbf_header(head)
    return Sbbf, header_len, num_bytes


def _parse_any(data: bytes) -> tuple[Sbbf | SbbfMurmur3, int]:
    """The filter at the start of ``data`` (either form) and how many bytes it takes."""
    cls, header_len, num_bytes = _locate(data)
    used = header_len + num_bytes
    if len(data) < used:
        raise ValueError(f"bloom filter: header says {num_bytes} bytes, {len(data) - header_len} follow")
    return cls.deserialize(data[:used]), used


def parse_bloom_filter(data: bytes | bytearray | memoryview) -> Sbbf | SbbfMurmur3:
    """A filter from either of Parquet's serialized forms, header then bit set (bytes after it
    are ignored): an :class:`~bloomindex.Sbbf` or a :class:`~bloomindex.filters.SbbfMurmur3`."""
    return _parse_any(bytes(data))[0]


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
        cls, header_len, num_bytes = _locate(f.read(_HEADER_PROBE))
        f.seek(offset)
        data = f.read(header_len + num_bytes)
    if len(data) != header_len + num_bytes:
        raise ValueError(f"{path}: bloom filter of {num_bytes} bytes runs past the end of the file")
    return cls.deserialize(data)
