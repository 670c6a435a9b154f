"""Consumer-group benchmark (issue 3): rebalance time and OffsetCommit throughput.

    .venv/bin/python benchmarks/groups.py               # 5 repeats
    .venv/bin/python benchmarks/groups.py --repeat 10 --seconds 5

- Rebalance: 10 confluent-kafka consumers subscribe to one 20-partition topic at once; the time
  from the first subscribe until every partition is owned by exactly one of them. Classic
  protocol (group.initial.rebalance.delay.ms=0, range assignor) and the consumer protocol
  (KIP-848, server-side uniform assignor, heartbeat interval 100 ms). A fresh group per repeat;
  p50 and p99 over the repeats (with few repeats p99 is the slowest one).
- OffsetCommit: simple-consumer commits (OffsetCommit v9, generation -1, one partition each),
  pipelined 64 deep on raw connections so the client costs little: one group on one connection,
  and 10 groups at once (10 connections, one thread each). Each commit is appended to
  __consumer_offsets before it is answered.
- Broker peak RSS: VmHWM of the broker process over the whole run.

Prints a markdown table on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import io
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from kio.schema.offset_commit.v9 import request as commit9
from kio.serial import entity_writer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kafkapy.testing import BrokerProcess
from kafkapy.testing.probe import recv_exact

PARTITIONS = 20
MEMBERS = 10
DEPTH = 64


def say(msg: str) -> None:
    print(f"[groups {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


# -- rebalance -------------------------------------------------------------------------------------


def rebalance_once(bootstrap: str, group: str, protocol: str) -> float:
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 1000,
    }
    if protocol == "consumer":
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"partition.assignment.strategy": "range", "heartbeat.interval.ms": 100})
    consumers = [Consumer(conf) for _ in range(MEMBERS)]
    try:
        start = time.monotonic()
        for c in consumers:
            c.subscribe(["bench-groups"])
        deadline = start + 60
        while time.monotonic() < deadline:
            for c in consumers:
                c.poll(0.001)
            owned = [tp.partition for c in consumers for tp in c.assignment()]
            if sorted(owned) == list(range(PARTITIONS)) and all(c.assignment() for c in consumers):
                return time.monotonic() - start
        raise RuntimeError(f"{protocol}: no settled assignment within 60 s")
    finally:
        for c in consumers:
            c.close()


# -- commits ---------------------------------------------------------------------------------------


def commit_frame(group: str, corr: int, offset: int) -> bytes:
    req = commit9.OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=(
            commit9.OffsetCommitRequestTopic(
                name="bench-groups",
                partitions=(
                    commit9.OffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=offset,
                        committed_leader_epoch=-1,
                        committed_metadata="",
                    ),
                ),
            ),
        ),
    )
    buf = io.BytesIO()
    entity_writer(type(req))(buf, req)
    cid = b"bench"
    head = struct.pack(">hhi", 8, 9, corr) + struct.pack(">h", len(cid)) + cid + b"\x00"
    payload = head + buf.getvalue()
    return struct.pack(">i", len(payload)) + payload


def commit_worker(bootstrap: str, group: str, seconds: float, counts: list, i: int) -> None:
    host, port = bootstrap.rsplit(":", 1)
    frames = [commit_frame(group, corr, corr) for corr in range(DEPTH)]
    done = 0
    with socket.create_connection((host, int(port))) as sock:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            sock.sendall(b"".join(frames))
            for _ in range(DEPTH):
                (size,) = struct.unpack(">i", recv_exact(sock, 4))
                body = recv_exact(sock, size)
                # header: correlation id + tagged fields; the partition error is the last int16
                # before the trailing tagged-field bytes
                if body[-5:-3] != b"\x00\x00":
                    raise RuntimeError(f"commit failed: {body.hex()}")
            done += DEPTH
    counts[i] = done


def commit_rate(bootstrap: str, groups: int, seconds: float) -> float:
    counts = [0] * groups
    threads = [
        threading.Thread(target=commit_worker, args=(bootstrap, f"bench-c{i}", seconds, counts, i))
        for i in range(groups)
    ]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0, help="per commit measurement")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess(
            Path(tmp) / "broker",
            {
                "group.initial.rebalance.delay.ms": "0",
                "group.min.session.timeout.ms": "500",
                "group.consumer.heartbeat.interval.ms": "100",
                "group.consumer.min.heartbeat.interval.ms": "100",
                "offsets.topic.num.partitions": "10",
            },
        ).start()
        try:
            bs = broker.bootstrap
            admin = AdminClient({"bootstrap.servers": bs})
            for f in admin.create_topics([NewTopic("bench-groups", PARTITIONS, 1)]).values():
                f.result(10)
            rows = []
            for protocol in ("classic", "consumer"):
                times = []
                for r in range(args.repeat):
                    t = rebalance_once(bs, f"bench-{protocol}-{r}", protocol)
                    say(f"rebalance {protocol} #{r}: {t * 1000:.0f} ms")
                    times.append(t)
                rows.append(
                    (
                        f"rebalance, {MEMBERS} consumers joining ({protocol} protocol)",
                        f"p50 {statistics.median(times) * 1000:.0f} ms, "
                        f"p99 {percentile(times, 0.99) * 1000:.0f} ms (n={len(times)})",
                    )
                )
            for groups in (1, 10):
                rates = [
                    commit_rate(bs, groups, args.seconds) for _ in range(max(1, args.repeat // 2))
                ]
                say(f"commits, {groups} group(s): {[round(x) for x in rates]}")
                rows.append(
                    (
                        f"OffsetCommit, {groups} group{'s' if groups > 1 else ''} at once",
                        f"{statistics.median(rates):,.0f} commits/s "
                        f"(min {min(rates):,.0f}, max {max(rates):,.0f})",
                    )
                )
            rows.append(("broker peak RSS (VmHWM)", f"{vm_hwm_mib(broker.proc.pid):.0f} MiB"))
        finally:
            broker.stop()
    print("| measurement | result |")
    print("| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
