"""kcat (librdkafka's command-line client) against a real kafkapy broker."""

from __future__ import annotations

import subprocess


def kcat(*args, input_=None):
    return subprocess.run(
        ["kcat", *args], input=input_, capture_output=True, timeout=60, check=True
    )


def test_produce_consume_with_keys_and_headers(broker):
    lines = b"".join(f"k{i}:value {i}\n".encode() for i in range(100))
    kcat(
        "-b", broker.bootstrap, "-P", "-t", "kc", "-K:", "-H", "src=kcat", "-z", "lz4", input_=lines
    )
    out = (
        kcat(
            "-b", broker.bootstrap, "-C", "-t", "kc", "-o", "beginning", "-e", "-f", "%o %k=%s %h\n"
        )
        .stdout.decode()
        .splitlines()
    )
    assert out == [f"{i} k{i}=value {i} src=kcat" for i in range(100)]


def test_metadata_listing(broker):
    kcat("-b", broker.bootstrap, "-P", "-t", "listed", input_=b"x\n")
    out = kcat("-b", broker.bootstrap, "-L", "-t", "listed").stdout.decode()
    assert 'topic "listed" with 1 partitions' in out
    assert "partition 0, leader 0" in out


def test_consume_from_offset_and_tail(broker):
    kcat(
        "-b",
        broker.bootstrap,
        "-P",
        "-t",
        "tail",
        input_=b"".join(f"{i}\n".encode() for i in range(20)),
    )
    out = kcat("-b", broker.bootstrap, "-C", "-t", "tail", "-o", "15", "-e").stdout
    assert out.decode().split() == [str(i) for i in range(15, 20)]
    out = kcat("-b", broker.bootstrap, "-C", "-t", "tail", "-o", "-3", "-e").stdout
    assert out.decode().split() == ["17", "18", "19"]
