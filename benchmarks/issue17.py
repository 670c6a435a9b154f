"""Issue 17's targets (performance, second round) as benchmarks/run.py measures and prints them.

Every target is a ratio of two figures measured in the same run (``targets`` reads them from the
run's results): the broker's per-request CPU against a minimal framed trio server's
(benchmarks/per_request.py), p99 against p50 at 10 % and 50 % of the latency setup's maximum in
each of 5 consecutive runs, produce over 8 and 1,000 partitions against one partition on the same
broker, Metadata and CreateTopics of 1,000 partitions in absolute time, an incremental fetch of
1,000 unchanged partitions against a full one (benchmarks/fetch_sessions.py), the cleaner against
the decode-only reference and produce while cleaning against idle (benchmarks/cleaner.py), group
commits, and acks=all against acks=1 on RF=3 with the follower fetch latency reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from common import fmt

TAIL_RUNS = 5  # consecutive latency runs at 10 % and 50 % of the maximum (target 2)


@dataclass
class Target:
    point: str
    what: str
    measured: str
    ratio: str
    required: str
    met: bool | None


def _med(res, key: str) -> float | None:
    return res.median(key)


def targets(res) -> list[Target]:
    """One line per target of issue 17, from the results of one run."""
    out: list[Target] = []

    def ratio_row(point: str, what: str, num: str, den: str, limit: float, unit: str,
                  at_most: bool = True) -> None:
        a, b = _med(res, num), _med(res, den)
        req = f"<= {limit:g}x" if at_most and limit >= 1 else (
            f"{'<=' if at_most else '>='} {limit:.0%}")
        if a is None or not b:
            out.append(Target(point, what, "not measured", "–", req, None))
            return
        r = a / b
        shown = f"{r:.2f}x" if at_most and limit >= 1 else f"{r:.0%}"
        out.append(Target(point, what, f"{fmt(a)} / {fmt(b)} {unit}", shown, req,
                          r <= limit if at_most else r >= limit))

    # 1. per-request CPU
    for load, name in (("produce", "Produce, 16 KiB, acks=1"), ("fetch", "empty long-poll Fetch")):
        ratio_row("1", f"broker CPU per {name} vs minimal framed trio server (busy)",
                  f"requests.{load}.busy.broker.cpu_us", f"requests.{load}.busy.minimal.cpu_us",
                  3, "µs/request")
    # 2. tail latency: every one of the consecutive runs
    for level, limit in ((10, 2), (50, 5)):
        row = res.rows.get(f"tail.{level}.ratio")
        what = (f"p99 / p50 end to end at {level} % load, each of {TAIL_RUNS} runs (bound: "
                "1 + a minimal relay's p99 - p50 over the run's p50, just before it; largest "
                "run-queue wait of broker or clients)")
        if row is None or not row.values:
            out.append(Target("2", what, "not measured", "–", f"<= {limit}x", None))
            continue
        worst = max(row.values)
        waits = res.rows.get(f"tail.{level}.wait")
        bounds = res.rows.get(f"tail.{level}.bound")

        def notes(i: int, waits=waits, bounds=bounds) -> str:
            parts = []
            if bounds is not None and i < len(bounds.values):
                parts.append(f"bound {bounds.values[i]:.1f}")
            if waits is not None and i < len(waits.values):
                parts.append(f"wait {waits.values[i]:.0f} %")
            return f" ({', '.join(parts)})" if parts else ""

        runs = ", ".join(f"{v:.1f}{notes(i)}" for i, v in enumerate(row.values))
        out.append(Target("2", what, f"runs: {runs}", f"{worst:.2f}x (worst)", f"<= {limit}x",
                          len(row.values) >= TAIL_RUNS and worst <= limit))
    # 2's bound: the same setup's tail with the broker's residence held at its median
    steady, b50, b99 = (_med(res, k) for k in ("split.10.steady", "split.10.broker.p50",
                                                "split.10.broker.p99"))
    c50, c99 = _med(res, "split.10.client.p50"), _med(res, "split.10.client.p99")
    if steady is not None and None not in (b50, b99, c50, c99):
        out.append(Target(
            "2", "bound at 10 % load: p99 / p50 end to end with each record's broker residence "
            "replaced by its median (one more run, split on the wire: broker residence and the "
            "producer's own queue and linger, p50 / p99)",
            f"broker {fmt(b50)} / {fmt(b99)} ms, producer {fmt(c50)} / {fmt(c99)} ms",
            f"{steady:.2f}x", "reported", None))
    # 3. many partitions
    ratio_row("3", "produce 100 B, 8 partitions vs 1 (one confluent-kafka producer)",
              "scale.produce_8.rec_s", "scale.produce_1.rec_s", 0.9, "records/s", at_most=False)
    ratio_row("3", "produce 100 B, 1,000 partitions vs 1", "scale.produce_wide.rec_s",
              "scale.produce_1.rec_s", 0.75, "records/s", at_most=False)
    # the bound: the producer's own CPU per record (its Python loop and librdkafka's threads,
    # all on the client core) rises with the partitions (librdkafka builds and sends a batch
    # per partition); with the client the side that uses its core, the N / 1 rate ratio is at
    # most the inverse ratio of those costs
    for key, n in (("scale.produce_8", "8"), ("scale.produce_wide", "1,000")):
        c1, cn = _med(res, "scale.produce_1.client_us"), _med(res, f"{key}.client_us")
        u1, un = _med(res, "scale.produce_1.client_busy"), _med(res, f"{key}.client_busy")
        b1, bn = _med(res, "scale.produce_1.broker_busy"), _med(res, f"{key}.broker_busy")
        k1, kn = _med(res, "scale.produce_1.client_core"), _med(res, f"{key}.client_core")
        w1, wn = _med(res, "scale.produce_1.client_wait"), _med(res, f"{key}.client_wait")
        if not (c1 and cn) or None in (u1, un, b1, bn):
            continue
        cores = (f"; client core busy (all processes) {fmt(k1)} / {fmt(kn)} %, producer "
                 f"run-queue wait {fmt(w1)} / {fmt(wn)} %" if None not in (k1, kn, w1, wn)
                 else "")
        out.append(Target(
            "3", f"bound: the producer's CPU per record over 1 / {n} partitions (the {n} / 1 "
            f"ratio a client-bound producer reaches); core use of client and broker, 1 / {n}",
            f"{fmt(c1)} / {fmt(cn)} µs per record; client {fmt(u1)} / {fmt(un)} s/s, broker "
            f"{fmt(b1)} / {fmt(bn)} s/s{cores}", f"{c1 / cn:.0%}", "reported", None))
    for key, what, limit in (("scale.metadata_ms", "Metadata v12 of 1,000 partitions", 2.0),
                             ("scale.create_ms", "CreateTopics of 1,000 partitions", 500.0)):
        v = _med(res, key)
        out.append(Target("3", what, "not measured" if v is None else f"{fmt(v)} ms", "–",
                          f"<= {limit:g} ms", None if v is None else v <= limit))
    # 4. fetch sessions
    ratio_row("4", "broker CPU, incremental fetch of 1,000 unchanged partitions vs full fetch "
              "(long polls)",
              "sessions.incremental.cpu_us", "sessions.full.cpu_us", 0.10, "µs/request")
    # 5. cleaner
    ratio_row("5", "cleaner throughput vs decode-only reference (uncompressed)",
              "cleaner.pass_mb_s", "cleaner.decode_mb_s", 0.70, "MB/s", at_most=False)
    ratio_row("5", "produce 1 KiB while the broker cleans vs idle", "cleaner.produce_cleaning",
              "cleaner.produce_idle", 0.80, "MB/s", at_most=False)
    # 6. group commits
    v = _med(res, "scale.commit_cpu")
    out.append(Target("6", "broker CPU per commit, 10 groups committing synchronously",
                      "not measured" if v is None else f"{fmt(v)} ms", "–", "<= 0.3 ms",
                      None if v is None else v <= 0.3))
    ratio_row("6", "commit p99 / p50", "scale.commit_p99", "scale.commit_p50", 5, "ms")
    # 7. replication
    ratio_row("7", "acks=all RF=3 vs acks=1 RF=3", "cluster.rf3.all.mb_s", "cluster.rf3.1.mb_s",
              0.75, "MB/s", at_most=False)
    # the bound: the three brokers share one core, which RF=3 keeps busy either way; acks=1
    # acknowledges before the followers copy, so its rate is not a replicated one: compare the
    # rates at which every replica had every record, and the three brokers' CPU per MB
    ra = _med(res, "cluster.rf3.all.replicated_mb_s")
    r1 = _med(res, "cluster.rf3.1.replicated_mb_s")
    ca, c1 = _med(res, "cluster.rf3.all.cpu_ms_mb"), _med(res, "cluster.rf3.1.cpu_ms_mb")
    ba, b1 = _med(res, "cluster.rf3.all.core_busy"), _med(res, "cluster.rf3.1.core_busy")
    if ra and r1 and None not in (ca, c1, ba, b1):
        out.append(Target(
            "7", "bound: the brokers' shared core. RF=3, acks=all / acks=1: MB/s until every "
            "replica had every record; the three brokers' CPU per MB; broker core busy",
            f"{fmt(ra)} / {fmt(r1)} MB/s replicated; {fmt(ca)} / {fmt(c1)} ms/MB (at most "
            f"{fmt(1000 / ca)} / {fmt(1000 / c1)} MB/s on one core); core {fmt(ba)} / "
            f"{fmt(b1)} % busy", f"{ra / r1:.0%}", "reported", None))
    p50, p99 = _med(res, "cluster.follower.p50"), _med(res, "cluster.follower.p99")
    out.append(Target("7", "follower fetch latency (acks=all minus acks=1 produce round trip)",
                      "not measured" if p50 is None or p99 is None
                      else f"p50 {fmt(p50)} ms, p99 {fmt(p99)} ms", "–", "reported",
                      None))
    return out


def render(res) -> list[str]:
    """The markdown table of issue 17's targets."""
    lines = ["| # | target (issue 17) | measured | ratio | required | met? |",
             "| --- | --- | --- | --- | --- | --- |"]
    for t in targets(res):
        mark = "n/a" if t.met is None else ("met" if t.met else "**missed**")
        lines.append(f"| {t.point} | {t.what} | {t.measured} | {t.ratio} | {t.required} | "
                     f"{mark} |")
    return lines
