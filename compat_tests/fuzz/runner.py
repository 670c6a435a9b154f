"""Send fuzz cases to a broker process and check its invariants.

Each case travels on a connection of its own: the frame is sent, the sending side is shut
(``SHUT_WR``: the broker reads the frame, then end of stream), and the fuzzer reads until the
broker closes. A case passes when the broker answers or closes within the request timeout; a
request that legitimately asks to wait longer (a Fetch max_wait, a JoinGroup rebalance timeout
above the timeout) is counted as a long poll, not a hang. Meanwhile a health probe on its own
long-lived connection must be answered (ApiVersions, Metadata) every half second, the broker
process must stay alive, and its resident memory (VmRSS) must stay under a bound. A handler
exception (the broker logs it with the case's client id) fails the case too: a request that
decodes must be handled.

Failing cases are written as JSON files (API, version, mutation, the frame as hex, the reason)
to a cases directory; ``load_cases`` and ``replay`` run them again.
"""

from __future__ import annotations

import collections
import hashlib
import json
import random
import re
import socket
import struct
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kio.index import load_request_schema
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12 import request as md12
from kio.serial import entity_reader

from kafkapy.protocol.request_guard import guard_for
from kafkapy.testing import BrokerProcess

from ..rawclient import RawClient
from .generate import RequestGenerator, Targets, encode_body, request_header, served_versions
from .mutate import MUTATIONS, damage_batch

CASES_DIR = Path(__file__).parent / "cases"
HANDLER_ERROR = re.compile(r"unexpected error in handler.*? client_id=(\S+).*")
WAIT_FIELDS = ("max_wait", "rebalance_timeout", "timeout", "session_timeout")
PRODUCE_KEY = 0


@dataclass
class Case:
    """One frame to send: ``size`` is the announced size prefix (None: the true one)."""

    api_key: int
    version: int
    kind: str  # "valid", a mutation name, or "records" (a damaged batch behind a valid CRC)
    payload_hex: str
    size: int | None = None
    client_id: str = ""
    reason: str = ""

    @property
    def payload(self) -> bytes:
        return bytes.fromhex(self.payload_hex)

    def frame(self) -> bytes:
        payload = self.payload
        size = len(payload) if self.size is None else self.size
        return struct.pack(">i", size) + payload

    def name(self) -> str:
        digest = hashlib.sha1(self.frame()).hexdigest()[:10]
        return f"{self.kind}-k{self.api_key}v{self.version}-{digest}"


@dataclass
class Report:
    seed: str
    cases: int = 0
    answered: int = 0
    closed: int = 0
    long_polls: int = 0
    elapsed_s: float = 0.0
    peak_rss_mb: float = 0.0
    start_rss_mb: float = 0.0
    health_max_ms: float = 0.0
    health_max_at: str = ""
    by_kind: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[Case] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.cases / self.elapsed_s if self.elapsed_s else 0.0

    def summary(self) -> str:
        return (
            f"seed={self.seed} cases={self.cases} ({self.rate:.0f}/s over {self.elapsed_s:.0f} s) "
            f"answered={self.answered} closed={self.closed} long_polls={self.long_polls} "
            f"rss_mb start={self.start_rss_mb:.0f} peak={self.peak_rss_mb:.0f} "
            f"health_max_ms={self.health_max_ms:.0f} (at {self.health_max_at} UTC) "
            f"failures={len(self.failures)}"
        )


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def make_case(rng: random.Random, gen: RequestGenerator, corr: int, valid_rate: float,
              versions: list[tuple[str, int, int]] | None = None) -> Case:
    """A case of one of `versions` (name, key, version; default: every version kafkapy serves)."""
    _name, key, version = rng.choice(versions or SERVED)
    entity = gen.request(key, version)
    kind = "valid"
    if key == PRODUCE_KEY and rng.random() < 0.3:
        for topic in entity.topic_data:
            for part in topic.partition_data:
                if part.records:
                    object.__setattr__(part, "records", damage_batch(part.records, rng))
                    kind = "records"
    client_id = f"fz{corr}"
    payload = request_header(key, version, corr, client_id) + encode_body(entity)
    size = None
    if kind == "valid" and rng.random() >= valid_rate:
        kind = rng.choice(sorted(MUTATIONS))
        payload, size = MUTATIONS[kind](payload, rng)
    return Case(key, version, kind, payload.hex(), size, client_id)


SERVED = served_versions()


