"""The machine's own latency tail (issue 17, point 2's bound): a minimal trio relay.

    .venv/bin/python benchmarks/relay.py --seconds 3

End-to-end latency through the broker is a producer → broker → consumer hop pair. The relay is
the least a trio server can do on that path: a process pinned to the broker core that forwards
whatever its sender connection writes to its receiver connection, unread. A sender process paced
on the client core writes an 8-byte CLOCK_MONOTONIC stamp every millisecond (about as many
requests as librdkafka sends at 10 % of the latency setup's maximum with `linger.ms` 1); a
receiver process on the same core reads the stamps and takes their age. Its p50 is the cost of
two loopback hops and three wake-ups; its p99 - p50 is what scheduling adds to the tail on this
machine at that moment (other processes on the cores, the hypervisor), with no Kafka work at all.

A broker whose p50 end to end is ``P`` cannot have a p99 below ``P + (relay p99 - relay p50)``
measured under the same conditions, so ``1 + jitter / P`` bounds the p99 / p50 it can reach;
benchmarks/run.py runs the relay right before each of issue 17's tail runs.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import socket
import struct
import time

from common import pin

STAMP = struct.Struct(">q")


def _relay_main(cpu: int, ports) -> None:
    """Child process: accept the sender, then the receiver; forward the sender's bytes."""
    import trio

    pin(cpu)

    async def main() -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        listener = listeners[0]
        ports.put(listener.socket.getsockname()[1])
        sender = await listener.accept()
        receiver = await listener.accept()
        while True:
            data = await sender.receive_some(65536)
            if not data:
                break
            await receiver.send_all(data)
        await receiver.aclose()

    trio.run(main)


def _sender_main(cpu: int, port: int, interval: float, seconds: float, go) -> None:
    pin(cpu)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    go.wait(30)
    start = time.monotonic()
    n = 0
    while True:
        due = start + n * interval
        now = time.monotonic()
        if now - start >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        sock.sendall(STAMP.pack(time.monotonic_ns()))
        n += 1
    sock.close()


def _receiver_main(cpu: int, port: int, ready, out) -> None:
    pin(cpu)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ready.set()
    ages: list[int] = []
    buf = b""
    while True:
        data = sock.recv(65536)
        if not data:
            break
        now = time.monotonic_ns()
        buf += data
        whole = len(buf) - len(buf) % STAMP.size
        ages.extend(now - stamp for (stamp,) in STAMP.iter_unpack(buf[:whole]))
        buf = buf[whole:]
    sock.close()
    out.put(ages)


def percentile(sorted_vals: list[float], q: float) -> float:
    k = min(len(sorted_vals) - 1, max(0, round(q / 100 * (len(sorted_vals) - 1))))
    return sorted_vals[k]


def run_relay(server_cpu: int, client_cpu: int, seconds: float = 3.0,
              interval: float = 0.001) -> dict[str, float]:
    """p50, p99 and their difference (ms) of stamps relayed through the minimal server."""
    ctx = mp.get_context("spawn")
    ports, out = ctx.Queue(), ctx.Queue()
    ready = ctx.Event()
    relay = ctx.Process(target=_relay_main, args=(server_cpu, ports), daemon=True)
    relay.start()
    try:
        port = ports.get(timeout=60)
        sender = ctx.Process(target=_sender_main, args=(client_cpu, port, interval, seconds,
                                                        ready), daemon=True)
        sender.start()
        time.sleep(0.2)  # the relay takes the sender's connection first
        receiver = ctx.Process(target=_receiver_main, args=(client_cpu, port, ready, out),
                               daemon=True)
        receiver.start()
        ages = sorted(a / 1e6 for a in out.get(timeout=seconds + 60))
        sender.join(10)
        receiver.join(10)
    finally:
        relay.kill()
        relay.join(10)
    if not ages:
        raise RuntimeError("relay: no stamp came through")
    p50, p99 = percentile(ages, 50), percentile(ages, 99)
    return {"p50": p50, "p99": p99, "jitter": p99 - p50, "count": float(len(ages))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for _ in range(args.repeat):
        r = run_relay(1, 0, args.seconds)
        print(f"relay: p50 {r['p50']:.3f} ms, p99 {r['p99']:.3f} ms, p99 - p50 "
              f"{r['jitter']:.3f} ms over {r['count']:.0f} stamps")


if __name__ == "__main__":
    main()
