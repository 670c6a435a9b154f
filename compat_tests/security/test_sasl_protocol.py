"""SASL at the protocol level, with a raw client: what a connection may send before it
authenticates (ApiVersions, again after one answered with an error, and SaslHandshake only),
SaslHandshake v0 (raw tokens) and v1 (SaslAuthenticate), ILLEGAL_SASL_STATE,
UNSUPPORTED_SASL_MECHANISM with the listener's mechanisms, the failed-authentication delay, and
re-authentication and session expiry (KIP-368).
The broker: conftest.py (sasl_broker_overrides in helpers.py) (SASL_PLAINTEXT and SASL_SSL)."""

from __future__ import annotations

import datetime
import socket
import ssl
import struct
import time

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v0.request import SaslHandshakeRequest as SaslHandshakeV0
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from compat_tests.rawclient import RawClient, encode_request
from compat_tests.security.helpers import (
    FAILED_AUTH_DELAY_MS,
    REAUTH_MS,
    sasl_conf,
)
from kafkapy.security.sasl import client_exchange
from kafkapy.security.scram import ScramClient


def test_requests_before_authentication_get_nothing(broker) -> None:
    for first in (
        MetadataRequest(
            topics=None, allow_auto_topic_creation=True, include_topic_authorized_operations=False
        ),
    ):
        with RawClient(broker.bootstrap) as raw:  # no handshake at all
            raw.send_frame(encode_request(first))
            assert raw.is_closed_by_peer(5)
    with RawClient(broker.bootstrap) as raw:  # ApiVersions is allowed, and advertises SASL
        versions = raw.request(
            ApiVersionsRequest(client_software_name="raw", client_software_version="1")
        )
        assert {17, 36} <= {k.api_key for k in versions.api_keys}
        raw.send_frame(encode_request(first))  # but nothing else before authentication
        assert raw.is_closed_by_peer(5)
    with RawClient(broker.bootstrap) as raw:  # bytes that are not a request
        raw.send_frame(b"\x00\x01garbage")
        assert raw.is_closed_by_peer(5)


def _api_versions_frame(version: int, software: str = "franz-go", correlation_id: int = 7
                        ) -> bytes:
    """An ApiVersions request of any version from v3's layout (kio has no schema for versions
    the broker does not serve): header v2, then the flexible body (software name, version)."""
    def compact(text: str) -> bytes:
        return bytes([len(text) + 1]) + text.encode()

    head = struct.pack(">hhih", 18, version, correlation_id, 3) + b"raw" + b"\x00"
    return head + compact(software) + compact("1.22.3") + b"\x00"


def test_api_versions_may_be_retried_until_one_succeeds(broker, carol) -> None:
    """A client opening with an ApiVersions version the broker does not serve (franz-go 1.22
    opens with v5) gets UNSUPPORTED_VERSION in a v0 reply naming ApiVersions' own range, and
    retries at that range's top, as against Kafka, whose SaslServerAuthenticator waits for
    ApiVersions or SaslHandshake until an ApiVersions succeeds; so does one whose software name
    is refused (INVALID_REQUEST). Then SASL goes on; a second successful ApiVersions closes."""
    from kafkapy.protocol.api_table import served_apis

    served = served_apis()["ApiVersions"]
    with RawClient(broker.bootstrap) as raw:
        raw.send_frame(_api_versions_frame(served.max_version + 1))
        reply = raw.recv_frame()
        assert struct.unpack(">ihi", reply[:10]) == (7, 35, 1)  # UNSUPPORTED_VERSION
        assert struct.unpack(">hhh", reply[10:16]) == (18, served.min_version, served.max_version)
        assert len(reply) == 16
        refused = raw.request(
            ApiVersionsRequest(client_software_name="-bad-", client_software_version="1")
        )
        assert refused.error_code == 42  # INVALID_REQUEST
        versions = raw.request(
            ApiVersionsRequest(client_software_name="raw", client_software_version="1")
        )
        assert versions.error_code == 0 and {17, 36} <= {k.api_key for k in versions.api_keys}
        assert _authenticate_v1(raw, ScramClient("SCRAM-SHA-256", *carol)) == 0
        assert len(_metadata(raw).brokers) == 1
    with RawClient(broker.bootstrap) as raw:
        assert raw.request(
            ApiVersionsRequest(client_software_name="raw", client_software_version="1")
        ).error_code == 0
        raw.send_frame(_api_versions_frame(served.max_version))
        assert raw.is_closed_by_peer(5)


