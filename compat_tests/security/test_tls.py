"""TLS listeners with real clients: server-only TLS and mutual TLS with confluent-kafka,
kafka-python and kcat; expired, untrusted and missing client certificates; fetches of large
records through the TLS stream (no sendfile there); Metadata answering with the endpoints of the
listener the client came in on.

One broker, three listeners:
* PLAINTEXT (the inter-broker listener);
* TLS (SSL, ``ssl.client.auth=none``, a PEM key store whose key is encrypted, ssl.key.password);
* MTLS (SSL, ``ssl.client.auth=required``, a PKCS12 key store, the test CA as trust store).
"""

from __future__ import annotations

import shutil

import pytest

from compat_tests.security.helpers import (
    first_error,
    kafka_python_round_trip,
    kcat_round_trip,
    produce_and_consume,
)
from kafkapy.testing import free_port
from kafkapy.testing.tls import KEY_PASSWORD


@pytest.fixture(scope="module")
def broker(module_broker_factory, pki):
    plain, tls, mtls = free_port(), free_port(), free_port()
    proc = module_broker_factory(
        {
            "listeners": f"PLAINTEXT://127.0.0.1:{plain},TLS://127.0.0.1:{tls},"
            f"MTLS://127.0.0.1:{mtls}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,TLS:SSL,MTLS:SSL",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.name.tls.ssl.keystore.type": "PEM",
            "listener.name.tls.ssl.keystore.location": str(pki.dir / "server-encrypted.pem"),
            "listener.name.tls.ssl.key.password": KEY_PASSWORD,
            "listener.name.mtls.ssl.keystore.type": "PKCS12",
            "listener.name.mtls.ssl.keystore.location": str(pki.dir / "server.p12"),
            "listener.name.mtls.ssl.keystore.password": KEY_PASSWORD,
            "listener.name.mtls.ssl.truststore.location": pki.ca,
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=.*$/$1/,DEFAULT",
            "group.initial.rebalance.delay.ms": "0",
        },
        name="tls-broker",
        port=plain,
    )
    proc.tls_bootstrap = f"127.0.0.1:{tls}"
    proc.mtls_bootstrap = f"127.0.0.1:{mtls}"
    proc.ports = {"PLAINTEXT": plain, "TLS": tls, "MTLS": mtls}
    return proc


def tls_conf(bootstrap: str, pki, client: str | None = None) -> dict:
    conf = {"bootstrap.servers": bootstrap, "security.protocol": "SSL", "ssl.ca.location": pki.ca}
    if client is not None:
        cert, key = pki.client(client)
        conf.update({"ssl.certificate.location": cert, "ssl.key.location": key})
    return conf


def test_server_tls_large_records_round_trip(broker, pki) -> None:
    """Values larger than a TLS record and than the copy chunk come back intact."""
    values = [bytes([i]) * (700 * 1024 + i) for i in range(4)]
    conf = {
        **tls_conf(broker.tls_bootstrap, pki),
        "message.max.bytes": 2_000_000,
        "fetch.max.bytes": 8_000_000,
    }
    assert produce_and_consume(conf, "tls-large", values) == values


def test_metadata_answers_with_the_clients_listener(broker, pki) -> None:
    from confluent_kafka.admin import AdminClient

    for name, conf in [
        ("PLAINTEXT", {"bootstrap.servers": broker.bootstrap}),
        ("TLS", tls_conf(broker.tls_bootstrap, pki)),
        ("MTLS", tls_conf(broker.mtls_bootstrap, pki, "alice")),
    ]:
        [node] = AdminClient(conf).list_topics(timeout=15).brokers.values()
        assert (node.host, node.port) == ("127.0.0.1", broker.ports[name])


@pytest.mark.parametrize("listener", ["TLS", "MTLS"])
def test_kafka_python_over_tls(broker, pki, listener) -> None:
    common = dict(security_protocol="SSL", ssl_cafile=pki.ca)
    if listener == "MTLS":
        cert, key = pki.client("alice")
        common.update(bootstrap_servers=broker.mtls_bootstrap, ssl_certfile=cert, ssl_keyfile=key)
    else:
        common.update(bootstrap_servers=broker.tls_bootstrap)
    values = [b"m%d" % i for i in range(5)]
    assert kafka_python_round_trip(common, f"kp-{listener.lower()}", values) == values


@pytest.mark.parametrize(
    ("client", "reason"),
    [
        (None, "PEER_DID_NOT_RETURN_A_CERTIFICATE"),
        ("expired", "certificate has expired"),
        ("rogue", "unable to get local issuer certificate"),
    ],
)
def test_mutual_tls_refuses_missing_expired_and_untrusted_certificates(broker, pki, client, reason):
    # with TLS 1.3 the client may only see the connection closed after its handshake
    assert first_error(tls_conf(broker.mtls_bootstrap, pki, client)) is not None
    failures = [
        line
        for line in broker.log_text().splitlines()
        if "failed authentication" in line and "listener=MTLS" in line
    ]
    assert any(reason in line for line in failures), failures[-3:]
    # the same certificate is good enough where client certificates are not asked for
    if client is not None:
        assert first_error(tls_conf(broker.tls_bootstrap, pki, client)) is None


def test_client_refuses_a_broker_it_does_not_trust(broker, pki) -> None:
    conf = {**tls_conf(broker.tls_bootstrap, pki), "ssl.ca.location": pki.client("rogue")[0]}
    error = first_error(conf)
    assert error is not None and "certificate verify failed" in error


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
def test_kcat_over_mutual_tls(broker, pki) -> None:
    cert, key = pki.client("alice")
    config = {
        "security.protocol": "SSL",
        "ssl.ca.location": pki.ca,
        "ssl.certificate.location": cert,
        "ssl.key.location": key,
    }
    assert kcat_round_trip(broker.mtls_bootstrap, config, "kcat-tls") == [b"one", b"two"]
