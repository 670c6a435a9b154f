"""The records of one Kafka record batch, magic 2 (sans-io): the reference reader
(:func:`decode_records`, decompressing as needed) and writer (:func:`encode_batch`, and
:func:`encode_empty_batch` for the cleaner), with zigzag varints. Tests, tools, the cleaner and
the internal topics use them; the produce path does not (see record_batch)."""

from __future__ import annotations

from collections.abc import Sequence

from crc32c import crc32c

from kafkapy.protocol.batch_header import (
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    CONTROL_BIT,
    CRC_START,
    CREATE_TIME,
    DEFAULT_MAX_DECOMPRESSED,
    DELETE_HORIZON_BIT,
    HEADER,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    MAGIC,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
    Buffer,
    CorruptRecordError,
    Record,
    parse_batch_header,
)
from kafkapy.protocol.record_walk import read_varint
from kafkapy.protocol.wire import UINT32


def records_section(buf: Buffer, pos: int, h: BatchHeader, limit: int) -> tuple[Buffer, int, int]:
    """Return (bytes, start, end) of the batch's records, decompressed if needed."""
    start = pos + BATCH_HEADER_SIZE
    end = pos + h.size
    if h.codec == 0:
        return buf, start, end
    from kafkapy.protocol import compression

    data = compression.decompress(h.codec, memoryview(buf)[start:end], limit)
    return data, 0, len(data)


def decode_records(batch: Buffer) -> list[Record]:
    """Decode every record of one batch (decompressing as needed)."""
    h = parse_batch_header(batch)
    if len(batch) < h.size:
        raise CorruptRecordError("truncated record batch")
    b, pos, end = records_section(batch, 0, h, DEFAULT_MAX_DECOMPRESSED)
    log_append = h.timestamp_type == LOG_APPEND_TIME
    out: list[Record] = []
    try:
        for _ in range(h.records_count):
            length, pos = read_varint(b, pos)
            rec_end = pos + length
            pos += 1
            ts_delta, pos = read_varint(b, pos)
            off_delta, pos = read_varint(b, pos)
            klen, pos = read_varint(b, pos)
            key = None if klen < 0 else bytes(b[pos : pos + klen])
            pos += max(klen, 0)
            vlen, pos = read_varint(b, pos)
            value = None if vlen < 0 else bytes(b[pos : pos + vlen])
            pos += max(vlen, 0)
            nh, pos = read_varint(b, pos)
            hdrs: list[tuple[str, bytes | None]] = []
            for _ in range(nh):
                hk, pos = read_varint(b, pos)
                hkey = bytes(b[pos : pos + hk]).decode("utf-8", "replace")
                pos += hk
                hv, pos = read_varint(b, pos)
                hval = None if hv < 0 else bytes(b[pos : pos + hv])
                pos += max(hv, 0)
                hdrs.append((hkey, hval))
            if pos != rec_end or pos > end:
                raise CorruptRecordError("record fields do not match the record length")
            ts = h.max_timestamp if log_append else h.base_timestamp + ts_delta
            out.append(Record(h.base_offset + off_delta, ts, key, value, hdrs))
    except IndexError:
        raise CorruptRecordError("truncated record") from None
    return out


def encode_varint(value: int) -> bytes:
    """Zigzag varint encoding of a signed 64-bit value."""
    v = (value << 1) ^ (value >> 63)
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _encode_record(r: Record, offset_delta: int, base_ts: int) -> bytes:
    parts = [b"\x00", encode_varint(r.timestamp - base_ts), encode_varint(offset_delta)]
    for blob in (r.key, r.value):
        if blob is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(blob)))
            parts.append(bytes(blob))
    parts.append(encode_varint(len(r.headers)))
    for hk, hv in r.headers:
        kb = hk.encode("utf-8")
        parts.append(encode_varint(len(kb)))
        parts.append(kb)
        if hv is None:
            parts.append(encode_varint(-1))
        else:
            parts.append(encode_varint(len(hv)))
            parts.append(bytes(hv))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def encode_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    codec: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    timestamp_type: int = CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    keep_offsets: bool = False,
    last_offset_delta: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """Write one magic-2 batch. Offset deltas are 0..n-1, or ``record.offset - base_offset``
    with ``keep_offsets`` (the cleaner keeps original offsets, leaving gaps). With
    ``delete_horizon_ms`` the batch carries the delete horizon in baseTimestamp (KIP-534) and
    record timestamp deltas are relative to it, so record timestamps are unchanged."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    base_ts = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    max_ts = max(r.timestamp for r in records)
    deltas = [r.offset - base_offset for r in records] if keep_offsets else range(len(records))
    raw = b"".join(_encode_record(r, d, base_ts) for r, d in zip(records, deltas, strict=True))
    return pack_batch(
        raw,
        len(records),
        base_offset=base_offset,
        last_offset_delta=deltas[-1] if last_offset_delta is None else last_offset_delta,
        base_timestamp=base_ts,
        max_timestamp=max_ts,
        codec=codec,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        timestamp_type=timestamp_type,
        is_transactional=is_transactional,
        is_control=is_control,
        partition_leader_epoch=partition_leader_epoch,
        delete_horizon=delete_horizon_ms is not None,
    )


def pack_batch(
    raw: bytes,
    count: int,
    *,
    base_offset: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    codec: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    timestamp_type: int = CREATE_TIME,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    delete_horizon: bool = False,
) -> bytes:
    """A batch around ``count`` encoded records (``raw``, uncompressed; compressed here with
    ``codec``) whose deltas are relative to ``base_offset`` and ``base_timestamp``."""
    if codec:
        from kafkapy.protocol import compression

        raw = compression.compress(codec, raw)
    attributes = codec & CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_BIT
    if is_transactional:
        attributes |= TRANSACTIONAL_BIT
    if is_control:
        attributes |= CONTROL_BIT
    if delete_horizon:
        attributes |= DELETE_HORIZON_BIT
    header = bytearray(
        HEADER.pack(
            base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD + len(raw),
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
    )
    batch = header + raw
    UINT32.pack_into(batch, 17, crc32c(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def encode_empty_batch(h: BatchHeader, *, last_offset_delta: int | None = None) -> bytes:
    """A batch with ``h``'s header fields and no records: what the cleaner keeps when it removes
    every record of a producer's last batch, so the producer's sequence state survives."""
    attributes = h.attributes & ~DELETE_HORIZON_BIT
    lod = h.last_offset_delta if last_offset_delta is None else last_offset_delta
    header = bytearray(
        HEADER.pack(
            h.base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD,
            h.partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            lod,
            h.max_timestamp,
            h.max_timestamp,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            0,
        )
    )
    UINT32.pack_into(header, 17, crc32c(memoryview(header)[CRC_START:]))
    return bytes(header)