def _authenticate_v1(raw: RawClient, client) -> int:
    """SASL through SaslHandshake v1 and SaslAuthenticate v2; the session lifetime in ms."""
    assert raw.request(SaslHandshakeRequest(mechanism=client.mechanism)).error_code == 0
    exchange = client_exchange(client)
    token = next(exchange)
    while True:
        reply = raw.request(SaslAuthenticateRequest(auth_bytes=token))
        assert reply.error_code == 0, reply.error_message
        try:
            token = exchange.send(reply.auth_bytes)
        except StopIteration:
            return int(reply.session_lifetime.total_seconds() * 1000)


def _metadata(raw: RawClient):
    return raw.request(
        MetadataRequest(
            topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
        )
    )


def test_raw_plain_v0_and_v1_exchanges(broker) -> None:
    from kafkapy.security.plain import PlainClient

    with RawClient(broker.bootstrap) as raw:  # v1: SaslAuthenticate requests
        assert _authenticate_v1(raw, PlainClient("bob", "bob-secret")) == 0
        assert len(_metadata(raw).brokers) == 1
        # after authentication, SASL requests are answered ILLEGAL_SASL_STATE (34)
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 34
        again = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0bob\0bob-secret"))
        assert again.error_code == 34
    with RawClient(broker.bootstrap) as raw:  # v0: raw size-prefixed tokens
        assert raw.request(SaslHandshakeV0(mechanism="PLAIN")).error_code == 0
        raw.send_frame(b"\0bob\0bob-secret")
        assert raw.recv_frame() == b""
        assert len(_metadata(raw).brokers) == 1


def test_other_requests_during_the_exchange_get_illegal_sasl_state(broker) -> None:
    """Where a SaslAuthenticate is due, another request gets its own error response with
    ILLEGAL_SASL_STATE (34), as Kafka answers, and the connection is closed."""
    import uuid

    from kio.schema.metadata.v12.request import MetadataRequestTopic

    with RawClient(broker.bootstrap) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
        reply = raw.request(
            MetadataRequest(
                topics=(MetadataRequestTopic(name="secret", topic_id=uuid.UUID(int=0)),),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )
        assert [(t.name, t.error_code) for t in reply.topics] == [("secret", 34)]
        assert reply.brokers == ()
        assert raw.is_closed_by_peer(5)


def test_failed_authentication_is_answered_then_closed_after_the_delay(broker) -> None:
    with RawClient(broker.bootstrap) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="PLAIN")).error_code == 0
        reply = raw.request(SaslAuthenticateRequest(auth_bytes=b"\0bob\0nope"))
        answered = time.monotonic()
        assert reply.error_code == 58  # SASL_AUTHENTICATION_FAILED
        assert reply.error_message == "Authentication failed: Invalid username or password"
        assert raw.is_closed_by_peer(10)
        assert time.monotonic() - answered >= FAILED_AUTH_DELAY_MS / 1000 * 0.9


def test_reauthentication_and_session_expiry(broker, carol) -> None:
    from confluent_kafka import Producer

    def scram() -> ScramClient:
        return ScramClient("SCRAM-SHA-512", *carol)

    expired, renewed = RawClient(broker.bootstrap), RawClient(broker.bootstrap)
    with expired, renewed:
        assert _authenticate_v1(expired, scram()) == REAUTH_MS
        assert _authenticate_v1(renewed, scram()) == REAUTH_MS
        time.sleep(1.2)
        assert _authenticate_v1(renewed, scram()) == REAUTH_MS  # KIP-368: same connection
        time.sleep(1.0)  # the first sessions are now over
        assert len(_metadata(renewed).brokers) == 1
        expired.send_frame(
            encode_request(
                MetadataRequest(
                    topics=None,
                    allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False,
                )
            )
        )
        assert expired.is_closed_by_peer(5)
    # librdkafka re-authenticates by itself: a producer outliving two sessions sees no error
    errors: list[str] = []
    producer = Producer(
        {
            **sasl_conf(broker.bootstrap, "SCRAM-SHA-512", *carol),
            "error_cb": lambda e: errors.append(e.str()),
        }
    )
    deadline = time.monotonic() + 2.5 * REAUTH_MS / 1000
    sent = 0
    while time.monotonic() < deadline:
        producer.produce("reauth", b"x")
        sent += 1
        producer.poll(0.2)
    assert producer.flush(15) == 0
    assert errors == [] and sent > 10
    # and its connections were never cut for an expired session (only the raw one above was)
    assert broker.log_text().count("SASL session expired") == 1


