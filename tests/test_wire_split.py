"""The latency benchmark's wire split (benchmarks/wire_split.py): records found in captured
segments by their send stamp, and each record's latency split into producer, broker and
consumer parts with the steady-broker bound computed from them."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "wire_split.py"
_spec = importlib.util.spec_from_file_location("wire_split", _PATH)
assert _spec is not None and _spec.loader is not None
wire_split = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wire_split)

MS = 1_000_000  # ns


def stamp(i: int) -> bytes:
    return struct.pack(">qq", 10_000 + i, 5_000 * MS + i * MS)  # monotonic ns, wall ns


def record_value(s: bytes, size: int = 1024) -> bytes:
    """A record's value as a v2 batch carries it: its zigzag varint length, then the value."""
    return bytes([0x80, 0x10]) + s + bytes(size - len(s))


def test_records_are_found_by_their_stamp_in_both_directions():
    frames = [
        (100, False, b"\x00" * 60 + record_value(stamp(1)) + record_value(stamp(2))),
        (250, True, b"\x11" * 40 + record_value(stamp(1))),
        (300, True, record_value(stamp(2)) + record_value(stamp(1))),  # a re-fetch: first kept
        (310, False, b"\x80\x10" + stamp(3) + b"\x01" * 40),  # not zero padded: not a record
    ]
    to_broker, from_broker = wire_split.first_seen(frames, 1024)
    assert to_broker == {stamp(1): 100, stamp(2): 100}
    assert from_broker == {stamp(1): 250, stamp(2): 300}


def test_value_pattern_follows_the_value_size():
    assert wire_split.value_pattern(100).pattern.startswith(b"\xc8\x01")  # 200 as a varint
    assert wire_split._varint(2048) == b"\x80\x10"


def test_split_parts_add_up_and_the_steady_broker_bound_drops_the_broker_tail():
    received, to_broker, from_broker = [], {}, {}
    for i in range(200):
        s = stamp(i)
        wall_sent = struct.unpack(">q", s[8:])[0]
        producer = (i % 10) * 0.1 * MS  # 0 - 0.9 ms, like linger
        broker = 2 * MS if i % 50 == 7 else 0.3 * MS  # a stall for 2 % of the records
        to_broker[s] = int(wall_sent + producer)
        from_broker[s] = int(wall_sent + producer + broker)
        received.append((s, int(wall_sent + producer + broker + 0.1 * MS)))
    received.append((stamp(999), 0))  # never seen on the wire: left out
    got = wire_split.split(received, to_broker, from_broker)
    assert got["matched"] == 200
    assert got["broker.p50"] == pytest.approx(0.3)
    assert got["broker.p99"] == pytest.approx(2.0)
    assert got["consumer.p50"] == pytest.approx(0.1)
    assert got["client.p50"] == pytest.approx(0.4, abs=0.1)
    assert got["e2e.p50"] == pytest.approx(got["client.p50"] + 0.4, abs=0.01)
    # measured: the stalls make p99; with the broker at its median only the producer's spread
    assert got["ratio"] == pytest.approx(got["e2e.p99"] / got["e2e.p50"])
    assert got["ratio_steady_broker"] == pytest.approx(1.3 / 0.9, abs=0.01)
    assert got["ratio_steady_broker"] < got["ratio"]


def test_nothing_matched_gives_no_figures():
    assert wire_split.split([(stamp(1), 0)], {}, {}) == {"matched": 0.0}


def test_the_packet_filter_is_one_program_of_fifteen_instructions():
    prog = wire_split.port_filter(9092)
    assert len(prog) == 15 * 8
    ops = [struct.unpack("HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    assert ops[-2] == (0x06, 0, 0, 0xFFFF) and ops[-1] == (0x06, 0, 0, 0)  # accept, drop
    for i, (code, jt, jf, _k) in enumerate(ops):
        if code in (0x15, 0x25):  # every jump lands inside the program
            assert i + 1 + jt < len(ops) and i + 1 + jf < len(ops)
    assert sum(1 for op in ops if op[3] == 9092) == 2  # source and destination port
