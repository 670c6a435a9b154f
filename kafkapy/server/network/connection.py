"""One client connection: read frames, dispatch each request, write responses in order.

Requests on a connection are handled one after another, as Kafka does (it mutes a channel while a
request is in flight), so responses always go out in request order even when the client pipelines
requests; pipelined frames simply wait in the socket buffer and in the frame reader.

Frames are received through the connection's channel (server/network/channel.py: on plain TCP,
``readv`` on the non-blocking socket straight into their own bytearrays, protocol/framing.py
FrameReader), which handlers may modify: Produce validates and stamps the received batch in place
and appends it from there, so record bytes are copied once in user space (kernel to frame) on
their way to the log. On SASL listeners every frame passes the authentication stage first
(server/security/sasl_authenticator.py); a failed authentication is answered and the connection
closed after connection.failed.authentication.delay.ms.

Limits (Kafka's, see server/network/acceptor.py for the connection counts): each frame's buffer is
charged to the broker's request memory pool (queued.max.request.bytes,
server/network/memory_pool.py) before it is allocated; when the pool is empty the connection stops
reading until handled requests credit memory back. Every byte received or sent marks the connection
active; one idle longer than connections.max.idle.ms is closed (server/network/idle_expiry.py).

Malformed input closes the connection, as Kafka does: a frame over socket.request.max.bytes
(refused before any buffer is allocated), a header that does not decode, an unknown API key, a
version that is not served (except ApiVersions, which answers UNSUPPORTED_VERSION in a v0 reply),
or a body that does not decode. Bodies decoded by kio are first checked by the bounds guard
(protocol/request_guard.py: every length and count against the bytes left, null only where the
schema allows it), because kio's native reader allocates what a count asks for and a hostile
count would abort the process.

An unexpected exception in a handler does not close the connection: it is logged once (with the
traceback, API name and version) and answered with the request's own error response,
UNKNOWN_SERVER_ERROR on every topic, partition, resource or group the request named
(server/error_response.py, Kafka's getErrorResponse), so clients report the error instead of
reconnecting and retrying. Only Produce with acks=0, which has no response, closes the
connection, as in Kafka. KAFKAPY_TEST_FAIL_APIS (tests only, unset by default) makes the named
APIs' handlers fail, to test that path.
"""

from __future__ import annotations

import itertools
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio
from kio.index import load_request_schema
from kio.serial import entity_reader

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.framing import FrameError, FrameReader
from kafkapy.protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    parse_request_header,
    response_header,
)
from kafkapy.protocol.request_guard import Guard, UnknownTaggedField, guard_for
from kafkapy.protocol.tagged_fields import strip_unknown_tags
from kafkapy.protocol.wire import INT32, DecodeError
from kafkapy.security.session import Session

from ..error_response import UNKNOWN_SERVER_ERROR_MESSAGE, RequestError, error_response
from ..registry import REGISTRY
from ..request_context import AuthenticationFailed, CloseConnection, RequestContext
from ..responses import NO_RESPONSE, RawResponse, encode_entity
from .channel import WAIT_FOR_MEMORY
from .idle_expiry import Activity

if TYPE_CHECKING:
    from ..broker import Broker
    from ..security.sasl_authenticator import Authenticator
    from .channel import Channel

log = logging.getLogger("kafkapy.connection")

STAGE_SIZE = 64 * 1024  # frames larger than this are received straight into their own buffer
_conn_ids = itertools.count(1)


class _Pass:
    def __repr__(self) -> str:
        return "PASS"


PASS: Any = _Pass()  # the authentication stage lets the frame through to dispatch


@dataclass(frozen=True, slots=True)
class _BodyCodec:
    """How one request version's body is read: the bounds guard, then kio's reader."""

    schema: type
    guard: Guard
    reader: Any


_codecs: dict[tuple[int, int], _BodyCodec] = {}


def _codec_for(api_key: int, version: int) -> _BodyCodec:
    codec = _codecs.get((api_key, version))
    if codec is None:
        schema = load_request_schema(api_key, version)
        codec = _codecs[(api_key, version)] = _BodyCodec(
            schema, guard_for(schema), entity_reader(schema)
        )
    return codec


