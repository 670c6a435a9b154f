"""The docs' "A secure broker, end to end" walkthrough, run as written: its code blocks are
read from docs/security.md and executed in order in a fresh directory laid out like a user's
checkout (a copy of ``scripts/``, the sources and the runtime install ``.venv-runtime`` linked
from this one, no ``.venv``), with only the listener ports changed to free ones. Certificates by its
openssl commands, the broker by ``scripts/run-broker.sh secure.properties``, the SCRAM user,
topic and ACLs by the Kafka-named scripts, then kcat, confluent-kafka, kafka-python, Apache
Apache Kafka 4.4's Java tools (``$KAFKA_HOME/bin``: the Kafka directory laid over the Maven
Central jars by compat_tests/suites/artifacts.py) and kafkapy's tools with the client properties
it gives.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A secure broker, end to end"
BLOCK = re.compile(r"^```(sh|properties|python)\n(.*?)^```", re.S | re.M)
START_LINE = "scripts/run-broker.sh secure.properties &"

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("kcat")),
                       reason="openssl and kcat are needed (scripts/bootstrap.sh --tests)"),
]


def walkthrough_blocks(ports: dict[str, int]) -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "security.md").read_text()
    start = text.index(SECTION)
    section = text[start:text.index("\n## ", start + len(SECTION))]
    blocks = []
    for kind, body in BLOCK.findall(section):
        for old, new in ports.items():
            body = body.replace(old, str(new))
        blocks.append((kind, body))
    return blocks


def bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 240) -> str:
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{script}\nexited {proc.returncode}:\n{proc.stdout[-3000:]}" \
                                 f"\n{proc.stderr[-3000:]}"
    return proc.stdout


def wait_for_port(port: int, broker: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert broker.poll() is None, "the broker exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port}")


def test_secure_walkthrough_as_written(tmp_path: Path) -> None:
    subprocess.run([str(ROOT / "scripts" / "bootstrap.sh")], check=True, timeout=600)
    work = tmp_path / "checkout"  # a user's checkout: no .venv, the runtime install built
    shutil.copytree(ROOT / "scripts", work / "scripts")
    for name in ("kafkapy", "protocol_specs", "pyproject.toml", "setup.py", ".venv-runtime"):
        (work / name).symlink_to(ROOT / name)
    sasl_ssl, ssl_port = free_port(), free_port()
    blocks = walkthrough_blocks({"9093": sasl_ssl, "9094": ssl_port})
    kinds = [k for k, _ in blocks]
    assert kinds[:7] == ["sh", "properties", "sh", "sh", "python", "python", "sh"], kinds
    certificates, properties, admin, kcat, confluent, kafka_python, tools = blocks[:7]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "KAFKA_HOME": str(jvm.kafka_home())}  # Apache Kafka 4.4 from Maven Central

    bash(certificates[1], work, env)
    (work / "secure.properties").write_text(properties[1])
    assert START_LINE in admin[1]
    log = (tmp_path / "broker.log").open("wb")
    broker = subprocess.Popen(["scripts/run-broker.sh", "secure.properties"], cwd=work, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_port(sasl_ssl, broker)
        wait_for_port(ssl_port, broker)
        out = bash(admin[1].replace(START_LINE, ""), work, env)
        assert "SCRAM credential configs for user-principal 'alice' are " \
               "SCRAM-SHA-512=iterations=8192" in out
        assert "Created topic orders." in out
        assert bash(kcat[1], work, env) == "hello\n"
        bash(f"{sys.executable} - <<'PYEOF'\n{confluent[1]}PYEOF\n", work, env)
        assert bash(f"{sys.executable} - <<'PYEOF'\n{kafka_python[1]}PYEOF\n", work, env) == (
            "[b'hello', b'from confluent-kafka']\n")
        out = bash(tools[1], work, env)
        assert "1000 records sent" in out
        assert len(out.splitlines()) == 1 + 1000 + 1  # perf test, Java consumer, ours
        assert out.splitlines()[-1] == "from kafkapy's tool"
    finally:
        os.killpg(broker.pid, signal.SIGTERM)
        try:
            code = broker.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(broker.pid, signal.SIGKILL)
            code = broker.wait(10)
        log.close()
    assert code == 0, (tmp_path / "broker.log").read_text()[-3000:]
