"""A new user's first Kafka test: `pip install kafkapy`, `pip install pytest`, plain `pytest`.

The install is the runtime-only one of compat_tests/test_runtime_install.py (scripts/
runtime_venv.py: `pip install <checkout>` into a fresh venv, no extras, cached); pytest is added
beside it with `pip install --target` (cached too), so the cached runtime venv keeps only the
runtime dependencies. confluent-kafka is one of them. The user's test file is the five-line
example of docs/testing.md plus a ``kafka_cluster`` test, run with the install's `pytest` from a
directory outside the checkout and with no java on PATH: the fixtures come from the installed
plugin (the ``pytest11`` entry point), the broker from the installed package, and the ZooKeeper
fixture skips naming the Debian packages to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from compat_tests.test_runtime_install import runtime_install  # noqa: F401  (the fixture)

USER_TEST = '''\
from confluent_kafka import Consumer, Producer


def test_roundtrip(kafka_broker, kafka_topic):
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    producer.produce(kafka_topic, b"hello")
    producer.flush()
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers,
                         "group.id": "g", "auto.offset.reset": "earliest"})
    consumer.subscribe([kafka_topic])
    msg = None
    while msg is None:
        msg = consumer.poll(1)
    assert msg.value() == b"hello"
    consumer.close()


def test_the_installed_package_serves(kafka_broker):
    import sys

    import kafkapy

    assert kafkapy.__file__.startswith(sys.prefix), kafkapy.__file__


def test_cluster(kafka_cluster):
    pass
'''


@pytest.fixture(scope="module")
def user_pytest(runtime_install: Path) -> Path:  # noqa: F811
    """pytest installed the way a user adds it, kept apart from the cached runtime venv."""
    python = runtime_install / "bin" / "python"
    version = subprocess.run(
        [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    target = runtime_install.parent / f"user-pytest-{version}"
    if not (target / "pytest").is_dir():
        building = target.with_name(f"{target.name}.{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "--target", str(building), "pytest"],
            capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        try:
            building.rename(target)
        except OSError:  # another run got there first
            shutil.rmtree(building, ignore_errors=True)
    return target


@pytest.mark.timeout(900)  # a cold pip cache downloads the runtime dependencies and pytest
def test_pip_install_kafkapy_then_plain_pytest(runtime_install, user_pytest, tmp_path):  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_orders.py").write_text(USER_TEST)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KAFKAPY", "PYTEST"))
    }
    env.update(PYTHONPATH=str(user_pytest), PATH=str(user_pytest / "bin"), HOME=str(tmp_path))
    # `pytest`, as its console script runs it (the script's #! names the interpreter of the
    # install it was made with, which a later state of the sources replaces)
    done = subprocess.run(
        [str(runtime_install / "bin" / "python"), "-m", "pytest", "-rs", "-p", "no:cacheprovider"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "2 passed, 1 skipped" in out, out[-4000:]
    assert "kafka_cluster needs Java and ZooKeeper" in out and "default-jre-headless" in out, out
    assert "kafkapy: 1 broker(s) (thread, memory) started in" in out, out
