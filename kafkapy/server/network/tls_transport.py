"""TLS over a trio socket with the standard library's memory BIOs, for the broker's hot paths.

trio's SSLStream returns at most one TLS record (16 KiB) of plaintext per ``receive_some`` and
goes through its general-purpose locking on every call; a 1 MiB Produce request then costs some
sixty passes of the event loop. :class:`TlsTransport` drives an ``ssl.SSLObject`` directly:

* ciphertext is read from the socket in large reads and fed to the incoming BIO;
* :meth:`receive_into` decrypts record after record straight into the caller's buffer (the
  connection's frame buffer: decryption is the only copy) until it is full or no whole record is
  left, and waits for the socket only when nothing could be decrypted;
* :meth:`send_all` encrypts and writes in large pieces;
* whatever TLS itself needs to say while reading (TLS 1.3 key updates, session tickets) is
  flushed as it appears.

The handshake (:meth:`handshake`) runs the same loop around ``do_handshake``; on failure it
raises ``ssl.SSLError`` (certificate problems) or ConnectionError (the peer went away). After
the handshake, TLS errors (a corrupt record, a peer that closes mid-record) are ConnectionError,
as any broken connection.
Closing sends close_notify when the socket takes it at once, then closes the socket.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable

import trio

RECV_SIZE = 256 * 1024  # ciphertext read from the socket per call
SEND_SIZE = 256 * 1024  # plaintext encrypted per write


class TlsTransport:
    def __init__(
        self,
        sock: trio.socket.SocketType,
        context: ssl.SSLContext,
        *,
        server_side: bool,
        server_hostname: str | None = None,
    ) -> None:
        self.socket = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self.ssl = context.wrap_bio(
            self._incoming,
            self._outgoing,
            server_side=server_side,
            server_hostname=server_hostname,
        )

    @property
    def buffered(self) -> bool:
        """Whether received bytes wait in the TLS layer (decrypted, or ciphertext not yet)."""
        return bool(self.ssl.pending() or self._incoming.pending)

    def getpeercert(self) -> dict:
        return self.ssl.getpeercert() or {}

    async def handshake(self) -> None:
        while True:
            try:
                self.ssl.do_handshake()
                break
            except ssl.SSLWantReadError:
                await self._flush()
                if not await self._fill():
                    raise ConnectionError(
                        "peer closed the connection during the TLS handshake"
                    ) from None
            except ssl.SSLError:
                try:  # the alert that tells the peer why
                    await self._flush()
                except OSError:
                    pass
                raise
        await self._flush()

    async def _flush(self) -> None:
        """Send whatever TLS has written to the outgoing BIO."""
        while self._outgoing.pending:
            data = memoryview(self._outgoing.read())
            while data:
                sent = await self.socket.send(data)
                data = data[sent:]

    async def _fill(self) -> bool:
        """Read ciphertext into the incoming BIO; False at end of stream."""
        data = await self.socket.recv(RECV_SIZE)
        if not data:
            self._incoming.write_eof()
            return False
        self._incoming.write(data)
        return True

    async def receive_into(self, view: memoryview) -> int:
        """Decrypt into ``view``; the byte count, 0 at the end of the stream."""
        want = len(view)
        while True:
            got = 0
            closed = False
            try:
                while got < want:
                    n = self.ssl.read(want - got, view[got:])
                    if not n:
                        break
                    got += n
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLZeroReturnError:  # close_notify: the peer is done
                closed = True
            except ssl.SSLError as e:  # a corrupt or forged record: the connection is done
                raise ConnectionError(f"TLS error: {e}") from None
            if self._outgoing.pending:
                await self._flush()
            if got:
                return got
            if closed or self._incoming.eof:
                return 0
            if not await self._fill():
                try:  # whatever is left (a record cut short is an error: ssl raises)
                    return self.ssl.read(want, view)
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError, ssl.SSLWantReadError):
                    return 0
                except ssl.SSLError as e:
                    raise ConnectionError(f"TLS error: {e}") from None

    async def send_all(
        self, data: bytes | bytearray | memoryview, touch: Callable[[], None] | None = None
    ) -> None:
        """Encrypt and send ``data``; ``touch`` after every piece sent (idle expiry)."""
        view = memoryview(data)
        while view:
            try:
                n = self.ssl.write(view[:SEND_SIZE])
            except ssl.SSLError as e:
                raise ConnectionError(f"TLS error: {e}") from None
            view = view[n:]
            await self._flush()
            if touch is not None:
                touch()

    async def aclose(self) -> None:
        try:
            self.ssl.unwrap()
        except (ssl.SSLError, ValueError):
            pass
        try:  # close_notify, if the socket takes it without waiting
            if self._outgoing.pending:
                os.write(self.socket.fileno(), self._outgoing.read())
        except OSError:
            pass
        self.socket.close()
        await trio.lowlevel.checkpoint()
