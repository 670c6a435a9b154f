"""Where end-to-end latency goes, split on the wire (the latency section's split run).

A packet socket on the loopback interface sees every TCP segment to and from the broker's port,
stamped by the kernel when it was sent. The latency benchmark's records carry their send time in
their first 16 bytes (benchmarks/latency.py), so each record is found on the wire twice: in the
Produce request that took it to the broker and in the Fetch response that took it to the
consumer. Per record:

* client: ``produce()`` → its Produce request on the wire (the producer's queue and linger.ms);
* broker: that request sent → the Fetch response carrying the record sent (the broker's whole
  residence: read, decode, validate, append, the Produce response, the parked Fetch woken and
  answered; it would include a wait for the consumer's next Fetch request if none were parked);
* consumer: that response sent → the consumer application has the record.

From the same records, the p99 / p50 end to end that a broker whose residence never varied would
give: each record's latency with its broker part replaced by the broker part's median. That is
the least p99 / p50 the clients and the machine leave any broker on this setup.

The tap needs CAP_NET_RAW (root); without it the split is skipped. It runs at SCHED_IDLE and
drains its socket every few milliseconds: segments are stamped when sent, not when read, so the
tap takes only CPU time nobody else wants and changes no timestamp.

    sudo .venv/bin/python benchmarks/wire_split.py   # the filter and parser on a local echo
"""

from __future__ import annotations

import ctypes
import os
import re
import socket
import struct
import time
from collections.abc import Iterable, Sequence

SO_TIMESTAMPNS = 35  # linux/socket.h (not exported by Python's socket module)
SO_ATTACH_FILTER = 26
SO_RCVBUFFORCE = 33
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4  # each loopback segment is seen twice: sent (4) and received (0)
DRAIN_EVERY_S = 0.005
STAMP_BYTES = 16


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def value_pattern(size: int) -> re.Pattern[bytes]:
    """A record value of the latency benchmark inside a v2 batch: its length (a zigzag varint),
    the 16-byte send stamp, then the zero padding (32 bytes of it are enough to be sure)."""
    return re.compile(re.escape(_varint(size << 1)) + rb"(.{16})\x00{32}", re.DOTALL)


def port_filter(port: int) -> bytes:
    """A classic BPF program (struct sock_filter[]) keeping the IPv4 TCP segments sent to or
    from ``port`` that carry data (longer than a bare ack), the sending side's copy only."""
    def op(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)

    ld_w, ld_h, ld_b, ld_h_x, ldx_iphl = 0x20, 0x28, 0x30, 0x48, 0xB1
    jeq, jgt, ret = 0x15, 0x25, 0x06
    pkttype = -0x1000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE
    # jump offsets count from the next instruction: 13 accepts, 14 drops
    return b"".join([
        op(ld_w, 0, 0, pkttype), op(jeq, 0, 12, PACKET_OUTGOING),  # 0-1
        op(ld_h, 0, 0, 12), op(jeq, 0, 10, 0x0800),  # 2-3: IPv4
        op(ld_b, 0, 0, 23), op(jeq, 0, 8, socket.IPPROTO_TCP),  # 4-5
        op(ld_h, 0, 0, 16), op(jgt, 0, 6, 52),  # 6-7: IP total length above a bare ack's
        op(ldx_iphl, 0, 0, 14),  # 8: X = IP header length
        op(ld_h_x, 0, 0, 14), op(jeq, 2, 0, port),  # 9-10: source port
        op(ld_h_x, 0, 0, 16), op(jeq, 0, 1, port),  # 11-12: destination port
        op(ret, 0, 0, 0xFFFF), op(ret, 0, 0, 0),  # 13 accept, 14 drop
    ])


