"""A small blocking Kafka protocol client for the tools' needs that confluent-kafka does not cover
(ApiVersions of every broker, OffsetDelete, the transaction APIs): sends kio request entities,
decodes responses.

It speaks what the tool's --command-config asks for, with the Java client's keys:
``security.protocol`` SSL or SASL_SSL wraps the socket in TLS (``ssl.truststore.*`` to trust the
broker, ``ssl.keystore.*`` for a client certificate, ``ssl.endpoint.identification.algorithm``;
kafkapy.security.tls), SASL_PLAINTEXT or SASL_SSL authenticates with ``sasl.mechanism`` (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512) and the ``username``/``password`` of ``sasl.jaas.config`` (with
``tokenauth=true``: a delegation token's id and HMAC)
(SaslHandshake v1, SaslAuthenticate v2; kafkapy.security's client exchanges)."""

from __future__ import annotations

import io
import socket
import ssl
import struct
from collections.abc import Mapping
from typing import Any

from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from kafkapy.cli.common import CliError
from kafkapy.protocol.headers import is_flexible
from kafkapy.security.jaas import JaasConfigError, login_options
from kafkapy.security.plain import PlainClient
from kafkapy.security.sasl import PLAIN, SaslAuthenticationError, SaslClient, client_exchange
from kafkapy.security.scram import MECHANISMS, ScramClient
from kafkapy.security.tls import TlsConfigError, client_context

API_VERSIONS = 18


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in bootstrap.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise CliError(f"Invalid url in bootstrap.servers: {item}")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise CliError("No bootstrap servers given")
    return out


def _sasl_client(props: Mapping[str, str]) -> SaslClient:
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()
    try:
        options = login_options(props.get("sasl.jaas.config", ""))
    except JaasConfigError as e:
        raise CliError(f"Invalid sasl.jaas.config: {e}") from None
    user, password = options.get("username", ""), options.get("password", "")
    if mechanism == PLAIN:
        return PlainClient(user, password)
    if mechanism in MECHANISMS:
        token_auth = options.get("tokenauth", "").lower() == "true"  # a delegation token
        return ScramClient(mechanism, user, password, token_auth)
    raise CliError(f"sasl.mechanism {mechanism} is not supported (PLAIN, SCRAM-SHA-256/512)")


class Connection:
    def __init__(
        self,
        host: str,
        port: int,
        timeout: float = 10.0,
        client_id: str = "kafkapy-cli",
        props: Mapping[str, str] | None = None,
    ):
        self.host, self.port = host, port
        props = props or {}
        protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ConnectionError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self.client_id = client_id.encode()
        self._corr = 0
        if protocol in ("SSL", "SASL_SSL"):
            try:
                context = client_context(props)
                self.sock = context.wrap_socket(self.sock, server_hostname=host)
            except TlsConfigError as e:
                self.sock.close()
                raise CliError(str(e)) from None
            except (ssl.SSLError, OSError) as e:
                self.sock.close()
                raise ConnectionError(f"TLS with {host}:{port} failed: {e}") from None
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            self._authenticate(_sasl_client(props))

    def _authenticate(self, client: SaslClient) -> None:
        from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
        from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

        shake = self.request(SaslHandshakeRequest(mechanism=client.mechanism))
        if shake.error_code != 0:
            raise CliError(
                f"SASL mechanism {client.mechanism} is not enabled on {self.host}:{self.port} "
                f"(enabled: {', '.join(shake.mechanisms)})"
            )
        exchange = client_exchange(client)
        token = next(exchange)
        while True:
            reply = self.request(SaslAuthenticateRequest(auth_bytes=token))
            if reply.error_code != 0:
                raise CliError(f"SASL authentication failed: {reply.error_message}")
            try:
                token = exchange.send(reply.auth_bytes)
            except StopIteration:
                return
            except SaslAuthenticationError as e:
                raise CliError(str(e)) from None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, entity: Any) -> Any:
        frame, pos = self.request_raw(entity)
        value, _ = entity_reader(load_response_schema(entity.__api_key__, entity.__version__))(
            frame, pos
        )
        return value

    def request_raw(self, entity: Any) -> tuple[bytes, int]:
        """Send a request entity; the response frame and where its body starts (for the few
        responses a tool decodes itself)."""
        api_key, version = entity.__api_key__, entity.__version__
        self._corr += 1
        flexible = is_flexible(api_key, version)
        head = struct.pack(">hhi", api_key, version, self._corr)
        head += struct.pack(">h", len(self.client_id)) + self.client_id
        if flexible:
            head += b"\x00"
        buf = io.BytesIO()
        entity_writer(type(entity))(buf, entity)
        payload = head + buf.getvalue()
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._recv(4))[0]
        frame = self._recv(size)
        pos = 4
        if flexible and api_key != API_VERSIONS:
            pos += 1  # empty tagged fields of response header v1
        return frame, pos

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError(f"connection to {self.host}:{self.port} closed")
            out += chunk
        return bytes(out)


def connect_any(
    bootstrap: str, timeout: float = 10.0, props: Mapping[str, str] | None = None
) -> Connection:
    """A connection to the first broker of ``bootstrap`` that answers, secured as ``props``
    (the tool's --command-config) asks."""
    errors = []
    for host, port in parse_bootstrap(bootstrap):
        try:
            return Connection(host, port, timeout, props=props)
        except ConnectionError as e:
            errors.append(str(e))
    raise CliError(f"Cannot connect to the cluster at {bootstrap}: " + "; ".join(errors))
