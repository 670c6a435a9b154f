"""`kafkapy server`: Kafka's server.properties keys, clear one-line errors, clean shutdown."""

from __future__ import annotations

import subprocess
import sys

from kafka import KafkaAdminClient

from kafkapy.testing import BrokerProcess, free_port


def run_server(*args, timeout=20):
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "server", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_bad_value_is_one_line_error(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(f"log.dirs={tmp_path}/d\nnum.partitions=lots\n")
    r = run_server(str(props))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "num.partitions" in lines[0] and "lots" in lines[0]
    assert "Traceback" not in r.stderr


def test_bad_listener_is_one_line_error(tmp_path):
    r = run_server("--override", "listeners=nonsense", "--override", f"log.dirs={tmp_path}")
    assert r.returncode == 2
    assert "listeners" in r.stderr and "Traceback" not in r.stderr


def test_port_in_use_is_one_line_error(broker, tmp_path):
    r = run_server("--override", f"listeners=PLAINTEXT://127.0.0.1:{broker.port}",
                   "--override", f"log.dirs={tmp_path}/other")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and "error" in r.stderr


def test_properties_file_and_unknown_key_warning(tmp_path):
    port = free_port()
    props = tmp_path / "server.properties"
    props.write_text(
        "# Kafka's own keys\n"
        "broker.id=7\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
        f"log.dirs={tmp_path}/logs\n"
        "num.partitions=3\n"
        "log.segment.bytes=1048576\n"
        "no.such.key=1\n"
    )
    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", "server", str(props)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    b = BrokerProcess(tmp_path, port=port)
    try:
        b.proc = proc
        import socket
        import time

        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        try:
            cluster = admin.describe_cluster()
            ids = [b.get("node_id", b.get("broker_id")) for b in cluster["brokers"]]
            assert ids == [7], cluster
            from kafka.admin import NewTopic

            admin.create_topics([NewTopic("three", num_partitions=-1, replication_factor=-1)])
            assert len(admin.describe_topics(["three"])[0]["partitions"]) == 3
        finally:
            admin.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "no.such.key" in out
    assert (tmp_path / "logs" / "meta.properties").exists()
    assert (tmp_path / "logs" / "three-2").is_dir()
