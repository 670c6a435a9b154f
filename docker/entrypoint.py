#!/usr/bin/env python3
"""Container entrypoint: ``kafkapy server /etc/kafkapy/server.properties`` with overrides.

Overrides come from two places, applied in this order (later wins):

* environment variables ``KAFKA_<NAME>``, Confluent-image style: drop the prefix, lower-case,
  ``___`` -> ``-``, ``__`` -> ``_``, ``_`` -> ``.`` (``KAFKA_BROKER_ID=1`` -> ``broker.id=1``,
  ``KAFKA_ZOOKEEPER_CONNECT`` -> ``zookeeper.connect``); the JVM-only variables ``KAFKA_OPTS``,
  ``KAFKA_HEAP_OPTS``, ``KAFKA_JVM_PERFORMANCE_OPTS``, ``KAFKA_LOG4J_OPTS`` and ``KAFKA_JMX_OPTS``
  are ignored;
* arguments: ``--override key=value`` (as ``kafkapy server`` takes them) or bare ``key=value``.

``KAFKAPY_CONFIG`` names another properties file; ``KAFKAPY_LOG_LEVEL`` sets ``--log-level``.
If the first argument is not an option or ``key=value`` (``kafkapy topics ...``, ``bash``), it is
run as given instead of the broker. ``--dry-run`` prints the command instead of running it.
"""

from __future__ import annotations

import os
import sys

CONFIG = "/etc/kafkapy/server.properties"
PREFIX = "KAFKA_"
IGNORED = {"OPTS", "HEAP_OPTS", "JVM_PERFORMANCE_OPTS", "LOG4J_OPTS", "JMX_OPTS", "DEBUG"}


def env_key(name: str) -> str:
    return name.lower().replace("___", "-").replace("__", "\0").replace("_", ".").replace("\0", "_")


def build(argv: list[str], environ: dict[str, str]) -> list[str]:
    if argv and not argv[0].startswith("-") and "=" not in argv[0]:
        return argv  # another command: kafkapy topics ..., bash, ...
    overrides: list[str] = []
    for name in sorted(environ):
        if name.startswith(PREFIX) and name[len(PREFIX) :] not in IGNORED:
            overrides.append(f"{env_key(name[len(PREFIX) :])}={environ[name]}")
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--override":
            overrides.append(next(it, ""))
        elif arg.startswith("--override="):
            overrides.append(arg.split("=", 1)[1])
        elif not arg.startswith("-") and "=" in arg:
            overrides.append(arg)
        else:
            rest.append(arg)
    cmd = ["kafkapy"]
    if environ.get("KAFKAPY_LOG_LEVEL"):
        cmd += ["--log-level", environ["KAFKAPY_LOG_LEVEL"]]
    cmd += ["server", environ.get("KAFKAPY_CONFIG", CONFIG), *rest]
    for item in overrides:
        cmd += ["--override", item]
    return cmd


def main() -> None:
    argv = sys.argv[1:]
    dry = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    cmd = build(argv, dict(os.environ))
    if dry:
        print(" ".join(cmd))
        return
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