def decode_body(header: RequestHeader, frame: bytes | bytearray) -> Any:
    """Decode a request body with kio, after the bounds guard (protocol/request_guard.py) has
    checked every length and count in it: kio's native reader allocates what an array count
    asks for before reading the items, and a hostile count aborts the process.

    kio reads only immutable buffers: a received bytearray is copied (the large-bodied hot paths
    are raw handlers and never come here). kio refuses unknown tagged fields, which Kafka's rule
    says to skip: those are dropped first (protocol/tagged_fields.py).
    """
    codec = _codec_for(header.api_key, header.api_version)
    pos = header.body_offset
    try:
        try:
            codec.guard(frame, pos, len(frame))
        except UnknownTaggedField:
            frame = strip_unknown_tags(codec.schema, frame, pos)
            pos = 0
            codec.guard(frame, pos, len(frame))
        if not isinstance(frame, bytes):
            frame = bytes(frame)
        request, _size = codec.reader(frame, pos)
    except Exception as e:
        raise CloseConnection(f"request body does not decode: {type(e).__name__}: {e}") from None
    return request


async def handle_frame(
    broker: Broker, frame: bytes | bytearray, peer: str, conn_id: int, session: Session
) -> Any:
    """Dispatch one request frame; return the encoded response parts or NO_RESPONSE."""
    try:
        header = parse_request_header(frame)
    except (DecodeError, UnicodeDecodeError) as e:
        raise CloseConnection(f"bad request header: {e}") from None
    reg = REGISTRY.get(header.api_key)
    if reg is None:
        raise CloseConnection(f"unknown API key {header.api_key}")
    if not reg.range.accepts(header.api_version):
        if header.api_key == API_VERSIONS_KEY:
            from ..apis.api_versions import unsupported_version_reply

            return [INT32.pack(header.correlation_id), unsupported_version_reply()]
        raise CloseConnection(
            f"unsupported version {header.api_version} of {reg.range.name} "
            f"(served {reg.range.accept_min}-{reg.range.max_version})"
        )
    ctx = RequestContext(broker, header, frame, peer, conn_id, session)
    request = None if reg.raw else decode_body(header, frame)
    try:
        if FAILING_APIS and ({reg.range.name, "*"} & FAILING_APIS):
            raise InjectedFailure(f"{FAIL_APIS_ENV} names {reg.range.name}")
        if broker.client_quotas.request.enabled:  # handler time counts (quota_enforcement.py)
            result = await broker.client_quotas.timed(reg.handler, ctx, request, reg.raw)
        else:
            result = await reg.handler(ctx, request)
        if result is NO_RESPONSE:
            return NO_RESPONSE
        body = result.parts if isinstance(result, RawResponse) else [encode_entity(result)]
    except CloseConnection:
        raise
    except RequestError as e:  # the handler refuses the whole request, as Kafka's may
        body = [_error_body(reg.range.name, header, frame, request, e.error_code, e.message)]
    except Exception:
        _log_unexpected_error(reg.range.name, header, peer)
        body = [_error_body(reg.range.name, header, frame, request)]
    return [response_header(header.api_key, header.correlation_id, header.flexible), *body]


class InjectedFailure(RuntimeError):
    """A handler failure injected for tests (see FAIL_APIS_ENV)."""


FAIL_APIS_ENV = "KAFKAPY_TEST_FAIL_APIS"
# Test-only fault injection, off unless the variable is set: a comma-separated list of API names
# (or *) whose handler raises instead of running, to test the unexpected-error path end to end.
FAILING_APIS = frozenset(n.strip() for n in os.environ.get(FAIL_APIS_ENV, "").split(",") if n)


def _log_unexpected_error(api: str, header: RequestHeader, peer: str) -> None:
    """Log the exception being handled once, with the traceback, API name and version."""
    log.error(
        "unexpected error in handler, answering UNKNOWN_SERVER_ERROR api=%s version=%d "
        "correlation_id=%d client_id=%s peer=%s",
        api,
        header.api_version,
        header.correlation_id,
        header.client_id,
        peer,
        exc_info=True,
    )


def _error_body(
    api: str,
    header: RequestHeader,
    frame: bytes | bytearray,
    request: Any,
    error: ErrorCode = ErrorCode.unknown_server_error,
    message: str | None = UNKNOWN_SERVER_ERROR_MESSAGE,
) -> bytes:
    """The body of the request's own error response: ``error`` on everything it names, as
    Kafka's request handler answers (server/error_response.py). Only when no response can be
    built (Produce with acks=0 has none, as in Kafka) is the connection closed."""
    try:
        if request is None:  # a raw handler's request: decode it the generic way now
            request = decode_body(header, frame)
        response = error_response(header.api_key, header.api_version, request, error, message)
        if response is not None:
            return encode_entity(response)
    except Exception as e:
        raise CloseConnection(f"no error response for {api}: {type(e).__name__}: {e}") from None
    raise CloseConnection(f"{api} request failed and has no response")


async def _serve_frames(
    broker: Broker,
    channel: Channel,
    frames: list[bytearray],
    peer: str,
    conn_id: int,
    session: Session,
    auth: Authenticator | None,
    activity: Activity,
) -> bool:
    """Handle received frames in order (emptying ``frames``), answering each; True if any
    response was sent. On SASL listeners each frame goes to the authentication stage first.

    Each frame's charge to the request memory pool is credited once it has been handled (or
    earlier by its handler), before its response is sent: a client that does not read its
    responses holds no pool memory."""
    pool = broker.request_memory
    answered = False
    frames.reverse()
    while frames:
        frame = frames.pop()  # taken out of the list: nothing keeps it once handled
        activity.busy = True
        try:
            parts = PASS if auth is None else await auth.on_frame(frame)
            if parts is PASS:
                parts = await handle_frame(broker, frame, peer, conn_id, session)
        finally:
            activity.busy = False
            pool.release(frame)
            del frame  # not alive while the response goes out (the pool has credited it)
        activity.touch()
        if parts is not NO_RESPONSE:
            await channel.send(parts, activity.touch)
            answered = True
        if broker.client_quotas.muted:  # throttled by a quota: read nothing more meanwhile
            activity.busy = True
            try:
                await broker.client_quotas.wait_unmuted(conn_id)
            finally:
                activity.busy = False
            answered = True
    return answered


async def serve_connection(
    broker: Broker, channel: Channel, session: Session, auth: Authenticator | None = None
) -> None:
    """Serve one accepted connection until the peer closes it, sends something unacceptable,
    or stays idle longer than connections.max.idle.ms.

    ``channel`` is the transport (plain or TLS, server/network/channel.py); ``session`` what the
    connection is known as (listener, principal, client address); ``auth``, on SASL listeners,
    the authentication stage (server/security/sasl_authenticator.py): it sees every frame first,
    answers the SASL exchange itself and lets through only what the connection's state allows.
    """
    conn_id = next(_conn_ids)
    peer = session.peer
    pool = broker.request_memory
    reader = FrameReader(
        broker.config.socket_request_max_bytes,
        STAGE_SIZE,
        pool.try_charge if pool.bounded else None,
    )
    if auth is not None:
        reader.max_size = auth.max_receive  # unauthenticated peers get the small SASL limit
    frames: list[bytearray] = []
    broker.connections.add(conn_id)
    with trio.CancelScope() as scope:
        activity = broker.idle.register(conn_id, peer, scope)
        try:
            while True:
                if reader.waiting_for_memory:  # muted until requests free pool memory
                    await pool.wait_for_memory()
                    frames = reader.resume()
                else:
                    n = await channel.receive(reader)
                    if n == WAIT_FOR_MEMORY:
                        continue
                    if not n:
                        return
                    activity.touch()
                    if not channel.yielded:  # pipelined requests: let the others run first
                        await trio.lowlevel.checkpoint()
                    frames = reader.received(n)
                pool.lease_all(frames)
                await _serve_frames(broker, channel, frames, peer, conn_id, session, auth, activity)
                frames = []  # an idle connection must not keep its last request alive
                if auth is not None:
                    reader.max_size = auth.max_receive
                channel.yielded = False  # responses usually go out without yielding
        except AuthenticationFailed as e:
            log.info(
                "failed authentication peer=%s listener=%s reason=%r",
                peer,
                session.listener_name,
                e.reason,
            )
            if e.response is not None:
                await channel.send(e.response)
            await trio.sleep(broker.config.connection_failed_authentication_delay_ms / 1000)
        except FrameError as e:
            log.warning("closing connection peer=%s reason=%r", peer, str(e))
        except CloseConnection as e:
            log.warning("closing connection peer=%s reason=%r", peer, str(e))
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass
        except Exception:
            log.exception("unexpected error, closing connection peer=%s", peer)
        finally:
            broker.idle.unregister(activity)
            broker.connections.discard(conn_id)
            broker.client_quotas.muted.pop(conn_id, None)
            pool.release_all(frames)
            pool.credit(reader.charged)
            with trio.CancelScope(shield=True):
                await channel.aclose()
