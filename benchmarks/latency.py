"""End-to-end latency section of benchmarks/run.py: paced producer, consumer process, and the
accounting that says where records waited.

Each record carries its send time (CLOCK_MONOTONIC and wall clock, first 16 payload bytes) from
the ``produce()`` call; a confluent-kafka consumer in another process on the client core records
when it got it. The topic uses LogAppendTime, so each record also carries the broker's append
time (wall clock, ms), which splits the latency into send → append (client queue, linger, network,
broker queue) and append → consume (fetch wake-up, response, consumer). Each level also records,
over its produce window:

* the production rate the paced loop actually achieved (below the offered rate means the client
  core could not keep up, and every figure of that level is the client's);
* how busy each core was, counting every process (other sessions' tests too), from /proc/stat;
* how long the broker, producer and consumer were runnable but not running (run-queue wait from
  /proc/<pid>/task/*/schedstat): time a record spends waiting for a CPU, not for kafkapy.

Offered loads are fractions of the maximum this very setup sustains end to end (producer and
consumer together on the client core, linger.ms 1), measured first in the same run: a fraction
of the produce-only maximum (no consumer, linger.ms 5) would overload the client core at 90 %.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import struct
import time
from array import array
from pathlib import Path

import wire_split
from common import pin
from confluent_kafka import Consumer, Producer, TopicPartition

STAMP = struct.Struct(">qq")  # send time: monotonic ns, wall ns
MiB = 1024 * 1024


def producer_config(bootstrap: str) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "acks": "1",
        "linger.ms": 1,  # 5 would put a 5 ms floor under every percentile at low load
        "batch.size": MiB,
        "queue.buffering.max.kbytes": 256 * 1024,
        "queue.buffering.max.messages": 1_000_000,
        "enable.idempotence": False,
        "delivery.report.only.error": True,
    }


def consumer_proc(
    bootstrap: str,
    topic: str,
    expected,
    timeout: float,
    cpu: int,
    ready,
    out,
    isolation: str = "read_uncommitted",
    keep_stamps: bool = False,
) -> None:
    """Child process: read partition 0 from offset 0 until ``expected.value`` records arrived;
    send back (e2e ms, send→append ms, append→consume ms, first and last receive time, and with
    ``keep_stamps`` each record's send stamp with the wall ns it was received)."""
    pin(cpu)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "latency-bench",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "fetch.error.backoff.ms": 1,
            "log_level": 0,
        }
    )
    c.assign([TopicPartition(topic, 0, 0)])
    c.consume(1, 1.0)  # connected and fetching before the producer starts
    ready.set()
    e2e, to_append, from_append = array("d"), array("d"), array("d")
    stamps: list[tuple[bytes, int]] = []
    first = last = 0.0
    deadline = time.monotonic() + timeout
    unpack = STAMP.unpack_from
    while len(e2e) < expected.value and time.monotonic() < deadline:
        # poll returns as soon as one record is there; consume(n, 0) then takes what else is
        # already queued without waiting (consume(n, t) would wait for n records or t)
        msg = c.poll(0.05)
        if msg is None:
            continue
        msgs = [msg, *c.consume(5000, 0)]
        now, wall_ns = time.monotonic_ns(), time.time_ns()
        wall = wall_ns / 1e6
        first = first or now / 1e9
        last = now / 1e9
        for m in msgs:
            if m.error() is None:
                mono, wall_sent = unpack(m.value())
                appended = m.timestamp()[1]
                e2e.append((now - mono) / 1e6)
                to_append.append(appended - wall_sent / 1e6)
                from_append.append(wall - appended)
                if keep_stamps:
                    stamps.append((m.value()[:STAMP.size], wall_ns))
    c.close()
    out.put((e2e, to_append, from_append, first, last, stamps))


def paced_produce(
    bootstrap: str, topic: str, size: int, rate: float | None, seconds: float
) -> tuple[int, float, float]:
    """Produce ``rate`` records/s (None: as fast as possible) for ``seconds`` in 0.5 ms ticks,
    the send time in the payload; return (records, time the loop took, monotonic start)."""
    p = Producer(producer_config(bootstrap))
    pad = b"\x00" * (size - STAMP.size)
    pack = STAMP.pack
    p.produce(topic, pack(time.monotonic_ns(), time.time_ns()) + pad)  # connected first
    p.flush(30)
    start = time.monotonic()
    sent = 0
    if rate is None:
        while time.monotonic() - start < seconds:
            for _ in range(500):
                try:
                    p.produce(topic, pack(time.monotonic_ns(), time.time_ns()) + pad)
                    sent += 1
                except BufferError:
                    p.poll(0.0005)
            p.poll(0)
    else:
        total = int(rate * seconds)
        while sent < total:
            due = min(total, int((time.monotonic() - start) * rate) + 1)
            while sent < due:
                try:
                    p.produce(topic, pack(time.monotonic_ns(), time.time_ns()) + pad)
                    sent += 1
                except BufferError:
                    p.poll(0.0005)
            p.poll(0)
            time.sleep(0.0005)
    took = time.monotonic() - start
    p.flush(60)
    return sent, took, start