def _waits_longer(case: Case, timeout: float) -> bool:
    """Whether the case is a request that asks the broker to wait longer than ``timeout``."""
    payload = case.payload
    if len(payload) < 10 or case.size not in (None, len(payload)):
        return False
    from kafkapy.protocol.headers import parse_request_header

    try:
        header = parse_request_header(payload)
        schema = load_request_schema(header.api_key, header.api_version)
        guard_for(schema)(payload, header.body_offset, len(payload))  # never let kio allocate
        request, _ = entity_reader(schema)(payload, header.body_offset)
    except Exception:
        return False
    for name in WAIT_FIELDS:
        value = getattr(request, name, None)
        if value is not None and value.total_seconds() >= timeout / 2:
            return True
    return False


def exchange(bootstrap: str, case: Case, timeout: float) -> tuple[str, bytes]:
    """Send one case on its own connection, then shut the sending side: ('answered', the
    response frame without its size), ('closed', b"") or ('waiting', b"") when nothing came
    within the timeout."""
    host, port = bootstrap.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        try:
            sock.sendall(case.frame())
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return "closed", b""  # the broker refused the frame while it was being sent
        received = bytearray()
        while not _complete(received):
            left = deadline - time.monotonic()
            if left <= 0:
                return "waiting", b""
            sock.settimeout(left)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                break
            received += chunk
    if _complete(received):
        return "answered", bytes(received[4:4 + struct.unpack_from(">i", received)[0]])
    return "closed", b""


def _complete(received: bytearray) -> bool:
    return len(received) >= 4 and len(received) >= 4 + struct.unpack_from(">i", received)[0]


def send_case(bootstrap: str, case: Case, timeout: float) -> str:
    """Send one case on its own connection: 'answered', 'closed', 'long_poll' or 'timeout'."""
    outcome, _ = exchange(bootstrap, case, timeout)
    if outcome == "waiting":
        return "long_poll" if _waits_longer(case, timeout) else "timeout"
    return outcome