def _tls_raw(bootstrap: str, cafile: str) -> RawClient:
    raw = RawClient(bootstrap)
    ctx = ssl.create_default_context(cafile=cafile)
    raw.sock = ctx.wrap_socket(raw.sock, server_hostname="127.0.0.1")
    return raw


def test_plaintext_bytes_on_a_tls_listener_get_no_kafka_answer(broker) -> None:
    """The SASL_SSL listener refuses plain bytes: a plaintext client gets no Kafka answer."""
    host, port = broker.ssl_bootstrap.split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(struct.pack(">i", 10) + b"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00")
        s.settimeout(5)
        try:
            data = s.recv(64)
        except ConnectionResetError:
            data = b""
        assert not data.startswith(b"\x00\x00")  # nothing that looks like a Kafka response


def test_unsupported_mechanism_lists_the_listeners_mechanisms(broker, pki) -> None:
    """SaslHandshake for a mechanism the listener does not enable: UNSUPPORTED_SASL_MECHANISM
    (33) with the mechanisms it does, then the connection is closed."""
    with _tls_raw(broker.ssl_bootstrap, pki.ca) as raw:
        reply = raw.request(SaslHandshakeRequest(mechanism="PLAIN"))
        assert reply.error_code == 33
        assert list(reply.mechanisms) == ["SCRAM-SHA-512"]
        assert raw.is_closed_by_peer(5)


def test_frames_before_authentication_are_limited(broker) -> None:
    """Before authentication a frame may not exceed sasl.server.max.receive.size (512 KiB):
    a client announcing 1 MiB is disconnected at once, before the broker allocates it."""
    with RawClient(broker.bootstrap) as raw:
        raw.sock.sendall(struct.pack(">i", 1 << 20) + b"\x00" * 64)
        assert raw.is_closed_by_peer(5)


def test_no_unauthenticated_request_reaches_data(broker) -> None:
    """Produce and CreateTopics from clients that skip SASL, that send them after ApiVersions,
    or that pipeline them behind a failed SaslAuthenticate: none is answered, the connection is
    closed, and the log and the topic list are as they were."""
    from kio.schema.create_topics.v7 import request as ct

    from compat_tests.rawclient import produce_request
    from compat_tests.txn_raw import batch, fetch_partition
    from kafkapy.protocol.record_batch import decode_records, iter_batches

    def create(name: str) -> ct.CreateTopicsRequest:
        return ct.CreateTopicsRequest(
            topics=(ct.CreatableTopic(name=name, num_partitions=1, replication_factor=1,
                                      assignments=(), configs=()),),
            timeout=datetime.timedelta(seconds=10), validate_only=False)

    topic, forged = "guarded", "created-unauthenticated"
    with RawClient(broker.bootstrap).sasl_plain("bob", "bob-secret") as bob:
        assert bob.request(create(topic)).topics[0].error_code == 0
        resp = bob.request(produce_request(topic, batch([b"kept"])))
        assert resp.responses[0].partition_responses[0].error_code == 0

    attacks = [encode_request(produce_request(topic, batch([b"forged"])), 7),
               encode_request(create(forged), 8)]
    versions = encode_request(
        ApiVersionsRequest(client_software_name="raw", client_software_version="1"), 6)
    for payload in attacks:
        for preface in (None, versions):
            with RawClient(broker.bootstrap) as raw:
                if preface is not None:
                    raw.send_frame(preface)
                    raw.recv_frame()  # ApiVersions is answered, nothing after it
                raw.send_frame(payload)
                assert raw.is_closed_by_peer(5)  # closed without a byte of answer
    with RawClient(broker.bootstrap) as raw:  # pipelined behind a failed authentication
        frames = [encode_request(SaslHandshakeRequest(mechanism="PLAIN"), 1),
                  encode_request(SaslAuthenticateRequest(auth_bytes=b"\0bob\0wrong"), 2),
                  *attacks]
        raw.sock.sendall(b"".join(struct.pack(">i", len(f)) + f for f in frames))
        answered = [struct.unpack(">i", raw.recv_frame()[:4])[0] for _ in range(2)]
        assert answered == [1, 2]  # the handshake and the failure, nothing for the rest
        assert raw.is_closed_by_peer(10)

    with RawClient(broker.bootstrap).sasl_plain("bob", "bob-secret") as bob:
        records = bytes(fetch_partition(bob, topic, 0, 0).records or b"")
        values = [r.value for pos, h in iter_batches(records)
                  for r in decode_records(records[pos:pos + 12 + h.batch_length])]
        assert values == [b"kept"]
        assert forged not in {t.name for t in _metadata(bob).topics}