class Window:
    """Per-core busy time (all processes) and run-queue wait of given processes over a window."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.t0 = time.monotonic()
        self.cores0 = _cores()
        self.wait0 = {k: _run_wait_ns(p) for k, p in pids.items()}

    def close(self) -> dict[str, float]:
        """{'core<N>_busy': %, '<name>_wait': % of the window}"""
        span = time.monotonic() - self.t0
        cores1 = _cores()
        out = {}
        for k, (busy1, total1) in cores1.items():
            busy0, total0 = self.cores0.get(k, (0, 0))
            out[f"{k}_busy"] = 100 * (busy1 - busy0) / max(1, total1 - total0)
        for k, p in self.pids.items():
            out[f"{k}_wait"] = 100 * (_run_wait_ns(p) - self.wait0[k]) / 1e9 / span
        return out


def _threads() -> dict[tuple[str, str], tuple[str, int, int]]:
    """Every thread of the machine: (pid, tid) -> (name, ns on a CPU so far, last CPU)."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            try:
                stat = Path(f"{base}/stat").read_text()
                ran = int(Path(f"{base}/schedstat").read_text().split()[0])
            except (OSError, IndexError, ValueError):
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            out[(pid, tid)] = (name, ran, int(stat.rsplit(")", 1)[1].split()[36]))
    return out


class CoreNeighbours:
    """The other threads that ran on one core over a window: who took the broker's core."""

    def __init__(self, cpu: int, own_pids: set[int]) -> None:
        self.cpu, self.own = cpu, {str(p) for p in own_pids}
        self.before = _threads()

    def close(self, top: int = 3) -> tuple[float, str]:
        """(ms of CPU other threads last seen on the core used, the largest of them)."""
        used: dict[str, int] = {}
        for key, (name, ran, cpu) in _threads().items():
            if key[0] in self.own or cpu != self.cpu:
                continue
            delta = ran - self.before.get(key, (name, 0, cpu))[1]
            if delta > 0:
                used[name] = used.get(name, 0) + delta
        names = sorted(used, key=used.__getitem__, reverse=True)[:top]
        return sum(used.values()) / 1e6, ", ".join(f"{n} {used[n] / 1e6:.1f}" for n in names)


def _cores() -> dict[str, tuple[int, int]]:
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            f = line.split()
            v = [int(x) for x in f[1:]]
            out["core" + f[0][3:]] = (sum(v) - v[3] - v[4], sum(v))  # all but idle and iowait
    return out


def _run_wait_ns(pid: int) -> int:
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for t in tasks:
        try:
            total += int(Path(f"/proc/{pid}/task/{t}/schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total


def broker_core(pid: int) -> int:
    """The one core the broker is pinned to (its lowest, if it has several)."""
    return min(os.sched_getaffinity(pid))


def percentile(sorted_vals, q: float) -> float:
    if not sorted_vals:
        return float("nan")
    k = min(len(sorted_vals) - 1, max(0, round(q / 100 * (len(sorted_vals) - 1))))
    return sorted_vals[k]


def run_level(
    bootstrap: str,
    broker_pid: int,
    topic: str,
    size: int,
    rate: float | None,
    seconds: float,
    client_cpu: int,
    tap_cpu: int | None = None,
) -> dict[str, float]:
    """One offered load (``rate`` None: the maximum); returns the level's figures. With
    ``tap_cpu``, a packet tap on that core also splits each record's latency on the wire
    (benchmarks/wire_split.py): figures ``split.*``, or ``split_error`` when it could not run."""
    ctx = mp.get_context("spawn")
    ready, q = ctx.Event(), ctx.Queue()
    expected = ctx.Value("q", 2**62 if rate is None else int(rate * seconds) + 1)
    proc = ctx.Process(
        target=consumer_proc,
        args=(bootstrap, topic, expected, seconds + 60, client_cpu, ready, q, "read_uncommitted",
              tap_cpu is not None),
    )
    tap = None
    if tap_cpu is not None:
        tap_started, tap_stop, tap_q = ctx.Event(), ctx.Event(), ctx.Queue()
        tap = ctx.Process(target=wire_split.tap_proc, args=(
            int(bootstrap.rsplit(":", 1)[1]), tap_cpu, tap_started, tap_stop, tap_q))
        tap.start()
        tap_started.wait(30)
    proc.start()
    try:
        if not ready.wait(60):
            raise RuntimeError("latency consumer did not start")
        win = Window({"broker": broker_pid, "producer": os.getpid(), "consumer": proc.pid})
        neighbours = None
        if tap is not None:
            neighbours = CoreNeighbours(broker_core(broker_pid), {broker_pid, os.getpid(),
                                                                  proc.pid, tap.pid})
        sent, took, start = paced_produce(bootstrap, topic, size, rate, seconds)
        usage = win.close()
        if neighbours is not None:
            others_ms, others = neighbours.close()
        expected.value = sent + 1  # + the producer's warm-up record
        e2e, to_append, from_append, _first, last, stamps = q.get(timeout=seconds + 90)
        if tap is not None:
            tap_stop.set()
            captured = tap_q.get(timeout=120)
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.kill()
        if tap is not None:
            tap_stop.set()
            tap.join(30)
            if tap.is_alive():
                tap.kill()
    skip = len(e2e) // 20  # the first 5 %: connection warm-up
    fig = {
        "sent": sent,
        "received": len(e2e),
        "achieved": sent / took,
        "e2e_rate": sent / max(last - start, 1e-9),
        **usage,
    }
    for name, vals in (("", e2e), ("to_append.", to_append), ("from_append.", from_append)):
        s = sorted(vals[skip:])
        for q_, label in ((50, "p50"), (99, "p99"), (99.9, "p99.9")):
            fig[f"{name}{label}"] = percentile(s, q_)
    if tap is not None:
        if isinstance(captured, str):
            fig["split_error"] = captured  # type: ignore[assignment]
        else:
            to_broker, from_broker = wire_split.first_seen(captured, size)
            got = wire_split.split(stamps[skip:], to_broker, from_broker)
            fig.update({f"split.{k}": v for k, v in got.items()})
            fig["split.neighbours_ms"] = others_ms
            fig["split.neighbours"] = others  # type: ignore[assignment]
    return fig
