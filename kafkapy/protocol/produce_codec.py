"""Produce request reader and response writer (versions 3-12), sans-io.

Produce is the hot path that carries record bytes, so it bypasses kio in both directions:

* ``parse_produce_request`` reads the body from the received frame and returns each partition's
  records as a ``memoryview`` slice of that frame: no copy. When the frame is a bytearray the
  slices are writable, so the log can validate the batch, stamp offsets and leader epoch into it
  in place, and append it from there.
* ``encode_produce_response`` writes the response body directly (kio's generic writer costs about
  10 µs per response, a fifth of a small produce request's broker time).

Layout (Kafka's ProduceRequest/ProduceResponse schemas; flexible from v9: compact strings,
arrays and bytes, and a tagged-field section after every struct, whose unknown tags are skipped
as KIP-482 requires)::

    request:  transactional_id nullable string, acks int16, timeout_ms int32,
              [topic: name string, [partition: index int32, records nullable bytes]]
    response: [topic: name, [partition: index int32, error_code int16, base_offset int64,
              log_append_time_ms int64, log_start_offset int64 (v5+),
              record_errors [batch_index int32, message nullable string] (v8+),
              error_message nullable string (v8+)]], throttle_time_ms int32

Malformed bodies raise ``DecodeError``; the server closes the connection, as for any body that
does not decode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .wire import INT16, INT32, INT64, DecodeError, read_uvarint, skip_tagged_fields, uvarint

FLEXIBLE_FROM = 9
MIN_VERSION = 3
MAX_VERSION = 12

Buffer = bytes | bytearray | memoryview


@dataclass(slots=True)
class PartitionData:
    index: int
    records: memoryview | None  # a slice of the request frame; None for null records


@dataclass(slots=True)
class TopicData:
    name: str
    partitions: list[PartitionData] = field(default_factory=list)


@dataclass(slots=True)
class ProduceRequest:
    transactional_id: str | None
    acks: int
    timeout_ms: int
    topics: list[TopicData]


@dataclass(slots=True)
class PartitionResponse:
    index: int
    error_code: int = 0
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    error_message: str | None = None


class _Reader:
    """A bounds-checked cursor over the body."""

    __slots__ = ("buf", "flexible", "n", "pos", "view")

    def __init__(self, buf: Buffer, pos: int, flexible: bool) -> None:
        self.buf = buf
        self.view = memoryview(buf)
        self.n = len(buf)
        self.pos = pos
        self.flexible = flexible

    def _need(self, k: int) -> int:
        p = self.pos
        if k < 0 or p + k > self.n:
            raise DecodeError("produce request truncated")
        self.pos = p + k
        return p

    def int16(self) -> int:
        return INT16.unpack_from(self.buf, self._need(2))[0]

    def int32(self) -> int:
        return INT32.unpack_from(self.buf, self._need(4))[0]

    def length(self) -> int:
        """Length of a string/bytes/array: -1 for null."""
        if self.flexible:
            n, self.pos = read_uvarint(self.buf, self.pos)
            return n - 1
        return self.int32()

    def string(self, nullable: bool) -> str | None:
        if self.flexible:
            n = self.length()
        else:
            n = self.int16()
        if n < 0:
            if nullable and n == -1:
                return None
            raise DecodeError(f"invalid string length {n}")
        p = self._need(n)
        try:
            return bytes(self.view[p : p + n]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"string is not UTF-8: {e}") from None

    def records(self) -> memoryview | None:
        n = self.length()
        if n < 0:
            if n == -1:
                return None
            raise DecodeError(f"invalid records length {n}")
        p = self._need(n)
        return self.view[p : p + n]

    def array_len(self) -> int:
        n = self.length()
        if n < 0:
            if n == -1:
                return 0  # a null array holds nothing (Kafka's reader: null arrays)
            raise DecodeError(f"invalid array length {n}")
        if n > self.n - self.pos:  # every element takes at least one byte
            raise DecodeError(f"array of {n} elements in {self.n - self.pos} bytes")
        return n

    def tags(self) -> None:
        if self.flexible:
            self.pos = skip_tagged_fields(self.buf, self.pos)


def parse_produce_request(frame: Buffer, body_offset: int, version: int) -> ProduceRequest:
    """Read a Produce request body; records are memoryview slices of ``frame``."""
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise DecodeError(f"produce version {version} is not read here")
    r = _Reader(frame, body_offset, version >= FLEXIBLE_FROM)
    transactional_id = r.string(nullable=True)
    acks = r.int16()
    timeout_ms = r.int32()
    topics = []
    for _ in range(r.array_len()):
        name = r.string(nullable=False)
        td = TopicData(name or "")
        for _ in range(r.array_len()):
            index = r.int32()
            td.partitions.append(PartitionData(index, r.records()))
            r.tags()
        r.tags()
        topics.append(td)
    r.tags()
    if r.pos != r.n:
        raise DecodeError(f"{r.n - r.pos} bytes after the produce request body")
    return ProduceRequest(transactional_id, acks, timeout_ms, topics)


def _string(out: bytearray, s: str | None, flexible: bool) -> None:
    if s is None:
        out += b"\x00" if flexible else b"\xff\xff"
        return
    raw = s.encode()
    out += uvarint(len(raw) + 1) if flexible else INT16.pack(len(raw))
    out += raw


def encode_produce_response(
    version: int,
    topics: Sequence[tuple[str, Sequence[PartitionResponse]]],
    throttle_ms: int = 0,
) -> bytes:
    """Encode a Produce response body (no header) for ``version``."""
    flexible = version >= FLEXIBLE_FROM
    out = bytearray()
    out += uvarint(len(topics) + 1) if flexible else INT32.pack(len(topics))
    for name, parts in topics:
        _string(out, name, flexible)
        out += uvarint(len(parts) + 1) if flexible else INT32.pack(len(parts))
        for p in parts:
            out += INT32.pack(p.index)
            out += INT16.pack(p.error_code)
            out += INT64.pack(p.base_offset)
            out += INT64.pack(p.log_append_time_ms)
            if version >= 5:
                out += INT64.pack(p.log_start_offset)
            if version >= 8:
                out += b"\x01" if flexible else b"\x00\x00\x00\x00"  # no record errors
                _string(out, p.error_message, flexible)
            if flexible:
                out += b"\x00"
        if flexible:
            out += b"\x00"
    out += INT32.pack(throttle_ms)
    if flexible:
        out += b"\x00"
    return bytes(out)
