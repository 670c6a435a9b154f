"""One client connection: read frames, dispatch each request, write responses in order.

Requests on a connection are handled one after another, as Kafka does (it mutes a channel while a
request is in flight), so responses always go out in request order even when the client pipelines
requests; pipelined frames simply wait in the socket buffer and in the frame reader.

Frames are received (``readv`` on the non-blocking socket, waiting for readability only when it
runs dry) straight into their own bytearrays (protocol/framing.py FrameReader), which handlers may
modify: Produce validates and stamps the received batch in place and appends it from there, so
record bytes are copied once in user space (kernel to frame) on their way to the log. While a
large frame is arriving, the receive low-water mark is raised to the bytes it still misses, so
the connection wakes once per frame rather than once per few segments (server/rcvlowat.py).

Limits (Kafka's, see server/acceptor.py for the connection counts): each frame's buffer is
charged to the broker's request memory pool (queued.max.request.bytes, server/memory_pool.py)
before it is allocated; when the pool is empty the connection stops reading until handled
requests credit memory back. Every byte received or sent marks the connection active; one idle
longer than connections.max.idle.ms is closed (server/idle_expiry.py).

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
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
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
from kafkapy.security.principal import KafkaPrincipal
from kafkapy.security.session import Session
from kafkapy.storage.log import FileRegion

from .error_response import UNKNOWN_SERVER_ERROR_MESSAGE, RequestError, error_response
from .idle_expiry import Activity
from .rcvlowat import LowWater
from .registry import REGISTRY
from .responses import NO_RESPONSE, RawResponse, encode_entity, response_module
from .sendfile import send_region

if TYPE_CHECKING:
    from .broker import Broker

log = logging.getLogger("kafkapy.connection")

STAGE_SIZE = 64 * 1024  # frames larger than this are received straight into their own buffer
_conn_ids = itertools.count(1)


class CloseConnection(Exception):
    """The request cannot be answered; Kafka closes the connection in this case."""


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    header: RequestHeader
    frame: bytes | bytearray  # the whole request (header and body); handlers may modify it
    peer: str
    connection_id: int
    session: Session  # principal, listener, security protocol, client address

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def principal(self) -> KafkaPrincipal:
        """Who the connection authenticated as (``User:ANONYMOUS`` without authentication)."""
        return self.session.principal

    @property
    def R(self) -> ModuleType:  # noqa: N802  (the response entities of this request's version)
        return response_module(self.header.api_key, self.header.api_version)


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
            from .apis.api_versions import unsupported_version_reply

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


async def _send_bytes(
    sock: trio.socket.SocketType, data: bytes | bytearray, touch: Callable[[], None] | None
) -> None:
    """Send all of ``data``, marking the connection active after every part the kernel took."""
    with memoryview(data) as view:
        total = 0
        while total < len(view):
            with view[total:] as rest:
                total += await sock.send(rest)
            if touch is not None:
                touch()


async def send_parts(
    stream: trio.SocketStream,
    parts: list[bytes | FileRegion],
    touch: Callable[[], None] | None = None,
) -> None:
    """Write one response: size prefix, then its parts (file regions with sendfile).

    File regions carry descriptors owned by the response; they are closed here once sent, or
    when sending fails. ``touch`` is called whenever bytes went out (idle expiry).
    """
    size = sum(p.length if isinstance(p, FileRegion) else len(p) for p in parts)
    pending = bytearray(INT32.pack(size))
    sock = stream.socket
    try:
        for part in parts:
            if isinstance(part, FileRegion):
                if pending:
                    await _send_bytes(sock, pending, touch)
                    pending = bytearray()
                await send_region(sock, part, touch)
            else:
                pending += part
        if pending:
            await _send_bytes(sock, pending, touch)
    finally:
        for part in parts:
            if isinstance(part, FileRegion):
                os.close(part.fileno)


async def _serve_frames(
    broker: Broker,
    stream: trio.SocketStream,
    frames: list[bytearray],
    peer: str,
    conn_id: int,
    session: Session,
    activity: Activity,
) -> bool:
    """Handle received frames in order (emptying ``frames``), answering each; True if any
    response was sent.

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
            parts = await handle_frame(broker, frame, peer, conn_id, session)
        finally:
            activity.busy = False
            pool.release(frame)
            del frame  # not alive while the response goes out (the pool has credited it)
        activity.touch()
        if parts is not NO_RESPONSE:
            await send_parts(stream, parts, activity.touch)
            answered = True
    return answered


async def serve_connection(broker: Broker, stream: trio.SocketStream) -> None:
    """Serve one accepted connection until the peer closes it, sends something unacceptable,
    or stays idle longer than connections.max.idle.ms."""
    conn_id = next(_conn_ids)
    session = Session()
    try:
        session.client_host, session.client_port = stream.socket.getpeername()[:2]
    except OSError:
        pass
    peer = session.peer
    pool = broker.request_memory
    reader = FrameReader(
        broker.config.socket_request_max_bytes,
        STAGE_SIZE,
        pool.try_charge if pool.bounded else None,
    )
    sock = stream.socket
    fd = sock.fileno()
    lowat = LowWater(sock)
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
                    # receive without blocking while bytes are there; when the socket runs dry,
                    # drop the staging buffer and wait (idle connections hold no receive buffer)
                    try:
                        n = os.readv(fd, (reader.buffer(),))
                    except BlockingIOError:
                        reader.release()
                        if not reader.waiting_for_memory:
                            lowat.wait_for(reader.missing)  # a large frame: wake when all there
                            await trio.lowlevel.wait_readable(sock)
                        continue
                    if not n:
                        return
                    activity.touch()
                    frames = reader.received(n)
                pool.lease_all(frames)
                answered = await _serve_frames(
                    broker, stream, frames, peer, conn_id, session, activity
                )
                frames = []  # an idle connection must not keep its last request alive
                if not answered:  # no await has yielded (partial frame, acks=0): let others run
                    await trio.lowlevel.checkpoint()
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
            pool.release_all(frames)
            pool.credit(reader.charged)
            with trio.CancelScope(shield=True):
                await stream.aclose()
