"""`kafkapy zookeeper-shell` (zookeeper-shell.sh): look at the znodes of a ZooKeeper, with kazoo.

`kafkapy zookeeper-shell HOST:PORT[/chroot] [command args...]` runs one command and exits;
without a command it reads commands from stdin (with a prompt on a terminal). Commands, printed
as ZooKeeper's own shell prints them: `ls [-s] PATH` (`[a, b]`), `get [-s] PATH` (the data, `null`
for none), `stat PATH` (cZxid = 0x.., ctime = .., ... numChildren = ..), `quit`.
"""

from __future__ import annotations

import shlex
import sys
import time

from kafkapy.cli.common import CliError

USAGE = "USAGE: zookeeper-shell.sh zookeeper_host:port[/path] [-zk-tls-config-file file] [args...]"


def java_date(ms: int) -> str:
    """java.util.Date.toString(): `Thu Jan 01 00:00:00 UTC 1970` in local time."""
    t = time.localtime(ms / 1000.0)
    return (
        time.strftime("%a %b %d %H:%M:%S ", t)
        + (time.strftime("%Z", t) or "UTC")
        + (time.strftime(" %Y", t))
    )


def stat_lines(st) -> list[str]:
    return [
        f"cZxid = {hex(st.czxid)}",
        f"ctime = {java_date(st.ctime)}",
        f"mZxid = {hex(st.mzxid)}",
        f"mtime = {java_date(st.mtime)}",
        f"pZxid = {hex(st.pzxid)}",
        f"cversion = {st.cversion}",
        f"dataVersion = {st.version}",
        f"aclVersion = {st.aversion}",
        f"ephemeralOwner = {hex(st.ephemeralOwner)}",
        f"dataLength = {st.dataLength}",
        f"numChildren = {st.numChildren}",
    ]


def run_command(zk, words: list[str], out=None) -> bool:
    """Run one shell command; False if it failed (the message is printed)."""
    from kazoo.exceptions import NoNodeError

    out = out or sys.stdout
    if not words:
        return True
    cmd, args = words[0], words[1:]
    with_stat = "-s" in args
    paths = [a for a in args if not a.startswith("-")]
    try:
        if cmd == "ls":
            path = paths[0] if paths else "/"
            children, st = zk.get_children(path, include_data=True)
            print("[" + ", ".join(sorted(children)) + "]", file=out)
            if with_stat:
                print("\n".join(stat_lines(st)), file=out)
        elif cmd == "get":
            if not paths:
                print("get [-s] [-w] path", file=out)
                return False
            data, st = zk.get(paths[0])
            print("null" if data is None else data.decode("utf-8", "replace"), file=out)
            if with_stat:
                print("\n".join(stat_lines(st)), file=out)
        elif cmd == "stat":
            if not paths:
                print("stat [-w] path", file=out)
                return False
            st = zk.exists(paths[0])
            if st is None:
                print(f"Node does not exist: {paths[0]}", file=out)
                return False
            print("\n".join(stat_lines(st)), file=out)
        elif cmd in ("quit", "exit"):
            raise SystemExit(0)
        else:
            print(
                "ZooKeeper -server host:port -client-configuration properties-file cmd args\n"
                "\tget [-s] [-w] path\n\tls [-s] [-w] [-R] path\n\tstat [-w] path\n\tquit",
                file=out,
            )
            return False
    except NoNodeError:
        print(f"Node does not exist: {paths[0] if paths else '/'}", file=out)
        return False
    except ValueError as e:
        print(f"Path must start with / character: {e}", file=out)
        return False
    return True


def main(argv: list[str]) -> int:
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        print(__doc__.split("\n\n", 1)[1] if argv else "", file=sys.stdout)
        return 1 if not argv else 0
    hosts, rest = argv[0], argv[1:]
    if rest[:1] == ["-zk-tls-config-file"]:
        raise CliError("TLS connections to ZooKeeper are not supported yet")
    print(f"Connecting to {hosts}")
    zk = KazooClient(hosts=hosts, timeout=10.0, logger=_quiet())
    try:
        zk.start(timeout=10)
    except KazooTimeoutError:
        zk.stop()
        raise CliError(f"Cannot connect to ZooKeeper at {hosts}") from None
    print("\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null")
    try:
        if rest:
            return 0 if run_command(zk, rest) else 1
        interactive = sys.stdin.isatty()
        n = 0
        while True:
            if interactive:
                sys.stdout.write(f"[zk: {hosts}(CONNECTED) {n}] ")
                sys.stdout.flush()
            line = sys.stdin.readline()
            if not line:
                return 0
            n += 1
            try:
                run_command(zk, shlex.split(line))
            except SystemExit:
                return 0
    finally:
        zk.stop()
        zk.close()


def _quiet():
    import logging

    logger = logging.getLogger("kafkapy.cli.kazoo")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger
