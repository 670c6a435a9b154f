"""An embeddable Kafka broker for any Python program or test framework.

    with kafkapy.testing.broker() as b:                       # in-process, memory storage
        consume_and_check(b.bootstrap_servers)

    with kafkapy.testing.broker(mode="process", num_partitions=3,
                                **{"log.retention.ms": 60000}) as b:
        ...

    async with kafkapy.testing.async_broker() as b:          # asyncio or trio
        ...

Keyword arguments other than the ones below are ``server.properties`` overrides:
``num_partitions=3`` is ``num.partitions=3`` (underscores become dots; keys with dots are taken
as given).

* ``mode``: ``"thread"`` (default: the broker's trio loop in a thread of this process) or
  ``"process"`` (a ``kafkapy server`` subprocess); the same API either way.
* ``storage``: ``"memory"`` (default: log dirs on tmpfs, kafkapy/testing/storage.py) or ``"disk"``.
* ``data_dir``: where the broker keeps its files (default: a temp dir, removed on exit).
* ``port``: the listener port (default: a free one). ``timeout``: start-up limit in seconds.

``async_broker`` starts and stops the broker in a worker thread, so the caller's event loop keeps
running meanwhile; the broker has its own loop either way, so a test may also block on it (a
synchronous client inside an async test) without deadlocking.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from .handle import TestBroker, overrides_from_kwargs

MODES = ("thread", "process")


def make_broker(
    mode: str = "thread",
    *,
    storage: str = "memory",
    data_dir: str | Path | None = None,
    port: int | None = None,
    overrides: dict[str, Any] | None = None,
    kafkapy: list[str] | None = None,
) -> TestBroker:
    """An unstarted broker of the given mode (the factory behind every fixture)."""
    props = {k: str(v) for k, v in (overrides or {}).items()}
    path = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="kafkapy-"))
    if mode == "thread":
        if kafkapy is not None:
            raise ValueError("kafkapy= (another installation's command) needs mode='process'")
        from .inprocess import BrokerThread

        return BrokerThread(path, props, port=port, storage=storage)
    if mode == "process":
        from .process import BrokerProcess

        return BrokerProcess(path, props, port=port, storage=storage, kafkapy=kafkapy)
    raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")


class EmbeddedBroker:
    """What ``broker()`` returns: a context manager (sync and async) around a test broker that
    owns its temp data dir. Attributes of the broker (``bootstrap_servers``, ``kill()``, ...) are
    reachable on it directly too."""

    def __init__(self, handle: TestBroker, owns_data_dir: bool, timeout: float) -> None:
        self.handle = handle
        self.owns_data_dir = owns_data_dir
        self.timeout = timeout

    def start(self) -> TestBroker:
        try:
            return self.handle.start(self.timeout)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        try:
            self.handle.close()
        finally:
            if self.owns_data_dir:
                shutil.rmtree(self.handle.data_dir, ignore_errors=True)

    def __enter__(self) -> TestBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> TestBroker:
        return await _in_worker_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await _in_worker_thread(self.close)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)


def broker(
    *,
    mode: str = "thread",
    storage: str = "memory",
    data_dir: str | Path | None = None,
    port: int | None = None,
    timeout: float = 30.0,
    **overrides: Any,
) -> EmbeddedBroker:
    """A broker to use in ``with`` or ``async with`` (see the module docstring)."""
    handle = make_broker(
        mode,
        storage=storage,
        data_dir=data_dir,
        port=port,
        overrides=overrides_from_kwargs(overrides),
    )
    return EmbeddedBroker(handle, owns_data_dir=data_dir is None, timeout=timeout)


def async_broker(**kwargs: Any) -> EmbeddedBroker:
    """``broker()`` for ``async with`` under asyncio or trio (the same object: both work)."""
    return broker(**kwargs)


def start_broker(**kwargs: Any) -> EmbeddedBroker:
    """A started broker for code that manages its life itself: call ``close()`` when done."""
    started = broker(**kwargs)
    started.start()
    return started


async def _in_worker_thread(fn: Any) -> Any:
    import sniffio

    if sniffio.current_async_library() == "trio":
        import trio

        return await trio.to_thread.run_sync(fn)
    import asyncio

    return await asyncio.to_thread(fn)