def prepare(broker: Any, partitions: int = 2, targets: Targets | None = None) -> Targets:
    """Create the fuzz topic (with records) and group on a broker (anything with a
    ``bootstrap``), so that cases reach real paths."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    targets = targets or Targets(partitions=partitions)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([NewTopic(targets.topics[0], partitions, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for i in range(20):
        producer.send(targets.topics[0], key=b"k%d" % i, value=b"v" * i, partition=i % partitions)
    producer.close()
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, group_id=targets.groups[0], enable_auto_commit=False
    )
    consumer.assign([TopicPartition(targets.topics[0], 0)])
    consumer.commit({TopicPartition(targets.topics[0], 0): _offset(5)})
    consumer.close()
    with RawClient(broker.bootstrap) as c:
        md = c.request(
            md12.MetadataRequest(
                topics=(md12.MetadataRequestTopic(topic_id=None, name=targets.topics[0]),),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )
        targets.topic_ids = [t.topic_id for t in md.topics if t.topic_id]
    return targets


def _offset(n: int) -> Any:
    from kafka.structs import OffsetAndMetadata

    try:
        return OffsetAndMetadata(n, "", -1)
    except TypeError:  # older kafka-python: (offset, metadata)
        return OffsetAndMetadata(n, "")


class _Health(threading.Thread):
    """Probes the broker on a connection of its own; samples its RSS."""

    def __init__(self, broker: BrokerProcess, timeout: float, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.broker = broker
        self.timeout = timeout
        self.interval = interval
        self.stop = threading.Event()
        self.error: str | None = None
        self.max_ms = 0.0
        self.max_at = 0.0  # when the slowest probe was answered (wall clock)
        self.peak_rss = 0.0

    def run(self) -> None:
        probe = ApiVersionsRequest(client_software_name="fuzz-health", client_software_version="1")
        try:
            with RawClient(self.broker.bootstrap, timeout=self.timeout) as c:
                while not self.stop.is_set():
                    start = time.monotonic()
                    c.request(probe)
                    took = (time.monotonic() - start) * 1000
                    if took > self.max_ms:
                        self.max_ms, self.max_at = took, time.time()
                    if self.broker.pid is not None:
                        self.peak_rss = max(self.peak_rss, rss_mb(self.broker.pid))
                    self.stop.wait(self.interval)
        except Exception as e:  # a probe not answered in time, a closed connection
            self.error = f"health probe failed: {type(e).__name__}: {e}"


class Fuzzer:
    def __init__(
        self,
        broker: BrokerProcess,
        targets: Targets,
        seed: str,
        *,
        request_timeout: float = 10.0,
        rss_limit_mb: float = 400.0,
        workers: int = 3,
        valid_rate: float = 0.2,
    ) -> None:
        self.broker = broker
        self.targets = targets
        self.seed = seed
        self.request_timeout = request_timeout
        self.rss_limit_mb = rss_limit_mb
        self.workers = workers
        self.valid_rate = valid_rate
        self._lock = threading.Lock()
        self._corr = 0
        self._stop = threading.Event()
        self._recent: collections.OrderedDict[str, Case] = collections.OrderedDict()
        self._log_offset = 0

    def _next_corr(self) -> int:
        with self._lock:
            self._corr += 1
            return self._corr

    def _worker(self, index: int, until: float, max_cases: int, report: Report) -> None:
        try:
            self._cases(index, until, max_cases, report)
        except Exception as e:  # a bug of the fuzzer itself: stop and say so
            self._stop.set()
            report.failures.append(Case(-1, -1, "fuzzer", "", reason=f"fuzzer error: {e!r}"))
            raise

    def _cases(self, index: int, until: float, max_cases: int, report: Report) -> None:
        rng = random.Random(f"{self.seed}-{index}")
        gen = RequestGenerator(rng, self.targets)
        while time.monotonic() < until and report.cases < max_cases and not self._stop.is_set():
            case = make_case(rng, gen, self._next_corr(), self.valid_rate)
            with self._lock:
                self._recent[case.client_id] = case
                if len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
            try:
                result = send_case(self.broker.bootstrap, case, self.request_timeout)
            except OSError as e:
                result = f"connect failed: {e}"
            with self._lock:
                report.cases += 1
                report.by_kind[case.kind] += 1
                if result in ("answered", "closed", "long_poll"):
                    setattr(report, _COUNTERS[result], getattr(report, _COUNTERS[result]) + 1)
                else:
                    case.reason = result
                    report.failures.append(case)

    def run(self, seconds: float, max_cases: int = 10**12) -> Report:
        report = Report(self.seed)
        pid = self.broker.pid
        assert pid is not None
        report.start_rss_mb = rss_mb(pid)
        health = _Health(self.broker, self.request_timeout)
        health.start()
        start = time.monotonic()
        threads = [
            threading.Thread(
                target=self._worker, args=(i, start + seconds, max_cases, report), daemon=True
            )
            for i in range(self.workers)
        ]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            time.sleep(0.2)
            self._handler_errors(report)
            reason = self._broken(health)
            if reason:
                self._stop.set()
                self._blame(report, reason)
                break
        for t in threads:
            t.join(self.request_timeout + 5)
        report.elapsed_s = time.monotonic() - start
        health.stop.set()
        health.join(self.request_timeout + 5)
        if not report.failures and health.error:
            self._blame(report, health.error)
        report.health_max_ms = health.max_ms
        report.health_max_at = time.strftime("%H:%M:%S", time.gmtime(health.max_at))
        report.peak_rss_mb = health.peak_rss
        time.sleep(0.2)  # the broker's last log lines
        self._handler_errors(report)
        return report

    def _broken(self, health: _Health) -> str | None:
        proc = self.broker.proc
        if proc is None or proc.poll() is not None:
            code = None if proc is None else proc.returncode
            return f"broker died (exit {code}): {self.broker.log_text()[-600:]}"
        if health.error:
            return health.error
        if health.peak_rss > self.rss_limit_mb:
            return f"broker RSS {health.peak_rss:.0f} MiB above {self.rss_limit_mb:.0f} MiB"
        return None

    def _blame(self, report: Report, reason: str) -> None:
        """The broker broke: the cases sent last are the suspects."""
        with self._lock:
            for case in list(self._recent.values())[-SUSPECTS:]:
                case.reason = reason
                report.failures.append(case)

    def _handler_errors(self, report: Report) -> None:
        """Cases whose request made a handler raise (the broker logs the client id)."""
        try:
            with open(self.broker.log_path, "rb") as f:
                f.seek(self._log_offset)
                new = f.read()
        except OSError:
            return
        end = new.rfind(b"\n") + 1
        self._log_offset += end
        for m in HANDLER_ERROR.finditer(new[:end].decode(errors="replace")):
            client_id = m.group(1)
            with self._lock:
                case = self._recent.get(client_id)
            if case is None:
                case = Case(-1, -1, "unknown", "", client_id=client_id)
            case.reason = "handler raised: " + m.group(0).rsplit(" | ", 1)[-1][:300]
            report.failures.append(case)


RECENT = 5000  # cases remembered (to match the broker's log lines to them)
SUSPECTS = 32  # cases blamed when the broker breaks
_COUNTERS = {"answered": "answered", "closed": "closed", "long_poll": "long_polls"}


def save_cases(cases: list[Case], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for case in cases:
        if not case.payload_hex:
            continue
        path = directory / f"{case.name()}.json"
        path.write_text(json.dumps(asdict(case), indent=1) + "\n")
        paths.append(path)
    return paths


def load_cases(directory: Path) -> list[Case]:
    return [Case(**json.loads(p.read_text())) for p in sorted(directory.glob("*.json"))]
