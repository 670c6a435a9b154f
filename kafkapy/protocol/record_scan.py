"""A record scanner for the log cleaner, sans-io: where each record of a batch starts and ends,
its offset and timestamp deltas and its key, without building Record objects.

``scan_records(buf, pos, end, count)`` returns, for the ``count`` magic-2 records of
``buf[pos:end]`` (an uncompressed records section), one tuple each::

    (offset_delta, timestamp_delta, key (bytes or None), value is null,
     position of the attributes byte, position after the timestamp delta, end of the record)

which is what the cleaner needs to decide on a record and to copy it into a rewritten batch
without decoding and encoding it again. It runs in C when the native speedups are built
(protocol/_speedups.c); ``scan_records_py`` is the reference, and the two return the same tuples
and raise the same ValueError on the same input (tests/test_record_scan.py checks them against
each other). Reads never go past ``end``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

Buffer = bytes | bytearray | memoryview
ScannedRecord = tuple[int, int, bytes | None, bool, int, int, int]


def _varint(b: Buffer, pos: int, n: int) -> tuple[int, int]:
    v = 0
    shift = 0
    while True:
        if pos >= n:
            raise ValueError("truncated record")
        x = b[pos]
        pos += 1
        if shift == 63:
            v |= (x & 0x01) << 63
            huge = bool(x & 0x7E)
        else:
            v |= (x & 0x7F) << shift
            huge = False
        if x < 0x80:
            if huge:  # saturates as the C reader does
                return (-(2**63) if v & 1 else 2**63 - 1), pos
            return (v >> 1) ^ -(v & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint is too long")


def scan_records_py(b: Buffer, pos: int, end: int, count: int) -> list[ScannedRecord]:
    if pos < 0 or end < pos or end > len(b) or count < 0:
        raise ValueError("truncated record")
    n = end
    out: list[ScannedRecord] = []
    for _ in range(count):
        length, pos = _varint(b, pos, n)
        if length < 6 or length > n - pos:
            raise ValueError("invalid record length")
        rec_end = pos + length
        attr = pos
        pos += 1
        ts_delta, pos = _varint(b, pos, n)
        body = pos
        off_delta, pos = _varint(b, pos, n)
        klen, pos = _varint(b, pos, n)
        if klen >= 0:
            if klen > rec_end - pos:
                raise ValueError("truncated record")
            key: bytes | None = bytes(b[pos : pos + klen])
            pos += klen
        elif klen == -1:
            key = None
        else:
            raise ValueError("invalid key length")
        vlen, pos = _varint(b, pos, n)
        if vlen < -1:
            raise ValueError("invalid value length")
        if vlen > 0:
            if vlen > rec_end - pos:
                raise ValueError("truncated record")
            pos += vlen
        headers, pos = _varint(b, pos, n)
        if headers < 0:
            raise ValueError("invalid header count")
        for _ in range(headers):
            hk, pos = _varint(b, pos, n)
            if hk < 0 or hk > rec_end - pos:
                raise ValueError("truncated record")
            pos += hk
            hv, pos = _varint(b, pos, n)
            if hv < -1 or (hv > 0 and hv > rec_end - pos):
                raise ValueError("truncated record")
            if hv > 0:
                pos += hv
        if pos != rec_end:
            raise ValueError("record fields do not match the record length")
        out.append((off_delta, ts_delta, key, vlen == -1, attr, body, rec_end))
    return out


def _native() -> Callable[[Buffer, int, int, int], list[ScannedRecord]] | None:
    if os.environ.get("KAFKAPY_PURE_PYTHON"):
        return None
    try:
        from kafkapy.protocol._speedups import scan_records as native
    except ImportError:
        return None
    return native


scan_records = _native() or scan_records_py
