"""Kafka for Python test suites: real kafkapy brokers on free loopback ports, started and stopped
by a test, in this process or as subprocesses.

    with kafkapy.testing.broker() as b:              # in-process: a trio loop in a thread
        Producer({"bootstrap.servers": b.bootstrap_servers})
    with kafkapy.testing.broker(mode="process", storage="memory", **{"num.partitions": "3"}):
        ...
    async with kafkapy.testing.async_broker() as b:  # from asyncio or trio, without blocking it
        ...

The pytest plugin (kafkapy/testing/pytest_plugin.py, registered as a ``pytest11`` entry point)
offers the same brokers as fixtures: ``kafka_broker``, ``kafka_broker_factory``, ``kafka_topic``,
``kafka_cluster``. Every name here is imported on first use, so importing this package (as pytest
does for the plugin in every environment where kafkapy is installed) costs next to nothing.

Modules: ``handle`` (what both kinds of broker share: config, readiness, fault injection),
``process`` (``BrokerProcess``, a ``kafkapy server`` subprocess), ``zygote`` (the fork server
that starts those in milliseconds), ``inprocess`` (``BrokerThread``), ``embedded``
(``broker``/``async_broker``), ``storage`` (``storage="memory"`` log dirs on tmpfs),
``connections`` (dropping a broker's client connections), ``topics`` (create/delete topics for
fixtures), ``usage`` (a process's CPU time and peak RSS), ``profiling`` (py-spy), ``ports``,
``probe``, ``pytest_plugin``. N brokers on a real ZooKeeper, with faults:
kafkapy/testing/cluster.py (and kafkapy/testing/zookeeper.py for ZooKeeper itself).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "free_port": "kafkapy.testing.ports",
    "api_versions_answered": "kafkapy.testing.probe",
    "BrokerProcess": "kafkapy.testing.process",
    "BrokerThread": "kafkapy.testing.inprocess",
    "TestBroker": "kafkapy.testing.handle",
    "broker": "kafkapy.testing.embedded",
    "async_broker": "kafkapy.testing.embedded",
    "start_broker": "kafkapy.testing.embedded",
    "Topics": "kafkapy.testing.topics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafkapy.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
