"""Just enough of Thrift's compact protocol to read Parquet footers and filter headers.

Structs decode to ``{field_id: value}`` dicts, lists to Python lists; unknown fields are
decoded and kept, so the reader never depends on the full Parquet schema. Every length is
checked against the bytes that remain, and nesting is bounded, so hostile input fails with
``ValueError`` rather than a huge allocation or a deep recursion.
"""

from __future__ import annotations

import struct
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

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"thrift: length {n} overruns the data")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def read_value(self, ttype: int, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("thrift: nesting too deep")
        if ttype in (_TRUE, _FALSE):
            # Inside a struct the type carries the value; inside a list it is a byte.
            return ttype == _TRUE
        if ttype == _BYTE:
            b = self._byte()
            return b - 256 if b > 127 else b
        if ttype in (_I16, _I32, _I64):
            return self._zigzag()
        if ttype == _DOUBLE:
            return struct.unpack("<d", self._take(8))[0]
        if ttype == _BINARY:
            return self._take(self._varint())
        if ttype in (_LIST, _SET):
            header = self._byte()
            size = header >> 4
            etype = header & 0x0F
            if size == 15:
                size = self._varint()
            if size > len(self.data) - self.pos:
                raise ValueError(f"thrift: list of {size} elements overruns the data")
            if etype in (_TRUE, _FALSE):
                return [self._byte() == 1 for _ in range(size)]
            return [self.read_value(etype, depth + 1) for _ in range(size)]
        if ttype == _MAP:
            size = self._varint()
            if size == 0:
                return {}
            if size > len(self.data) - self.pos:
                raise ValueError(f"thrift: map of {size} entries overruns the data")
            kv = self._byte()
            return {self.read_value(kv >> 4, depth + 1): self.read_value(kv & 0x0F, depth + 1)
                    for _ in range(size)}
        if ttype == _STRUCT:
            return self.read_struct(depth + 1)
        raise ValueError(f"thrift: unknown type {ttype}")

    def read_struct(self, depth: int = 0) -> dict[int, Any]:
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self._byte()
            if header == _STOP:
                return fields
            delta = header >> 4
            ttype = header & 0x0F
            fid = last + delta if delta else self._zigzag()
            fields[fid] = self.read_value(ttype, depth)
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
