"""TLS contexts from Kafka's ssl.* settings, and the principal of a client certificate, through
real TLS handshakes in memory (the standard library's ssl under trio)."""

from __future__ import annotations

import ssl

import pytest
import trio
import trio.testing

from kafkapy.security.listener_security import ListenerSecurity, SecurityConfigError
from kafkapy.security.principal import ANONYMOUS, KafkaPrincipal
from kafkapy.security.tls import TlsConfigError, openssl_cipher_name, server_context
from kafkapy.server.network.listeners import certificate_principal
from kafkapy.testing.tls import ALICE_DN, KEY_PASSWORD


def test_key_stores(pki) -> None:
    server_context({"ssl.keystore.location": pki.server_keystore})  # PEM, type sniffed
    server_context(
        {
            "ssl.keystore.type": "PEM",
            "ssl.key.password": KEY_PASSWORD,
            "ssl.keystore.location": str(pki.dir / "server-encrypted.pem"),
        }
    )
    server_context(
        {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": KEY_PASSWORD,
            "ssl.keystore.location": str(pki.dir / "server.p12"),
        }
    )
    key, cert = (pki.dir / "alice.key").read_text(), (pki.dir / "alice.crt").read_text()
    server_context({"ssl.keystore.key": key, "ssl.keystore.certificate.chain": cert})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({}, "ssl.keystore.location (or ssl.keystore.key"),
        ({"ssl.keystore.location": "/nonexistent.pem"}, "No such file or directory"),
        (
            {"ssl.keystore.location": "{enc}", "ssl.key.password": "wrong"},
            "is ssl.key.password right?",
        ),
        (
            {"ssl.keystore.location": "{ks}", "ssl.keystore.type": "JKS"},
            "ssl.keystore.type=JKS is not supported: convert the store to PKCS12",
        ),
        (
            {"ssl.keystore.location": "{ks}", "ssl.enabled.protocols": "TLSv9"},
            "ssl.enabled.protocols",
        ),
        ({"ssl.keystore.location": "{ks}", "ssl.client.auth": "maybe"}, "ssl.client.auth"),
        (
            {"ssl.keystore.location": "{ks}", "ssl.cipher.suites": "NOPE_CIPHER"},
            "no cipher suite of the list is available",
        ),
        (
            {
                "ssl.keystore.location": "{ks}",
                "ssl.client.auth": "required",
                "ssl.truststore.location": "/nonexistent-ca.pem",
            },
            "ssl.truststore.location",
        ),
    ],
)
def test_bad_settings_are_one_line_errors(pki, settings, message) -> None:
    values = {
        k: v.format(ks=pki.server_keystore, enc=pki.dir / "server-encrypted.pem")
        for k, v in settings.items()
    }
    with pytest.raises(TlsConfigError) as info:
        server_context(values)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_listener_errors_name_the_listener(pki) -> None:
    with pytest.raises(SecurityConfigError, match="^listener CLIENT: "):
        ListenerSecurity.build({}, "CLIENT", "SSL")


def test_cipher_suites() -> None:
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384") == (
        "ECDHE-RSA-AES256-GCM-SHA384"
    )
    assert openssl_cipher_name("TLS_RSA_WITH_AES_128_CBC_SHA") == "AES128-SHA"
    assert openssl_cipher_name("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256") == (
        "ECDHE-ECDSA-CHACHA20-POLY1305"
    )
    assert openssl_cipher_name("ECDHE-RSA-AES128-GCM-SHA256") == "ECDHE-RSA-AES128-GCM-SHA256"


def _client_context(pki, client: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=pki.ca)
    if client is not None:
        ctx.load_cert_chain(*pki.client(client))
    return ctx


def _handshake_principal(security: ListenerSecurity, client_ctx: ssl.SSLContext):
    """Handshake a client with the listener's context in memory; the server-side principal."""

    async def run():
        server_side, client_side = trio.testing.memory_stream_pair()
        server = trio.SSLStream(server_side, security.ssl_context, server_side=True)
        client = trio.SSLStream(client_side, client_ctx, server_hostname="localhost")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.do_handshake)
            await server.do_handshake()
        return certificate_principal(server, security)

    return trio.run(run)


