"""A raw, pipelined Produce load client: the broker-bound produce figure.

One Python confluent-kafka producer tops out near 400,000 ``produce()`` calls per second on this
machine's client core (the ``ceil.client.*`` rows), so at 1 KiB it cannot offer more than about
400 MB/s, and less once librdkafka's own threads share that core. To measure what the broker
takes, this client does for produce what the raw Fetch loop does for fetch: it encodes one
Produce v7 request per partition once (a single batch of records filling ``batch.size``, as
librdkafka would build it) and sends it again and again, ``inflight`` requests ahead of the
responses on one connection. The broker validates, stamps offsets into and appends every copy as
it would any producer's batch (offsets and leader epoch sit outside the CRC, so the same bytes
stay valid), so the client costs almost nothing and the figure is the broker's.
"""

from __future__ import annotations

import socket
import struct
import time

from kafkapy.protocol.record_batch import Record, encode_batch

MiB = 1024 * 1024
RECORD_OVERHEAD = 10  # about what one record adds to a batch besides its value (no key/headers)
MAX_BATCH_RECORDS = 10_000  # librdkafka's batch.num.messages default


def produce_batch(size: int, batch_bytes: int = MiB) -> tuple[bytes, int]:
    """One uncompressed batch of ``size``-byte values, at most ``batch_bytes`` long (as
    librdkafka's batch.size bounds it) and at most 10,000 records; (batch, record count)."""
    count = max(1, min(MAX_BATCH_RECORDS, batch_bytes // (size + RECORD_OVERHEAD)))
    now = int(time.time() * 1000)
    base = (b"kafkapy benchmark record " * (size // 25 + 1))[:size]
    while True:
        recs = [Record(i, now, None, bytes([i & 0xFF]) + base[1:], []) for i in range(count)]
        batch = encode_batch(recs)
        if len(batch) <= batch_bytes or count == 1:
            return batch, count
        count = count * batch_bytes // len(batch)


def produce_request(topic: str, partition: int | range, batch: bytes, acks: int,
                    corr: int) -> bytes:
    """A framed Produce v7 request carrying ``batch`` for one partition (or for each of a range
    of partitions, as librdkafka puts one batch per partition in a request)."""
    name = topic.encode()
    parts = range(partition, partition + 1) if isinstance(partition, int) else partition
    body = (
        struct.pack(">hhih", 0, 7, corr, 3)
        + b"raw"
        + struct.pack(">hhi", -1, acks, 30_000)  # transactional id null, acks, timeout
        + struct.pack(">ih", 1, len(name))
        + name
        + struct.pack(">i", len(parts))
        + b"".join(struct.pack(">ii", p, len(batch)) + batch for p in parts)
    )
    return struct.pack(">i", len(body)) + body


def _recv_exact(sock: socket.socket, view: memoryview, n: int) -> memoryview:
    got = 0
    while got < n:
        k = sock.recv_into(view[got:n])
        if not k:
            raise ConnectionError("broker closed the connection")
        got += k
    return view[:n]


def raw_produce(
    bootstrap: str,
    topic: str,
    size: int,
    seconds: float,
    partitions: int = 1,
    acks: int = 1,
    inflight: int = 4,
    spread: bool = False,
) -> tuple[int, float]:
    """Produce pre-encoded batches round-robin over ``partitions`` for ``seconds``, ``inflight``
    requests outstanding; return (records acknowledged, elapsed from first send to last ack).

    With ``spread`` every request carries one batch for each of the ``partitions``, each 1 MiB /
    ``partitions`` long (one producer's records spread over the partitions, as librdkafka sends
    them: one request per broker, one batch per partition in it)."""
    if spread:
        batch, count = produce_batch(size, max(MiB // partitions, size + 100))
        requests = [produce_request(topic, range(partitions), batch, acks, 0)]
        count *= partitions
    else:
        batch, count = produce_batch(size)
        requests = [produce_request(topic, p, batch, acks, 0) for p in range(partitions)]
    error_at = 4 + 4 + 2 + len(topic.encode()) + 4 + 4  # corr, topics, name, parts, index
    host, port = bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = memoryview(bytearray(4))
    buf = memoryview(bytearray(64 * 1024))
    sent = acked = 0
    start = time.perf_counter()
    deadline = start + seconds
    try:
        while True:
            while sent - acked < inflight and time.perf_counter() < deadline:
                sock.sendall(requests[sent % len(requests)])
                sent += 1
            if acked == sent:
                break
            (n,) = struct.unpack(">i", _recv_exact(sock, head, 4))
            frame = _recv_exact(sock, buf, n)
            (err,) = struct.unpack_from(">h", frame, error_at)
            if err:
                raise RuntimeError(f"raw produce: error code {err}")
            acked += 1
    finally:
        sock.close()
    return acked * count, time.perf_counter() - start
