"""Produce realistic nginx access-log traffic into a Kafka topic at a chosen rate.

    python -m kafkapy.pipelines.generate_logs --bootstrap-server 127.0.0.1:9092 \
        --topic access-logs --rate 500 --duration 60 [--malformed 0.02] [--seed 7]

Lines are combined-log-format (see access_log_generator), timestamped now (±jitter), keyed by
client IP so one client's lines stay in order in one partition, produced with an idempotent
confluent-kafka producer. Progress goes to stderr once a second; the exit status is non-zero
if any record failed to be delivered.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta

from kafkapy.pipelines.access_log_generator import AccessLogGenerator


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kafkapy.pipelines.generate_logs",
                                description="Produce nginx access-log lines into a topic.")
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092")
    p.add_argument("--topic", default="access-logs")
    p.add_argument("--rate", type=float, default=500.0, help="lines per second (default 500)")
    p.add_argument("--duration", type=float, default=60.0,
                   help="seconds to run (default 60); 0 with --count means as fast as possible")
    p.add_argument("--count", type=int, default=None,
                   help="stop after this many lines instead of after --duration")
    p.add_argument("--malformed", type=float, default=0.02,
                   help="fraction of malformed lines (default 0.02)")
    p.add_argument("--jitter", type=float, default=2.0,
                   help="timestamps are now ± this many seconds (default 2)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rate <= 0:
        print("generate_logs: --rate must be positive", file=sys.stderr)
        return 2
    from confluent_kafka import Producer

    gen = AccessLogGenerator(seed=args.seed, malformed_fraction=args.malformed)
    failures: list[str] = []
    delivered = 0

    def on_delivery(err, _msg) -> None:
        nonlocal delivered
        if err is not None:
            failures.append(str(err))
        else:
            delivered += 1

    producer = Producer({
        "bootstrap.servers": args.bootstrap_server,
        "enable.idempotence": True,
        "linger.ms": 20,
        "compression.type": "lz4",
        "message.timeout.ms": 30000,
    })
    total = args.count if args.count is not None else int(args.rate * args.duration)
    started = time.monotonic()
    next_report = started + 1.0
    sent = bad = 0
    try:
        while sent < total:
            # pace: line i is due at started + i/rate
            due = started + sent / args.rate
            now = time.monotonic()
            if due > now:
                time.sleep(min(due - now, 0.05))
                producer.poll(0)
                continue
            ts = datetime.now(UTC) + timedelta(seconds=gen.rng.uniform(-args.jitter,
                                                                        args.jitter))
            line = gen.line(ts)
            key = line.raw.split(b" ", 1)[0] if line.ok else None
            while True:
                try:
                    producer.produce(args.topic, value=line.raw, key=key, on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.1)
            sent += 1
            bad += not line.ok
            if now >= next_report:
                producer.poll(0)
                if not args.quiet:
                    elapsed = now - started
                    print(f"generate_logs: {sent}/{total} sent ({bad} malformed), "
                          f"{delivered} delivered, {sent / elapsed:.0f} lines/s",
                          file=sys.stderr, flush=True)
                next_report = now + 1.0
    except KeyboardInterrupt:
        print("generate_logs: interrupted, flushing", file=sys.stderr)
    remaining = producer.flush(30)
    elapsed = time.monotonic() - started
    if not args.quiet:
        print(f"generate_logs: done: {sent} sent ({bad} malformed), {delivered} delivered, "
              f"{len(failures)} failed, {remaining} undelivered, {elapsed:.1f}s",
              file=sys.stderr, flush=True)
    if failures:
        print(f"generate_logs: first delivery error: {failures[0]}", file=sys.stderr)
    return 1 if failures or remaining else 0


if __name__ == "__main__":
    sys.exit(main())
