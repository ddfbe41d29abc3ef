"""Reading Bloom filters out of Parquet files: pyarrow reads the footer, this module the filter.

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

import json
import os
import struct
from typing import Any

from ._checks import MAX_BYTES
from ._headers import MURMUR3_HEADER, is_murmur3_header, read_murmur3_header, read_sbbf_header
from .filters import SbbfMurmur3
from .sbbf import Sbbf
from .types import StoredColumn

__all__ = ["read_bloom_filter", "parse_bloom_filter", "read_footer"]

_MAGIC = b"PAR1"
# Without bloom_filter_length we read this much at the offset: enough for any header.
_HEADER_PROBE = 256

# pyarrow exposes ColumnChunkMetaData.bloom_filter_offset / _length from 25.0.0 (apache/arrow#49927).
_PYARROW = ">=25"
# read_footer's keys, parquet.thrift's field ids: FileMetaData.num_rows = 3, row_groups = 4;
# RowGroup.columns = 1, num_rows = 3; ColumnChunk.meta_data = 3; ColumnMetaData.path_in_schema = 3,
# bloom_filter_offset = 14, bloom_filter_length = 15.
_FMD_NUM_ROWS, _FMD_ROW_GROUPS, _RG_COLUMNS, _RG_NUM_ROWS, _CC_META, _CMD_PATH = 3, 4, 1, 3, 3, 3
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


def _pyarrow_parquet() -> Any:
    """``pyarrow.parquet``, which reads the footers: imported when a Parquet file is read (a bare
    filter needs no pyarrow), and checked for ``bloom_filter_offset`` (pyarrow 25 and later)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ImportError(f"reading Bloom filters out of Parquet files needs pyarrow {_PYARROW}: "
                          f"pip install 'pyarrow{_PYARROW}'") from e
    if not hasattr(pq.ColumnChunkMetaData, "bloom_filter_offset"):
        import pyarrow

        raise ImportError(f"reading Bloom filters out of Parquet files needs pyarrow {_PYARROW} "
                          f"(bloom_filter_offset), not {pyarrow.__version__}: pip install 'pyarrow{_PYARROW}'")
    return pq


def _check_tail(path: str | os.PathLike) -> None:
    """``ValueError`` naming what is wrong unless the last 8 bytes of ``path`` say a plaintext
    Parquet footer of a length that fits the file precedes them."""
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


def _metadata(path: str | os.PathLike) -> Any:
    """pyarrow's ``FileMetaData`` of ``path``; ``ValueError`` for a damaged file."""
    pq = _pyarrow_parquet()
    _check_tail(path)
    try:
        with pq.ParquetFile(os.fspath(path)) as pf:
            return pf.metadata
    except (OSError, ValueError) as e:  # pyarrow's ArrowIOError, ArrowInvalid
        raise ValueError(f"{path}: damaged Parquet footer ({str(e).strip()})") from e


def read_footer(path: str | os.PathLike) -> dict[int, Any]:
    """What locates the Bloom filters in the Parquet footer (``FileMetaData``) of ``path``, read
    by pyarrow, as a ``{field_id: value}`` dict under parquet.thrift's field ids: ``num_rows``
    (3) and ``row_groups`` (4); a row group's ``columns`` (1) and ``num_rows`` (3); a column
    chunk's ``meta_data`` (3) with ``path_in_schema`` (3; pyarrow's dotted path split at the
    dots), and ``bloom_filter_offset`` (14) and ``bloom_filter_length`` (15) where the footer
    has them. The rest of the footer: ``pyarrow.parquet.ParquetFile(path).metadata``."""
    md = _metadata(path)
    groups = []
    for g in range(md.num_row_groups):
        group = md.row_group(g)
        columns = []
        for c in range(group.num_columns):
            chunk = _chunk(group, c, path)
            meta: dict[int, Any] = {_CMD_PATH: [p.encode("utf-8") for p in chunk.path_in_schema.split(".")]}
            for fid, value in ((_CMD_BLOOM_OFFSET, chunk.bloom_filter_offset),
                               (_CMD_BLOOM_LENGTH, chunk.bloom_filter_length)):
                if value is not None:
                    meta[fid] = value
            columns.append({_CC_META: meta})
        groups.append({_RG_COLUMNS: columns, _RG_NUM_ROWS: group.num_rows})
    return {_FMD_NUM_ROWS: md.num_rows, _FMD_ROW_GROUPS: groups}


def _chunk(group: Any, c: int, path: Any) -> Any:
    """pyarrow's metadata of column chunk ``c`` (an encrypted column's cannot be read)."""
    try:
        return group.column(c)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: column chunk {c} unreadable ({str(e).strip()})") from e


def _column_chunk(md: Any, column: str, row_group: int, path: Any) -> tuple[Any, int]:
    """The chunk of ``column`` (a dotted path) in ``row_group`` and its column's index."""
    if isinstance(row_group, bool) or not isinstance(row_group, int):
        raise ValueError(f"row_group: expected an int, got {row_group!r}")
    if not 0 <= row_group < md.num_row_groups:
        raise ValueError(f"row_group: {path} has {md.num_row_groups} row groups, asked for {row_group}")
    group = md.row_group(row_group)
    names, found = [], []
    for c in range(group.num_columns):
        chunk = _chunk(group, c, path)
        if chunk.path_in_schema == column:
            found.append((chunk, c))
        names.append(chunk.path_in_schema)
    if len(found) > 1:
        # A top-level column whose name has a dot and a nested field: the same dotted path.
        raise ValueError(f"column: {column!r} names {len(found)} columns of {path} (a name with a dot and a "
                         "nested field's path are written alike); it cannot tell which filter is meant")
    if found:
        return found[0]
    raise ValueError(f"column: {column!r} is not in {path} (columns: {', '.join(names)})")


def _stored_column(md: Any, column: str, c: int) -> StoredColumn:
    """How the file stores column ``c`` (``column``): what its filter's hashes are of."""
    schema = md.schema.column(c)
    try:
        logical = json.loads(schema.logical_type.to_json())
    except (ValueError, AttributeError):
        logical = {}
    return StoredColumn(column, schema.physical_type, logical if isinstance(logical, dict) else {}, schema.length or 0)


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
    md = _metadata(path)
    chunk, index = _column_chunk(md, column, row_group, path)
    filt = _read_chunk_filter(path, chunk)
    if filt is not None:
        # Checked against the Spark type of the values looked for (StoredColumn.check).
        filt.stored = _stored_column(md, column, index)
    return filt


def _read_chunk_filter(path: str | os.PathLike, chunk: Any) -> Sbbf | SbbfMurmur3 | None:
    offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
    if offset is None:
        return None
    size = os.path.getsize(path)
    if not 0 <= offset < size:
        raise ValueError(f"{path}: bloom filter offset {offset} is outside the file ({size} bytes)")
    with open(path, "rb") as f:
        f.seek(offset)
        if length is not None:
            if not 0 < length <= size - offset:
                raise ValueError(f"{path}: bloom filter length {length} at offset {offset} does not fit "
                                 f"the file ({size} bytes)")
            return parse_bloom_filter(f.read(length))
        # Older writers (parquet-java 1.13) record no length: the header says how much follows.
        cls, header_len, num_bytes = _locate(f.read(_HEADER_PROBE))
        f.seek(offset)
        data = f.read(header_len + num_bytes)
    if len(data) != header_len + num_bytes:
        raise ValueError(f"{path}: bloom filter of {num_bytes} bytes runs past the end of the file")
    return cls.deserialize(data)
