"""Kafka's 4-byte length framing, sans-io.

`FrameReader` (the server's) hands out the buffer the next receive should fill (``recv_into``,
``readv``) and returns whole request frames as bytearrays the handlers may modify in place
(Produce stamps offsets into the received batch and appends it from there). Small frames are
received into a staging buffer (kept while the connection is busy, released when it is idle)
and copied out; a frame larger than what is staged is allocated at its exact size once its
length prefix is seen and the rest of it is received straight into it, so the bytes of a large
produce request are copied once in user space, by the kernel.

`FrameDecoder` is the simpler feed-bytes variant (clients, tests).

In both, the size limit (socket.request.max.bytes) is enforced as soon as a frame's length
prefix is seen, before any buffer for the frame is allocated, so an oversized or negative length
costs nothing.

`FrameReader` can also ask permission before it allocates a frame (``charge``, the broker's
request memory pool, queued.max.request.bytes): when refused, the bytes stay where they are and
``waiting_for_memory`` tells the caller to stop reading until ``resume()``. When the socket runs
dry in the middle of a frame (``release()``), the partial frame moves out of the staging buffer
into its own buffer (a slow sender holds what its frame needs, not a whole staging buffer).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable

_SIZE = struct.Struct(">i")


def _frame_allocator() -> Callable[[int], bytearray]:
    """``bytearray(n)``, or its uncleared variant when the native speedups are built: a frame
    buffer is filled completely before it is returned, and not clearing it means its pages are
    touched only as bytes arrive (a peer announcing a large frame and then stalling costs
    address space, not memory, as with the old incremental buffer)."""
    if not os.environ.get("KAFKAPY_PURE_PYTHON"):
        try:
            from kafkapy.protocol._speedups import uninitialized_bytearray
        except ImportError:
            pass
        else:
            return uninitialized_bytearray
    return bytearray


_alloc_frame = _frame_allocator()


class FrameError(Exception):
    """The peer sent a frame that cannot be accepted; the connection must be closed."""


def _check_size(size: int, max_size: int) -> None:
    if size < 0:
        raise FrameError(f"negative frame size {size}")
    if size > max_size:
        raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={max_size}")


class FrameReader:
    """Receive frames into their own buffers: ``buffer()`` to receive into, ``received(n)``."""

    __slots__ = (
        "_blocked",
        "_charge",
        "_end",
        "_filled",
        "_frame",
        "_max_size",
        "_stage",
        "_stage_size",
        "_start",
    )

    def __init__(
        self,
        max_size: int,
        stage_size: int = 64 * 1024,
        charge: Callable[[int], bool] | None = None,
    ) -> None:
        self._max_size = max_size
        self._stage_size = stage_size
        self._charge = charge  # asked before a frame buffer is allocated; False: wait
        self._blocked = False
        self._stage = bytearray()  # allocated on first use, dropped by release()
        self._start = 0  # first staged byte not yet returned
        self._end = 0  # end of the staged bytes
        self._frame: bytearray | None = None  # a large frame being received in place
        self._filled = 0  # bytes of ``_frame`` received so far

    @property
    def max_size(self) -> int:
        """The largest frame accepted (checked as each frame's length prefix arrives)."""
        return self._max_size

    @max_size.setter
    def max_size(self, value: int) -> None:
        self._max_size = value

    def buffer(self) -> memoryview:
        """The writable buffer the next receive should fill."""
        if self._frame is not None:
            return memoryview(self._frame)[self._filled :]
        if not self._stage:
            self._stage = _alloc_frame(self._stage_size)
        elif self._end == len(self._stage):
            self._compact()
            if self._end == len(self._stage):  # a stage shrunk by release(): full size again
                stage = _alloc_frame(self._stage_size)
                stage[: self._end] = self._stage
                self._stage = stage
        return memoryview(self._stage)[self._end :]

    def release(self) -> None:
        """The socket ran dry: keep no staging buffer. An idle connection holds nothing; one in
        the middle of a frame holds that frame's own buffer (charged), or only the few bytes of
        an incomplete size prefix."""
        if self._frame is not None or self._blocked:
            return
        start, end = self._start, self._end
        if end - start >= 4:
            (size,) = _SIZE.unpack_from(self._stage, start)
            if not self._promote(size, start, end):
                return  # no memory for it yet: stay staged (waiting_for_memory)
            self._stage = bytearray()
        else:
            self._stage = bytearray(self._stage[start:end])
        self._start, self._end = 0, len(self._stage)

    @property
    def waiting_for_memory(self) -> bool:
        """A frame's buffer was refused by ``charge``: do not read until ``resume()``."""
        return self._blocked

    def resume(self) -> list[bytearray]:
        """Try again after memory was freed; returns the frames completed meanwhile."""
        self._blocked = False
        if self._frame is not None:
            return []
        return self._split()

    @property
    def charged(self) -> int:
        """Bytes charged for a frame allocated but not yet returned (0: none)."""
        return len(self._frame) if self._frame is not None else 0

    def _promote(self, size: int, start: int, end: int) -> bool:
        """Move the staged start of a ``size``-byte frame at ``start`` into its own buffer."""
        if self._charge is not None and not self._charge(size):
            self._blocked = True
            return False
        frame = _alloc_frame(size)
        have = end - start - 4
        frame[:have] = self._stage[start + 4 : end]
        self._frame, self._filled = frame, have
        return True

    def received(self, n: int) -> list[bytearray]:
        """Account for ``n`` bytes received into ``buffer()``; return the frames completed."""
        if self._frame is not None:
            self._filled += n
            if self._filled < len(self._frame):
                return []
            frame, self._frame = self._frame, None
            return [frame]
        self._end += n
        return self._split()

    @property
    def missing(self) -> int:
        """Bytes still to come of a large frame being received in place (0: none)."""
        if self._frame is not None:
            return len(self._frame) - self._filled
        return 0

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        if self._frame is not None:
            return self._filled
        return self._end - self._start

    def _compact(self) -> None:
        """Move the staged partial frame to the front of the staging buffer."""
        start, end = self._start, self._end
        self._stage[: end - start] = self._stage[start:end]
        self._start, self._end = 0, end - start

    def _split(self) -> list[bytearray]:
        frames: list[bytearray] = []
        stage = self._stage
        pos, end = self._start, self._end
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(stage, pos)
            _check_size(size, self._max_size)
            if end - pos - 4 >= size:
                if self._charge is not None and not self._charge(size):
                    self._blocked = True
                    break
                frames.append(stage[pos + 4 : pos + 4 + size])
                pos += 4 + size
                continue
            if size + 4 > len(stage) and self._promote(size, pos, end):
                # too large to stage: receive the rest of it straight into its own buffer
                pos = end
            break
        if pos == end:
            pos = end = 0
        self._start, self._end = pos, end
        return frames


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
                _check_size(size, self._max_size)
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
