"""Just enough of Thrift's compact protocol to read a Bloom filter's ``BloomFilterHeader``.

pyarrow reads Parquet footers (:mod:`bloomindex.parquet`); what its Python API does not read is
the filter itself, whose header is read here: ``numBytes`` (i32) and the ``algorithm``,
``hash`` and ``compression`` unions, each an empty struct. A struct decodes to a ``{field_id:
value}`` dict of its integer (i16, i32, i64), boolean and struct fields; a field of any other
type (byte, double, binary, list, set, map), such as a later writer may add, is skipped. Every
length is checked against the bytes that remain and nesting is bounded, so hostile input fails
with ``ValueError`` rather than a huge allocation or a deep recursion.
"""

from __future__ import annotations

from typing import Any

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)
_MAX_DEPTH = 64


class CompactReader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos

    def _byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("thrift: unexpected end of data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def _varint(self) -> int:
        result = shift = 0
        while True:
            b = self._byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise ValueError("thrift: varint too long")

    def _zigzag(self) -> int:
        n = self._varint()
        return (n >> 1) ^ -(n & 1)

    def _skip_bytes(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"thrift: length {n} overruns the data")
        self.pos += n

    def _count(self, size: int, what: str) -> int:
        # Every element takes at least one byte: a larger count is damage, not a long list.
        if size > len(self.data) - self.pos:
            raise ValueError(f"thrift: {what} of {size} elements overruns the data")
        return size

    def _value(self, ttype: int, depth: int) -> Any:
        """A struct field's value: an int, a bool or a struct's dict; ``None`` for a skipped type."""
        if depth > _MAX_DEPTH:
            raise ValueError("thrift: nesting too deep")
        if ttype in (_TRUE, _FALSE):  # in a struct, a boolean's type is its value
            return ttype == _TRUE
        if ttype in (_I16, _I32, _I64):
            return self._zigzag()
        if ttype == _STRUCT:
            return self.read_struct(depth + 1)
        if ttype in (_BYTE, _DOUBLE):
            self._skip_bytes(1 if ttype == _BYTE else 8)
        elif ttype == _BINARY:
            self._skip_bytes(self._varint())
        elif ttype in (_LIST, _SET):
            header = self._byte()
            size = header >> 4 if header >> 4 != 15 else self._varint()
            for _ in range(self._count(size, "list")):
                self._element(header & 0x0F, depth)
        elif ttype == _MAP:
            size = self._count(self._varint(), "map")
            if size:
                kv = self._byte()
                for _ in range(size):
                    self._element(kv >> 4, depth)
                    self._element(kv & 0x0F, depth)
        else:
            raise ValueError(f"thrift: unknown type {ttype}")
        return None

    def _element(self, ttype: int, depth: int) -> None:
        """Skips a list's, set's or map's element (there a boolean takes one byte)."""
        if ttype in (_TRUE, _FALSE):
            self._skip_bytes(1)
        else:
            self._value(ttype, depth + 1)

    def read_struct(self, depth: int = 0) -> dict[int, Any]:
        """The struct at the current position, up to its stop byte."""
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self._byte()
            if header == _STOP:
                return fields
            delta = header >> 4
            ttype = header & 0x0F
            fid = last + delta if delta else self._zigzag()
            value = self._value(ttype, depth)
            if value is not None:
                fields[fid] = value
            last = fid


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag_i32(n: int) -> bytes:
    return _varint(((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)