@pytest.mark.parametrize(
    ("rules", "client", "principal"),
    [
        (None, "alice", KafkaPrincipal.user(ALICE_DN)),
        (
            "RULE:^CN=(.*?),OU=(.*?),O=.*$/$1@$2/U,DEFAULT",
            "alice",
            KafkaPrincipal.user("ALICE@CLIENTS"),
        ),
        (None, None, ANONYMOUS),  # requested, not sent
    ],
)
def test_certificate_principal(pki, rules, client, principal) -> None:
    props = {
        "ssl.keystore.location": pki.server_keystore,
        "ssl.truststore.location": pki.ca,
        "ssl.client.auth": "requested",
    }
    if rules is not None:
        props["ssl.principal.mapping.rules"] = rules
    security = ListenerSecurity.build(props, "SSL", "SSL")
    assert _handshake_principal(security, _client_context(pki, client)) == principal


def test_tls_transport_moves_large_buffers_and_ends_cleanly(pki) -> None:
    """The broker's TLS transport (memory BIOs) between two real sockets: several MiB each
    way, received into caller buffers; close_notify ends the stream; a corrupt record is a
    ConnectionError, not an exception of its own."""
    from kafkapy.server.network.tls_transport import TlsTransport

    server_ctx = server_context({"ssl.keystore.location": pki.server_keystore})
    client_ctx = ssl.create_default_context(cafile=pki.ca)
    payload = bytes(range(256)) * (12 * 1024)  # 3 MiB

    async def read_all(t: TlsTransport, n: int) -> bytes:
        buf = bytearray(n)
        got = 0
        while got < n:
            k = await t.receive_into(memoryview(buf)[got:])
            assert k, "stream ended early"
            got += k
        return bytes(buf)

    async def connected() -> tuple[TlsTransport, TlsTransport, trio.socket.SocketType]:
        a, b = trio.socket.socketpair()
        server = TlsTransport(a, server_ctx, server_side=True)
        client = TlsTransport(b, client_ctx, server_side=False, server_hostname="localhost")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.handshake)
            await server.handshake()
        return server, client, b

    async def run() -> None:
        server, client, _ = await connected()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.send_all, payload)
            assert await read_all(server, len(payload)) == payload
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.send_all, payload)
            assert await read_all(client, len(payload)) == payload
        await client.aclose()
        assert await server.receive_into(memoryview(bytearray(10))) == 0
        await server.aclose()
        # a forged record after a good handshake
        server, client, b = await connected()
        await b.send(b"\x17\x03\x03\x00\x20" + bytes(32))
        with pytest.raises(ConnectionError, match="TLS error"):
            await server.receive_into(memoryview(bytearray(10)))
        await server.aclose()
        await client.aclose()

    trio.run(run)


@pytest.mark.parametrize(
    ("algorithm", "host", "ok"),
    [
        ("https", "localhost", True),
        ("https", "not-the-broker.example", False),
        ("", "not-the-broker.example", True),
    ],
)
def test_broker_as_client_checks_the_peer_name(pki, algorithm, host, ok) -> None:
    """ssl.endpoint.identification.algorithm: https (Kafka's default) makes a broker refuse a
    peer whose certificate does not name the host it connected to; empty turns the check off."""
    from kafkapy.security.tls import client_context
    from kafkapy.server.network.tls_transport import TlsTransport

    server_ctx = server_context({"ssl.keystore.location": pki.server_keystore})
    client_ctx = client_context(
        {"ssl.truststore.location": pki.ca, "ssl.endpoint.identification.algorithm": algorithm}
    )

    async def client_error() -> ssl.SSLError | None:
        a, b = trio.socket.socketpair()
        server = TlsTransport(a, server_ctx, server_side=True)
        client = TlsTransport(b, client_ctx, server_side=False, server_hostname=host)

        async def serve() -> None:
            try:
                await server.handshake()
            except (ssl.SSLError, ConnectionError):
                pass  # the client hung up on us

        error = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            try:
                await client.handshake()
            except ssl.SSLCertVerificationError as e:
                error = e
                await client.aclose()
        await server.aclose()
        if error is None:
            await client.aclose()
        return error

    error = trio.run(client_error)
    assert (error is None) == ok, error
    if not ok:
        assert "Hostname mismatch" in str(error)