def _attach(sock: socket.socket, program: bytes) -> ctypes.Array:
    buf = ctypes.create_string_buffer(program)
    fprog = struct.pack("HL", len(program) // 8, ctypes.addressof(buf))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    return buf  # kept alive by the caller until the filter is attached (the kernel copies it)


def open_tap(port: int) -> socket.socket:
    """The packet socket of the broker's port (PermissionError without CAP_NET_RAW)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    _attach(s, port_filter(port))
    s.bind(("lo", 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 256 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 << 20)
    s.setblocking(False)
    return s


def tap_proc(port: int, cpu: int, started, stop, out) -> None:
    """Child process: capture until ``stop`` is set; send back the captured segments as
    (sent ns, from the broker, frame bytes), or the error that prevented the capture."""
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        s = open_tap(port)
    except OSError as e:
        out.put(f"{type(e).__name__}: {e}")
        started.set()
        return
    started.set()
    got: list[tuple[int, bool, bytes]] = []
    src = struct.pack(">H", port)
    while True:
        done = stop.is_set()
        while True:
            try:
                frame, anc, _flags, _addr = s.recvmsg(70_000, 64)
            except BlockingIOError:
                break
            sec, nsec = struct.unpack("qq", anc[0][2])
            ihl = (frame[14] & 0x0F) * 4
            got.append((sec * 1_000_000_000 + nsec, frame[14 + ihl:16 + ihl] == src, frame))
        if done:
            break
        time.sleep(DRAIN_EVERY_S)
    out.put(got)


def first_seen(segments: Iterable[tuple[int, bool, bytes]], size: int
               ) -> tuple[dict[bytes, int], dict[bytes, int]]:
    """Per send stamp, when a segment first carried it to the broker and from the broker."""
    pattern = value_pattern(size)
    to_broker: dict[bytes, int] = {}
    from_broker: dict[bytes, int] = {}
    for ts, outbound, frame in segments:
        seen = from_broker if outbound else to_broker
        for m in pattern.finditer(frame):
            seen.setdefault(m.group(1), ts)
    return to_broker, from_broker


def percentile(sorted_vals: Sequence[float], q: float) -> float:
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, round(q / 100 * (len(sorted_vals) - 1)))]


def split(received: Iterable[tuple[bytes, int]], to_broker: dict[bytes, int],
          from_broker: dict[bytes, int]) -> dict[str, float]:
    """The split of the records received (send stamp, wall ns the consumer had it), in ms:
    p50 and p99 of each part, and p99 / p50 end to end as measured and with the broker part at
    its median."""
    parts: dict[str, list[float]] = {"e2e": [], "client": [], "broker": [], "consumer": []}
    for stamp, got in received:
        sent_in, sent_out = to_broker.get(stamp), from_broker.get(stamp)
        if sent_in is None or sent_out is None:
            continue  # a record split across two segments: not found whole in one of them
        wall_sent = struct.unpack_from(">q", stamp, 8)[0]
        parts["e2e"].append((got - wall_sent) / 1e6)
        parts["client"].append((sent_in - wall_sent) / 1e6)
        parts["broker"].append((sent_out - sent_in) / 1e6)
        parts["consumer"].append((got - sent_out) / 1e6)
    out: dict[str, float] = {"matched": float(len(parts["e2e"]))}
    if not parts["e2e"]:
        return out
    for name, vals in parts.items():
        s = sorted(vals)
        out[f"{name}.p50"], out[f"{name}.p99"] = percentile(s, 50), percentile(s, 99)
    steady = out["broker.p50"]
    ideal = sorted(e - b + steady for e, b in zip(parts["e2e"], parts["broker"], strict=True))
    out["ratio"] = out["e2e.p99"] / out["e2e.p50"]
    out["ratio_steady_broker"] = percentile(ideal, 99) / percentile(ideal, 50)
    return out


def _self_check() -> None:
    """Capture a local echo of stamped records and print what the tap saw."""
    import multiprocessing as mp
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    ctx = mp.get_context("spawn")
    started, stop, q = ctx.Event(), ctx.Event(), ctx.Queue()
    tap = ctx.Process(target=tap_proc, args=(port, 0, started, stop, q))
    tap.start()
    started.wait(10)

    def echo() -> None:
        conn, _ = srv.accept()
        while data := conn.recv(1 << 16):
            conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    c = socket.create_connection(("127.0.0.1", port))
    for _ in range(100):
        value = struct.pack(">qq", time.monotonic_ns(), time.time_ns()) + bytes(1008)
        c.sendall(_varint(1024 << 1) + value)
        c.recv(1 << 16)
    time.sleep(0.05)
    stop.set()
    got = q.get(timeout=10)
    tap.join(10)
    if isinstance(got, str):
        print(f"tap unavailable: {got}")
        return
    to_b, from_b = first_seen(got, 1024)
    print(f"segments {len(got)}, stamps to the server {len(to_b)}, from it {len(from_b)}")


if __name__ == "__main__":
    _self_check()
