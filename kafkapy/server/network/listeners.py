"""The broker's listeners: one listening socket per entry of ``listeners``, each speaking its
security protocol (listener.security.protocol.map).

Every accepted connection gets a :class:`~kafkapy.security.session.Session` naming the listener,
its protocol and the client's address, then its transport:

* PLAINTEXT, SASL_PLAINTEXT: plain TCP (server/network/channel.py PlainChannel, zero-copy fetch);
* SSL, SASL_SSL: a TLS handshake with the listener's context first (server/network/channel.py
  TlsChannel). On an SSL listener the principal is the client certificate's subject mapped by
  ``ssl.principal.mapping.rules`` (``User:ANONYMOUS`` without a certificate, when
  ``ssl.client.auth`` is none or requested). A failed handshake (untrusted or expired
  certificate, no certificate where one is required, no common protocol or cipher) closes the
  connection and is logged as a failed authentication.

On SASL listeners the connection then passes the authentication stage
(server/security/sasl_authenticator.py) before anything else is served.
"""

from __future__ import annotations

import logging
import ssl
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.security.listener_security import ListenerSecurity
from kafkapy.security.principal import ANONYMOUS, KafkaPrincipal
from kafkapy.security.session import Session
from kafkapy.security.ssl_principal import NoMatchingRule, subject_dn

from ..security.jwks_refresh import fetch_initial, http_key_sets, keep_fresh
from ..security.sasl_authenticator import Authenticator
from .acceptor import Acceptor, raise_open_file_limit
from .channel import PlainChannel, TlsChannel
from .connection import serve_connection
from .tls_transport import TlsTransport

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.listeners")


def certificate_principal(stream: Any, security: ListenerSecurity) -> KafkaPrincipal:
    """The principal of the client certificate verified during the handshake (ANONYMOUS when
    the client sent none); NoMatchingRule when no mapping rule applies."""
    cert = stream.getpeercert()
    if not cert or not cert.get("subject"):
        return ANONYMOUS
    return KafkaPrincipal.user(security.principal_mapper.name(subject_dn(cert["subject"])))


async def accept(broker: Broker, security: ListenerSecurity, stream: trio.SocketStream) -> None:
    """Serve one connection accepted on ``security``'s listener."""
    session = Session(security.name, security.protocol)
    try:
        session.client_host, session.client_port = stream.socket.getpeername()[:2]
    except OSError:
        pass
    # connection creation rates (server/quota_enforcement.py): may delay, or refuse and close
    rates = broker.client_quotas
    if rates.connections.active and not await rates.admit(session.client_host):
        await trio.aclose_forcefully(stream)
        return
    if not security.tls:
        channel: Any = PlainChannel(stream)
    else:
        assert security.ssl_context is not None
        tls = TlsTransport(stream.socket, security.ssl_context, server_side=True)
        try:
            with trio.fail_after(broker.config.connections_max_idle_ms / 1000):
                await tls.handshake()
            if not security.sasl:
                session.principal = certificate_principal(tls, security)
        except (trio.TooSlowError, ssl.SSLError, NoMatchingRule, OSError) as e:
            # a peer that closes before saying anything (a port probe) is not worth an INFO line
            quiet = isinstance(e, ssl.SSLEOFError | ConnectionError)
            log.log(
                logging.DEBUG if quiet else logging.INFO,
                "failed authentication peer=%s listener=%s reason=%r",
                session.peer,
                security.name,
                f"SSL handshake failed: {e}",
            )
            with trio.CancelScope(shield=True):
                await tls.aclose()
            return
        channel = TlsChannel(tls)
    auth = Authenticator(broker, security, session) if security.sasl else None
    await serve_connection(broker, channel, session, auth)


async def serve_listeners(broker: Broker, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Bind every listener, report the first one's port as started, accept until cancelled
    under the broker's connection limits (server/network/acceptor.py: one accept loop per socket,
    max.connections shared by all listeners)."""
    config = broker.config
    fd_limit = raise_open_file_limit()
    key_sets = http_key_sets(config.listener_security.values())
    for keys in key_sets:  # OAUTHBEARER's JWKS, fetched before any client may connect
        await fetch_initial(keys)
    opened = []
    for lst in config.listeners:
        sockets = await trio.open_tcp_listeners(lst.port, host=lst.host or None)
        opened.append((config.listener_security[lst.name], sockets))
        broker.bound_ports[lst.name] = sockets[0].socket.getsockname()[1]
    broker.bound_port = broker.bound_ports[config.listeners[0].name]
    log.info(
        "kafkapy started broker.id=%s listeners=%s advertised=%s cluster.id=%s",
        broker.broker_id,
        ",".join(
            f"{s.name}://{lst.host}:{broker.bound_ports[s.name]}"
            for (s, _), lst in zip(opened, config.listeners, strict=True)
        ),
        ",".join(f"{a.name}://{a.host}:{a.port}" for a in config.advertised_listeners),
        broker.cluster_id,
    )
    task_status.started(broker.bound_port)
    async with trio.open_nursery() as nursery:
        for keys in key_sets:
            nursery.start_soon(keep_fresh, keys)
        for security, sockets in opened:

            async def serve(stream: trio.SocketStream, _ip: str, security=security) -> None:
                await accept(broker, security, stream)

            acceptor = Acceptor(broker.quotas, serve, fd_limit)
            nursery.start_soon(acceptor.run, sockets)
