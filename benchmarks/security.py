"""Security benchmark (issue 15): what TLS costs produce and fetch, and how long a connection
takes to set up with each security protocol and SASL mechanism, next to this machine's own
ceilings measured in the same run.

    .venv/bin/python benchmarks/security.py --quick     # about a minute, the README figures
    .venv/bin/python benchmarks/security.py             # 3 repeats, more data

Sections (--only):

* ``ceiling``: Python's own TCP and TLS loopback throughput (``ssl`` module, the TLS version and
  cipher the broker negotiates, 256 KiB writes): a sender on core 0, a receiver on core 1 (the
  broker's), and back. TLS through trio in the broker cannot beat this.
* ``produce``: one broker (core 1) with a PLAINTEXT and an SSL listener; a confluent-kafka
  producer (core 0) sends --produce-mb of 1 KiB records (acks=1, linger 5 ms) through each
  listener in turn. MB/s of record values.
* ``fetch``: the same broker; a partition of 1 KiB records (page cache warm) read from the start
  with raw Fetch v11 requests of up to 50 MiB (benchmarks/run.py's fetch loop; over TLS through
  Python's ssl) through each listener. Plaintext fetches go out with sendfile; TLS fetches are
  read and encrypted.
* ``connect``: median time from TCP connect to the first answered Metadata request, over --n
  connections made one after another by a raw client (Python sockets, kafkapy's own SASL client
  exchanges), per listener: PLAINTEXT, SSL, SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and
  SCRAM-SHA-512, SASL_SSL with SCRAM-SHA-512. SCRAM's PBKDF2 (4096 iterations) runs on the
  client, so its cost is shown separately.

Each figure is the median of --repeat runs with min-max. The table goes to stdout, every sample
to benchmarks/results/security.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import socket
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import fmt, fmt_values, parse_sections, pin, progress
from raw_client import Raw, fetch_v11, parse_fetch_v11

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kio.schema.metadata.v12.request import MetadataRequest

from kafkapy.cli.wire import Connection
from kafkapy.security.jaas import PLAIN_LOGIN_MODULE as PLAIN_MODULE
from kafkapy.security.jaas import SCRAM_LOGIN_MODULE as SCRAM_MODULE
from kafkapy.testing import BrokerProcess, free_port
from kafkapy.testing.tls import Pki, make_pki

MiB = 1024 * 1024
MB = 1e6
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
SECTIONS = ("ceiling", "produce", "fetch", "connect")
CHUNK = 256 * 1024
RESULTS = Path(__file__).resolve().parent / "results"
PLAIN_JAAS = f'{PLAIN_MODULE} required user_bench="bench-secret";'


def say(msg: str) -> None:
    progress(msg, "security")


# --- ceiling -------------------------------------------------------------------------------------


def _receiver(port_q: mp.Queue, pki_dir: str, use_tls: bool, total: int) -> None:
    pin(BROKER_CPU)
    srv = socket.create_server(("127.0.0.1", 0))
    port_q.put(srv.getsockname()[1])
    conn, _ = srv.accept()
    if use_tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(Path(pki_dir) / "server.pem"))
        conn = ctx.wrap_socket(conn, server_side=True)
    if _recv_bytes(conn, total) < total:
        return
    conn.sendall(b"!")
    _send_bytes(conn, total)
    conn.close()


def _send_bytes(sock: socket.socket, total: int) -> None:
    data = bytes(CHUNK)
    sent = 0
    while sent < total:
        sock.sendall(data)
        sent += len(data)


def _recv_bytes(sock: socket.socket, total: int) -> int:
    buf = bytearray(CHUNK)
    got = 0
    while got < total:
        n = sock.recv_into(buf)
        if not n:
            break
        got += n
    return got


def ceiling(pki: Pki, use_tls: bool, mb: int) -> tuple[float, float]:
    """(send MB/s, receive MB/s) over loopback, plain TCP or TLS."""
    total = mb * MiB
    q: mp.Queue = mp.Queue()
    proc = mp.Process(target=_receiver, args=(q, str(pki.dir), use_tls, total))
    proc.start()
    port = q.get(timeout=10)
    sock = socket.create_connection(("127.0.0.1", port))
    if use_tls:
        ctx = ssl.create_default_context(cafile=pki.ca)
        sock = ctx.wrap_socket(sock, server_hostname="localhost")
    t0 = time.perf_counter()
    _send_bytes(sock, total)
    assert sock.recv(1) == b"!"
    t1 = time.perf_counter()
    got = _recv_bytes(sock, total)
    t2 = time.perf_counter()
    sock.close()
    proc.join(10)
    return total / MB / (t1 - t0), got / MB / (t2 - t1)


# --- broker --------------------------------------------------------------------------------------


def start_broker(base: Path, pki: Pki) -> tuple[BrokerProcess, dict[str, str]]:
    ports = {name: free_port() for name in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
    broker = BrokerProcess(
        base / "broker",
        {
            "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
            "inter.broker.listener.name": "PLAINTEXT",
            "ssl.keystore.location": pki.server_keystore,
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "message.max.bytes": str(8 * MiB),
        },
        port=ports["PLAINTEXT"],
        cpu=BROKER_CPU,
    )
    broker.start()
    return broker, {n: f"127.0.0.1:{p}" for n, p in ports.items()}


def client_conf(listener: str, bootstrap: str, pki: Pki) -> dict:
    conf = {"bootstrap.servers": bootstrap}
    if listener == "SSL":
        conf.update({"security.protocol": "SSL", "ssl.ca.location": pki.ca})
    return conf


def produce_mb_s(conf: dict, topic: str, mb: int) -> float:
    from confluent_kafka import Producer

    value = b"x" * 1024
    count = mb * 1024
    p = Producer(
        {
            **conf,
            "acks": "1",
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    p.list_topics(topic, timeout=10)
    t0 = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                p.produce(topic, value)
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(120) == 0
    return count * len(value) / MB / (time.perf_counter() - t0)


def fetch_mb_s(bootstrap: str, topic: str, end_offset: int, cafile: str | None) -> float:
    """Read partition 0 from the start with raw Fetch v11 requests of up to 50 MiB (as
    benchmarks/run.py's fetch section), over TLS when ``cafile`` is given; record MB/s."""
    raw = open_raw(bootstrap, cafile)
    raw.buf = bytearray(64 * MiB)
    offset = total = 0
    t0 = time.perf_counter()
    try:
        while offset < end_offset:
            raw.send(1, 11, fetch_v11(topic, {0: offset}, 50 * MiB, 50 * MiB))
            err, nxt, nbytes = parse_fetch_v11(raw.recv())[0]
            if err or nxt < 0:
                raise RuntimeError(f"fetch at {offset}: error {err}, next {nxt}")
            offset, total = nxt, total + nbytes
    finally:
        raw.close()
    return total / MB / (time.perf_counter() - t0)


def open_raw(bootstrap: str, cafile: str | None) -> Raw:
    raw = Raw(bootstrap)
    if cafile is not None:
        ctx = ssl.create_default_context(cafile=cafile)
        raw.sock = ctx.wrap_socket(raw.sock, server_hostname="localhost")
    return raw


# --- connection set-up ---------------------------------------------------------------------------


def connect_ms(bootstrap: str, listener: str, mechanism: str | None, pki: Pki, n: int) -> float:
    """Median ms from TCP connect to an answered Metadata request over ``n`` connections made by
    the tools' wire client (kafkapy.cli.wire: Python sockets and ssl, kafkapy's SASL client
    exchanges), configured with the Java client's properties."""
    props = {"security.protocol": listener}
    if "SSL" in listener:
        props.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca})
    if mechanism is not None:
        module = PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE
        props.update(
            {
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": f'{module} required username="bench" password="bench-secret";',
            }
        )
    host, port = bootstrap.split(":")
    request = MetadataRequest(
        topics=(), allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        with Connection(host, int(port), props=props) as conn:
            conn.request(request)
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def create_scram_user(bootstrap: str) -> None:
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    ups = [
        UserScramCredentialUpsertion("bench", ScramCredentialInfo(m, 4096), b"bench-secret")
        for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
    ]
    for f in admin.alter_user_scram_credentials(ups).values():
        f.result(30)


def pbkdf2_ms(hash_name: str) -> float:
    t0 = time.perf_counter()
    for _ in range(20):
        hashlib.pbkdf2_hmac(hash_name, b"bench-secret", b"salt", 4096)
    return (time.perf_counter() - t0) * 1000 / 20


# --- main ----------------------------------------------------------------------------------------


CONNECT_CASES = [
    ("PLAINTEXT", "PLAINTEXT", None),
    ("SSL", "SSL", None),
    ("SASL_PLAINTEXT PLAIN", "SASL_PLAINTEXT", "PLAIN"),
    ("SASL_PLAINTEXT SCRAM-SHA-256", "SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT SCRAM-SHA-512", "SASL_PLAINTEXT", "SCRAM-SHA-512"),
    ("SASL_SSL SCRAM-SHA-512", "SASL_SSL", "SCRAM-SHA-512"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--only", default=None, help=f"comma-separated: {', '.join(SECTIONS)}")
    args = ap.parse_args()
    sections = parse_sections(args.only, SECTIONS)
    repeat = args.repeat or (1 if args.quick else 3)
    produce_mb = 64 if args.quick else 256
    fetch_mb = 128 if args.quick else 512
    ceiling_mb = 256 if args.quick else 1024
    n_connect = 30 if args.quick else 100
    pin(CLIENT_CPU)
    samples: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    with tempfile.TemporaryDirectory(prefix="kafkapy-security-bench-") as tmp:
        base = Path(tmp)
        pki = make_pki(base / "pki")
        for r in range(repeat):
            if "ceiling" in sections:
                for use_tls, name in ((False, "TCP"), (True, "TLS")):
                    say(f"ceiling {name} {ceiling_mb} MiB (run {r + 1}/{repeat})")
                    send, recv = ceiling(pki, use_tls, ceiling_mb)
                    add(f"ceiling {name} send", send)
                    add(f"ceiling {name} receive", recv)
            if not {"produce", "fetch", "connect"} & set(sections):
                continue
            broker, boots = start_broker(base / f"run{r}", pki)
            try:
                if "produce" in sections:
                    for listener in ("PLAINTEXT", "SSL"):
                        say(f"produce {produce_mb} MB through {listener}")
                        conf = client_conf(listener, boots[listener], pki)
                        add(
                            f"produce {listener}",
                            produce_mb_s(conf, f"p-{listener.lower()}", produce_mb),
                        )
                if "fetch" in sections:
                    say(f"filling the fetch topic with {fetch_mb} MB")
                    produce_mb_s({"bootstrap.servers": boots["PLAINTEXT"]}, "fetch", fetch_mb)
                    records = fetch_mb * 1024
                    fetch_mb_s(boots["PLAINTEXT"], "fetch", records, None)  # warm
                    for listener in ("PLAINTEXT", "SSL"):
                        say(f"fetch {fetch_mb} MB through {listener}")
                        cafile = pki.ca if listener == "SSL" else None
                        add(
                            f"fetch {listener}",
                            fetch_mb_s(boots[listener], "fetch", records, cafile),
                        )
                if "connect" in sections:
                    create_scram_user(boots["PLAINTEXT"])
                    for label, listener, mechanism in CONNECT_CASES:
                        say(f"connect {label} x{n_connect}")
                        add(
                            f"connect {label}",
                            connect_ms(boots[listener], listener, mechanism, pki, n_connect),
                        )
            finally:
                broker.stop()
        if "connect" in sections:
            add("client PBKDF2 SHA-256 4096", pbkdf2_ms("sha256"))
            add("client PBKDF2 SHA-512 4096", pbkdf2_ms("sha512"))

    rows = []
    for key, vals in samples.items():
        unit = "ms" if key.startswith(("connect", "client")) else "MB/s"
        rows.append((key, fmt_values(vals), unit))
    print("\n| measurement | value | unit |\n| --- | ---: | --- |")
    for key, value, unit in rows:
        print(f"| {key} | {value} | {unit} |")
    for a, b in (("produce SSL", "produce PLAINTEXT"), ("fetch SSL", "fetch PLAINTEXT")):
        if a in samples and b in samples:
            ratio = statistics.median(samples[a]) / statistics.median(samples[b])
            print(f"\n{a} / {b}: {fmt(ratio * 100)} %")
    RESULTS.mkdir(exist_ok=True)
    mode = "quick" if args.quick else "full"
    (RESULTS / f"security-{mode}.json").write_text(json.dumps(samples, indent=1) + "\n")


if __name__ == "__main__":
    main()
