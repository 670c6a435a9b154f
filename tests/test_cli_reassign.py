"""kafkapy reassign-partitions without a cluster: its JSON files, Kafka's checks and messages,
and --generate against a stand-in for the cluster."""

from __future__ import annotations

import json

import pytest

from kafkapy.cli import reassign_partitions as rp
from kafkapy.cli.common import CliError


def test_parse_and_format_reassignment_json():
    text = json.dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": "b", "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "any"]},
                {"topic": "a", "partition": 0, "replicas": [1]},
            ],
        }
    )
    entries = rp.parse_reassignment_json(text)
    assert entries == [(("b", 1), [2, 3]), (("a", 0), [1])]
    out = rp.format_json(dict(entries))
    assert out == (
        '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]},'
        '{"topic":"b","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}'
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("nope", "not a valid JSON"),
        ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
        ('{"partitions": [{"topic": "t", "partition": 0}]}', "Invalid partition entry"),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": []}]}',
            "Size of replicas list [1] is different",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]}',
            "log directories is not supported",
        ),
    ],
)
def test_parse_errors(doc, message):
    with pytest.raises(CliError) as e:
        rp.parse_reassignment_json(doc)
    assert message in str(e.value)


def test_execute_checks_as_kafka():
    with pytest.raises(CliError, match="list cannot be empty"):
        rp.check_execute([])
    with pytest.raises(CliError, match="replica list cannot be empty"):
        rp.check_execute([(("t", 0), [])])
    with pytest.raises(CliError, match="duplicate topic partitions: t-0"):
        rp.check_execute([(("t", 0), [1]), (("t", 0), [2])])
    with pytest.raises(CliError, match="t-1 contains multiple entries for 2"):
        rp.check_execute([(("t", 1), [2, 1, 2])])
    assert rp.check_execute([(("t", 0), [1, 2])]) == {("t", 0): [1, 2]}


class FakeCluster:
    def __init__(self) -> None:
        self.brokers = {0: ("h", 1, None), 1: ("h", 2, None), 2: ("h", 3, None)}

    def metadata(self, topics):
        known = {"t": {0: [0, 1], 1: [1, 0]}}
        return {t: known.get(t) for t in topics}


def test_generate_proposes_over_the_listed_brokers(capsys):
    topics = json.dumps({"version": 1, "topics": [{"topic": "t"}]})
    assert rp.generate(FakeCluster(), topics, "1,2", rack_aware=True) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Current partition replica assignment"
    current = json.loads(out[1])
    assert [p["replicas"] for p in current["partitions"]] == [[0, 1], [1, 0]]
    assert out[3] == "Proposed partition reassignment configuration"
    proposed = json.loads(out[4])
    for p in proposed["partitions"]:
        assert sorted(p["replicas"]) == [1, 2]
    with pytest.raises(CliError, match="duplicate entries"):
        rp.generate(FakeCluster(), topics, "1,1", rack_aware=True)
    with pytest.raises(CliError, match="Topic u not found"):
        rp.generate(FakeCluster(), json.dumps({"topics": [{"topic": "u"}]}), "1,2", True)
