"""Frames that arrive in pieces are still received whole with the low-water mark raised, and the
mark is back at 1 afterwards (a small frame must not wait for more bytes than it has)."""

from __future__ import annotations

import socket
import struct
from functools import partial

import trio

from kafkapy.protocol.framing import FrameReader
from kafkapy.server.network.peer_connection import PeerConnection


def test_frame_reader_reports_the_missing_bytes_of_a_large_frame():
    r = FrameReader(1 << 30, stage_size=64)
    buf = r.buffer()
    data = struct.pack(">i", 1000) + b"x" * 12
    buf[: len(data)] = data
    assert r.received(len(data)) == []
    assert r.missing == 1000 - 12
    view = r.buffer()
    view[: r.missing] = b"y" * r.missing
    assert len(r.received(1000 - 12)[0]) == 1000 and r.missing == 0


def test_peer_connection_receives_a_response_sent_in_pieces():
    body = bytes(range(256)) * 8192  # 2 MiB: above the 1 MiB low-water cap
    small = b"ok"

    async def server(stream: trio.SocketStream) -> None:
        for payload in (body, small):
            head = await stream.receive_some(4096)
            (corr,) = struct.unpack_from(">i", head, 8)  # size, key, version, correlation id
            frame = struct.pack(">ii", 4 + len(payload), corr) + payload
            for i in range(0, len(frame), 300_000):
                await stream.send_all(frame[i : i + 300_000])
                await trio.sleep(0.01)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, server, 0, host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            conn = await PeerConnection.open("127.0.0.1", port, "t")
            got = await conn.request_raw(18, 0, b"")  # ApiVersions v0: not flexible
            assert bytes(got) == body
            opt = conn.stream.socket.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT)
            assert opt == 1
            with trio.fail_after(5):
                assert bytes(await conn.request_raw(18, 0, b"")) == small
            await conn.aclose()
            nursery.cancel_scope.cancel()

    trio.run(main)
