"""Kafka's 4-byte length framing, sans-io.

`FrameDecoder` receives bytes as they arrive and yields whole request frames. The size limit
(socket.request.max.bytes) is enforced as soon as a frame's length prefix is seen, before any
buffer for the frame is allocated, so an oversized or negative length costs nothing.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent a frame that cannot be accepted; the connection must be closed."""


class FrameDecoder:
    """Split a byte stream into length-prefixed frames."""

    __slots__ = ("_buf", "_max_size", "_need")

    def __init__(self, max_size: int) -> None:
        self._buf = bytearray()
        self._max_size = max_size
        self._need = -1  # size of the frame being assembled, -1 while reading the prefix

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        """Add received bytes; return the frames completed by them (maybe none)."""
        self._buf += data
        frames: list[bytes] = []
        buf = self._buf
        pos = 0
        end = len(buf)
        while True:
            if self._need < 0:
                if end - pos < 4:
                    break
                (size,) = _SIZE.unpack_from(buf, pos)
                if size < 0:
                    raise FrameError(f"negative frame size {size}")
                if size > self._max_size:
                    raise FrameError(
                        f"frame of {size} bytes exceeds socket.request.max.bytes={self._max_size}"
                    )
                pos += 4
                self._need = size
            if end - pos < self._need:
                break
            with memoryview(buf) as view:  # one copy, not two (slice, then bytes)
                frames.append(bytes(view[pos : pos + self._need]))
            pos += self._need
            self._need = -1
        if pos:
            del buf[:pos]
        return frames

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buf)


def frame(payload: bytes | bytearray) -> bytes:
    """Prefix a payload with its 4-byte size."""
    return _SIZE.pack(len(payload)) + bytes(payload)
