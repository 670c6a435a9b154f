"""The access-log pipeline end to end on real Spark (local[2]) against a real kafkapy broker.

Generated lines (with malformed ones) go into a 3-partition topic with confluent-kafka; the job
runs with Trigger.AvailableNow on the Python data source; its window statistics (output topic
and Parquet) are compared with a pure-Python computation over the generated lines, and the
dead-letter topic with the malformed ones. Then more lines are produced, the job is started
again from its checkpoint, and every window must appear exactly once with the right counts.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.pipelines.access_log_generator import AccessLogGenerator, LogLine
from kafkapy.pipelines.access_log_job import JobConfig, malformed_count, start

pytestmark = pytest.mark.timeout(600)

BASE = datetime(2025, 3, 12, 14, 0, 0, tzinfo=UTC)
WATERMARK = timedelta(minutes=2)

# The test's own parser (independent of the job's Spark expressions).
_LINE = re.compile(
    r'(?P<ip>[^ ]+) [^ ]+ (?P<user>[^ ]+) \[(?P<ts>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<target>[^ ]+) (?P<proto>HTTP/[\d.]+)" (?P<status>\d\d\d) '
    r'(?P<size>\d+|-) "(?P<ref>[^"]*)" "(?P<ua>[^"]*)"')


def parse(raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    m = _LINE.fullmatch(text)
    if not m:
        return None
    try:
        ts = datetime.strptime(m["ts"], "%d/%b/%Y:%H:%M:%S %z").astimezone(UTC)
    except ValueError:
        return None
    size = 0 if m["size"] == "-" else int(m["size"])
    return ts, m["target"].split("?", 1)[0], int(m["status"]), size


def expected_windows(lines: list[LogLine], top_n: int = 5) -> dict[str, dict]:
    per: dict[datetime, list] = defaultdict(list)
    for ln in lines:
        p = parse(ln.raw)
        assert (p is not None) == ln.ok, ln.raw
        if p:
            per[p[0].replace(second=0)].append(p)
    out = {}
    for begin, recs in per.items():
        classes = Counter(s // 100 for _, _, s, _ in recs)
        paths = Counter(path for _, path, _, _ in recs)
        top = sorted(paths.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]
        n = len(recs)
        out[begin.strftime("%Y-%m-%dT%H:%M:%SZ")] = {
            "window_end": (begin + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "requests": n,
            "bytes": sum(b for *_, b in recs),
            "status_2xx": classes[2], "status_3xx": classes[3],
            "status_4xx": classes[4], "status_5xx": classes[5],
            "error_rate": (classes[4] + classes[5]) / n,
            "top_paths": [{"path": p, "requests": c} for p, c in top],
        }
    return out


def closed(expected: dict[str, dict], lines: list[LogLine]) -> dict[str, dict]:
    """Windows Spark has emitted once the watermark (max event time - 2 min) passed them."""
    wm = max(parse(ln.raw)[0] for ln in lines if ln.ok) - WATERMARK
    return {k: v for k, v in expected.items()
            if datetime.strptime(v["window_end"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) <= wm}


def produce(bootstrap: str, topic: str, lines: list[LogLine]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    errors = []
    for i, ln in enumerate(lines):
        p.produce(topic, value=ln.raw, key=str(i % 17).encode(),
                  on_delivery=lambda err, _m: err and errors.append(err))
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(30) == 0 and not errors


def read_all(bootstrap: str, topic: str) -> list:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused-test-reader",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        if md.error is not None:
            return []
        ends = {}
        for p in md.partitions:
            _lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if hi > 0:
                ends[p] = hi
        if not ends:
            return []
        c.assign([TopicPartition(topic, p, 0) for p in ends])
        out, left = [], set(ends)
        while left:
            m = c.poll(10)
            assert m is not None, f"timed out reading {topic}"
            if m.error():
                left.discard(m.partition())
                continue
            out.append(m)
            if m.offset() + 1 >= ends[m.partition()]:
                left.discard(m.partition())
        return out
    finally:
        c.close()


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    return module_broker_factory()


def run_job(spark, cfg: JobConfig) -> int:
    windows, dlq = start(spark, cfg, available_now=True)
    try:
        for q in (windows, dlq):
            q.awaitTermination(300)
            assert not q.isActive, f"{q.name} did not finish"
            assert q.exception() is None, q.exception()
        return malformed_count(dlq)
    finally:
        for q in (windows, dlq):
            q.stop()


def test_pipeline_end_to_end_with_restart(broker, spark, tmp_path):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("access-logs", 3, 1)]).values():
        f.result(10)
    gen = AccessLogGenerator(seed=1234, malformed_fraction=0.05)
    first = gen.lines(2500, BASE, timedelta(minutes=8), jitter_s=5)
    produce(broker.bootstrap, "access-logs", first)

    cfg = JobConfig(bootstrap=broker.bootstrap, parquet=str(tmp_path / "parquet"),
                    checkpoint=str(tmp_path / "ckpt"), top_paths=5)
    malformed_1 = run_job(spark, cfg)

    bad_1 = sorted(ln.raw for ln in first if not ln.ok)
    assert len(bad_1) > 50
    assert malformed_1 == len(bad_1)
    dlq = read_all(broker.bootstrap, "access-logs-dlq")
    assert sorted(m.value() or b"" for m in dlq) == bad_1
    h = dict(dlq[0].headers())
    assert h["dlq.topic"] == b"access-logs" and h["dlq.reason"] in (
        b"empty line", b"not in combined log format", b"unparseable timestamp")
    assert {int(dict(m.headers())["dlq.offset"]) for m in dlq} <= set(range(2500))

    exp_1 = closed(expected_windows(first), first)
    assert len(exp_1) >= 5
    out_1 = {m.key().decode(): json.loads(m.value()) for m in read_all(broker.bootstrap,
                                                                        "access-stats")}
    assert len(read_all(broker.bootstrap, "access-stats")) == len(out_1)  # each window once
    assert_windows(out_1, exp_1)

    # More traffic, later in time, then a line far ahead that closes every window; restart.
    second = gen.lines(1500, BASE + timedelta(minutes=8), timedelta(minutes=4), jitter_s=5)
    flush = LogLine(gen.good_line(BASE + timedelta(minutes=30)), True)
    produce(broker.bootstrap, "access-logs", [*second, flush])
    malformed_2 = run_job(spark, cfg)

    everything = first + second
    bad = sorted(ln.raw for ln in everything if not ln.ok)
    assert malformed_2 == len(bad) - len(bad_1)  # the restart read only the new lines
    dlq = read_all(broker.bootstrap, "access-logs-dlq")
    assert sorted(m.value() or b"" for m in dlq) == bad  # none lost, none twice

    exp_all = expected_windows(everything)
    records = read_all(broker.bootstrap, "access-stats")
    out_all = {m.key().decode(): json.loads(m.value()) for m in records}
    assert len(records) == len(out_all), "a window was emitted twice"
    assert_windows(out_all, exp_all)  # every window, including the one spanning the restart
    assert sum(w["requests"] for w in out_all.values()) == sum(ln.ok for ln in everything)

    rows = spark.read.parquet(str(tmp_path / "parquet")).collect()
    assert len(rows) == len(exp_all)
    pq = {r.window_start.strftime("%Y-%m-%dT%H:%M:%SZ"): r for r in rows}
    assert len(pq) == len(rows)
    for k, e in exp_all.items():
        r = pq[k]
        assert (r.requests, r.bytes, r.status_2xx, r.status_3xx, r.status_4xx, r.status_5xx) == (
            e["requests"], e["bytes"], e["status_2xx"], e["status_3xx"], e["status_4xx"],
            e["status_5xx"]), k
        assert r.error_rate == pytest.approx(e["error_rate"])
        assert [{"path": t.path, "requests": t.requests} for t in r.top_paths] == e["top_paths"]


def assert_windows(got: dict[str, dict], exp: dict[str, dict]) -> None:
    assert sorted(got) == sorted(exp)
    for k, e in exp.items():
        g = dict(got[k])
        assert g.pop("window_start") == k
        assert g["error_rate"] == pytest.approx(e["error_rate"])
        g["error_rate"] = e["error_rate"]
        assert g == e, k
