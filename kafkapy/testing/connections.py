"""Drop every client connection of a running broker, from outside the broker (Linux).

The broker's accepted sockets are found in ``/proc/<pid>/fd`` (for an in-process broker, this
process), duplicated into this process (``pidfd_getfd(2)`` for another process: Linux 5.6+, the
broker being our child), and shut down in both directions. ``shutdown`` acts on the socket, not on
the descriptor, so the broker reads end-of-stream and closes its side, and the client sees its
connection closed by the broker, as after a network failure or a broker-side disconnect; both
reconnect as they would in production. Only connections whose local port is the broker's listener
port are touched: its listener, its connections to ZooKeeper and to other brokers, and clients in
the same process (whose local port is their own) are left alone.
"""

from __future__ import annotations

import ctypes
import os
import socket

_SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


class DropUnsupported(RuntimeError):
    """This platform or kernel cannot reach another process's sockets."""


def drop_accepted(pid: int, port: int) -> int:
    """Shut down the connections process ``pid`` accepted on ``port``; how many there were."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        entries = os.listdir(fd_dir)
    except OSError as e:
        raise DropUnsupported(f"cannot list the sockets of process {pid}: {e}") from None
    own = pid == os.getpid()
    pidfd = None if own else _pidfd_open(pid)
    dropped = 0
    try:
        for name in entries:
            try:
                if not os.readlink(f"{fd_dir}/{name}").startswith("socket:"):
                    continue
                fd = os.dup(int(name)) if own else _pidfd_getfd(pidfd, int(name))
            except OSError:
                continue  # closed meanwhile
            with socket.socket(fileno=fd) as sock:
                if _accepted_on(sock, port):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                        dropped += 1
                    except OSError:
                        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)
    return dropped


def _accepted_on(sock: socket.socket, port: int) -> bool:
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return False
    try:
        local = sock.getsockname()
        sock.getpeername()  # the listener has no peer
    except OSError:
        return False
    return local[1] == port


def _pidfd_open(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError) as e:
        raise DropUnsupported(f"pidfd_open({pid}) failed: {e}") from None


def _pidfd_getfd(pidfd: int | None, fd: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    got = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
    if got < 0:
        err = ctypes.get_errno()
        if err in (1, 38):  # EPERM (ptrace policy), ENOSYS (kernel before 5.6)
            raise DropUnsupported(
                f"pidfd_getfd refused ({os.strerror(err)}): dropping a subprocess broker's "
                "connections needs Linux 5.6+ and ptrace access to the broker"
            )
        raise OSError(err, os.strerror(err))
    return int(got)
