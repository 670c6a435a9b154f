"""Crafted v2 record batches for record validation: each (but ``crc_mismatch``) has a valid CRC
and records that are well-formed or broken in one chosen way (lengths past their end, negative
lengths and counts, trailing bytes, over-long varints, garbage inside compressed data, lying
timestamps, keyless records for a compacted topic). compat_tests/test_crafted_batches.py sends
them to kafkapy and reads back what it stored with the Java consumer, librdkafka and
kafka-python; compat_tests/reference/test_differential_records.py sends them to Apache Kafka 4.4
as well.

``crafted_cases(now_ms)`` returns the cases by name: (topic kind, batch bytes), the topic kind
being one of ``TOPIC_CONFIGS`` (plain, compacted, timestamp-bounded); ``EXPECTED_ERRORS`` and
``EXPECTED_RECORD_ERRORS`` are kafkapy's answers (4.4's, but for the refusals FINDINGS.md lists).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence

from kafkapy.protocol.record_batch import CRC_START, crc32c, encode_varint, pack_batch
from kafkapy.protocol.wire import INT16, UINT32

PLAIN = "plain"
COMPACTED = "compacted"
BOUNDED = "bounded"  # message.timestamp.before/after.max.ms of one hour
HOUR_MS = 3_600_000
TOPIC_CONFIGS: dict[str, dict[str, str]] = {
    PLAIN: {},
    COMPACTED: {"cleanup.policy": "compact"},
    BOUNDED: {
        "message.timestamp.before.max.ms": str(HOUR_MS),
        "message.timestamp.after.max.ms": str(HOUR_MS),
    },
}


def varint(value: int, width: int | None = None) -> bytes:
    """Zigzag varint of ``value``, padded with continuation bytes to ``width`` bytes (an
    over-long but otherwise well-formed encoding) when given."""
    raw = bytearray(encode_varint(value))
    if width is not None and width > len(raw):
        raw[-1] |= 0x80
        raw += b"\x80" * (width - len(raw) - 1) + b"\x00"
    return bytes(raw)


def record_body(
    offset_delta: int,
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: Sequence[tuple[bytes, bytes | None]] = (),
    *,
    ts_delta: int = 0,
    key_len: int | None = None,
    value_len: int | None = None,
    header_count: int | None = None,
    ts_width: int | None = None,
    key_len_width: int | None = None,
    tail: bytes = b"",
) -> bytes:
    """A record without its length prefix; the ``*_len``/``header_count`` overrides write a
    field that disagrees with the bytes that follow, ``*_width`` an over-long varint."""
    out = bytearray(b"\x00")  # attributes
    out += varint(ts_delta, ts_width)
    out += varint(offset_delta)
    klen = (-1 if key is None else len(key)) if key_len is None else key_len
    out += varint(klen, key_len_width) + (key or b"")
    vlen = (-1 if value is None else len(value)) if value_len is None else value_len
    out += varint(vlen) + (value or b"")
    out += varint(len(headers) if header_count is None else header_count)
    for hk, hv in headers:
        out += varint(len(hk)) + hk
        out += varint(-1 if hv is None else len(hv)) + (hv or b"")
    return bytes(out + tail)


def record(body: bytes, length: int | None = None, length_width: int | None = None) -> bytes:
    return varint(len(body) if length is None else length, length_width) + body


def batch(
    records: bytes,
    count: int,
    base_ts: int,
    max_ts: int | None = None,
    *,
    gzip_it: bool = False,
    compressed: bytes | None = None,
) -> bytes:
    """A batch around an encoded records section (gzip-compressed with ``gzip_it``, or the
    given ``compressed`` bytes under the gzip codec), CRC computed."""
    raw = compressed if compressed is not None else gzip.compress(records) if gzip_it else records
    out = bytearray(pack_batch(
        raw, count, base_offset=0, last_offset_delta=count - 1, base_timestamp=base_ts,
        max_timestamp=base_ts if max_ts is None else max_ts))
    if gzip_it or compressed is not None:  # raw is compressed already: only the codec bits
        INT16.pack_into(out, 21, 1)
        UINT32.pack_into(out, 17, crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)


def _with_attributes(raw: bytes, bits: int) -> bytes:
    """``raw`` with attribute ``bits`` set, CRC recomputed."""
    out = bytearray(raw)
    INT16.pack_into(out, 21, int.from_bytes(out[21:23], "big") | bits)
    UINT32.pack_into(out, 17, crc32c(memoryview(out)[CRC_START:]))
    return bytes(out)


def good(n: int = 3) -> bytes:
    return b"".join(record(record_body(i)) for i in range(n))


def crafted_cases(now: int) -> dict[str, tuple[str, bytes]]:
    """The crafted batches by name: (topic kind, batch)."""
    r0 = record(record_body(0))
    r1 = record(record_body(1))
    body1 = record_body(1)
    cases: dict[str, tuple[str, bytes]] = {
        "valid": (PLAIN, batch(good(3), 3, now)),
        "valid_gzip": (PLAIN, batch(good(3), 3, now, gzip_it=True)),
        "record_length_past_end": (PLAIN, batch(r0 + record(body1, length=200), 2, now)),
        "record_length_short": (PLAIN, batch(r0 + record(body1, length=len(body1) - 2), 2, now)),
        "key_length_past_record": (
            PLAIN, batch(r0 + record(record_body(1, key_len=40)), 2, now)),
        "key_length_minus5": (
            PLAIN, batch(r0 + record(record_body(1, key=None, key_len=-5)), 2, now)),
        "value_length_minus7": (
            PLAIN, batch(r0 + record(record_body(1, value=None, value_len=-7)), 2, now)),
        "key_length_minus5_then_key": (
            PLAIN, batch(r0 + record(record_body(1, key_len=-5)), 2, now)),
        "header_count_minus5": (
            PLAIN, batch(r0 + record(record_body(1, header_count=-5)), 2, now)),
        "header_count_past_record": (
            PLAIN, batch(r0 + record(record_body(1, header_count=3)), 2, now)),
        "header_key_length_minus2": (
            PLAIN, batch(r0 + record(record_body(
                1, header_count=1, tail=varint(-2) + varint(1) + b"v")), 2, now)),
        "header_value_length_minus3": (
            PLAIN, batch(r0 + record(record_body(
                1, header_count=1, tail=varint(1) + b"h" + varint(-3))), 2, now)),
        "trailing_bytes_in_record": (PLAIN, batch(r0 + record(body1 + b"\x00\x00"), 2, now)),
        "trailing_bytes_after_records": (PLAIN, batch(r0 + r1 + b"\x00\x00\x00", 2, now)),
        "fewer_records_than_count": (PLAIN, batch(r0 + r1, 3, now)),
        "offset_deltas_0_5": (PLAIN, batch(r0 + record(record_body(5)), 2, now)),
        "offset_deltas_0_5_gzip": (
            PLAIN, batch(r0 + record(record_body(5)), 2, now, gzip_it=True)),
        "gzip_garbage": (
            PLAIN, batch(b"", 2, now, compressed=gzip.compress(r0 + r1)[:12] + b"garbage!" * 4)),
        "gzip_truncated": (
            PLAIN, batch(b"", 2, now, compressed=gzip.compress(r0 + r1)[:-12])),
        "trailing_bytes_after_records_gzip": (
            PLAIN, batch(r0 + r1 + b"\x00\x00\x00", 2, now, gzip_it=True)),
        "record_length_varint_5_bytes": (PLAIN, batch(r0 + record(body1, length_width=5), 2, now)),
        "record_length_varint_6_bytes": (PLAIN, batch(r0 + record(body1, length_width=6), 2, now)),
        "key_length_varint_6_bytes": (
            PLAIN, batch(r0 + record(record_body(1, key_len_width=6)), 2, now)),
        "timestamp_varlong_11_bytes": (
            PLAIN, batch(r0 + record(record_body(1, ts_width=11)), 2, now)),
        "timestamp_varlong_10_bytes": (
            PLAIN, batch(r0 + record(record_body(1, ts_width=10)), 2, now)),
        "length_varint_overflow": (
            PLAIN, batch(r0 + varint(len(body1), 5)[:4] + b"\x70" + body1, 2, now)),
        "max_timestamp_overstated": (
            PLAIN, batch(r0 + r1, 2, now, now + HOUR_MS)),
        "max_timestamp_understated": (
            PLAIN, batch(r0 + record(record_body(1, ts_delta=HOUR_MS // 2)), 2, now, now)),
        "future_record_under_honest_base": (
            BOUNDED, batch(r0 + record(record_body(1, ts_delta=2 * HOUR_MS)) + record(
                record_body(2)), 3, now, now)),
        "past_records": (
            BOUNDED, batch(record(record_body(0, ts_delta=0)) + record(
                record_body(1, ts_delta=3 * HOUR_MS)) + record(record_body(2, ts_delta=0)),
                3, now - 3 * HOUR_MS, now)),
        "keyless_in_compacted": (
            COMPACTED, batch(r0 + record(record_body(1, key=None)) + record(record_body(2)),
                             3, now)),
        "keyed_in_compacted": (COMPACTED, batch(good(3), 3, now)),
        "crc_mismatch": (PLAIN, batch(good(3), 3, now)[:-1] + b"\x01"),
        "log_append_time_from_producer": (PLAIN, _with_attributes(batch(good(2), 2, now), 0x08)),
    }
    return cases


# kafkapy's answer to each case: Kafka 4.4's, except the five cases kafkapy refuses and 4.4
# stores (FINDINGS.md, crafted_records); the cases not listed are stored.
UNKNOWN = "unknown_server_error"
INVALID = "invalid_record"
EXPECTED_ERRORS: dict[str, str] = {
    "record_length_past_end": INVALID,
    "record_length_short": INVALID,
    "key_length_past_record": INVALID,
    "key_length_minus5": INVALID,  # kafkapy only
    "value_length_minus7": INVALID,  # kafkapy only
    "key_length_minus5_then_key": INVALID,
    "header_count_minus5": INVALID,
    "header_count_past_record": INVALID,
    "header_key_length_minus2": INVALID,
    "header_value_length_minus3": INVALID,  # kafkapy only
    "trailing_bytes_in_record": INVALID,
    "trailing_bytes_after_records": INVALID,
    "fewer_records_than_count": INVALID,
    "offset_deltas_0_5": INVALID,  # kafkapy only
    "offset_deltas_0_5_gzip": UNKNOWN,
    "gzip_garbage": UNKNOWN,
    "gzip_truncated": UNKNOWN,
    "trailing_bytes_after_records_gzip": INVALID,
    "record_length_varint_6_bytes": UNKNOWN,
    "key_length_varint_6_bytes": INVALID,
    "timestamp_varlong_11_bytes": INVALID,
    "length_varint_overflow": INVALID,  # kafkapy only
    "future_record_under_honest_base": "invalid_timestamp",
    "past_records": "invalid_timestamp",
    "keyless_in_compacted": INVALID,
    "crc_mismatch": "corrupt_message",
}
# the record_errors batch indices 4.4 gives
EXPECTED_RECORD_ERRORS: dict[str, list[int]] = {
    "future_record_under_honest_base": [1],
    "past_records": [0, 2],
    "keyless_in_compacted": [1],
}
