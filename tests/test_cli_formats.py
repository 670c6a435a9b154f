"""Argument parsing and output formatting of the Kafka-named tools (no broker needed)."""

from __future__ import annotations

import argparse

import pytest

from kafkapy.cli import (
    broker_api_versions,
    common,
    configs,
    console_consumer,
    console_producer,
    consumer_groups,
    consumer_groups_input,
    consumer_groups_output,
    consumer_perf,
    delete_records,
    get_offsets,
    producer_perf,
    tools,
    topics,
    topics_output,
    zookeeper_shell,
)
from kafkapy.cli.common import CliError

# -- common ---------------------------------------------------------------------------------------


def test_properties_file_syntax():
    text = (
        "# comment\n! other\na=1\nb : two  \nc three\nd=x\\\n  y\nsep=\\t\n\nempty=\n"
        "uni=\\u00e9\n"
    )
    assert common.parse_properties_text(text) == {
        "a": "1",
        "b": "two",
        "c": "three",
        "d": "xy",
        "sep": "\t",
        "empty": "",
        "uni": "\u00e9",
    }
    with pytest.raises(CliError, match="uxxxx"):
        common.parse_properties_text("a=\\u12")


def test_java_client_properties_are_translated():
    out = common.java_to_librdkafka(
        {
            "key.serializer": "x",
            "buffer.memory": "33554432",
            "acks": "all",
            "send.buffer.bytes": "9",
        }
    )
    assert out == {
        "queue.buffering.max.kbytes": "32768",
        "acks": "all",
        "socket.send.buffer.bytes": "9",
    }


def test_include_list_is_a_whole_name_regex_with_commas_as_or():
    allowed = common.include_list("t1, my.*")
    assert allowed("t1") and allowed("my_topic")
    assert not allowed("t10") and not allowed("xmy")
    with pytest.raises(CliError):
        common.include_list("(")


class _Uuid:
    def get_most_significant_bits(self):
        return -0x1111111111111112

    def get_least_significant_bits(self):
        return 0x0123456789ABCDEF


def test_topic_id_is_url_safe_base64_without_padding():
    text = common.topic_id_string(_Uuid())
    assert len(text) == 22 and "=" not in text and "+" not in text and "/" not in text
    assert common.topic_id_string("ab+c/d==") == "ab-c_d"


def test_usage_errors_are_one_line_with_exit_1(capsys):
    with pytest.raises(SystemExit) as e:
        topics.build_parser().parse_args(["--partitions", "x"])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid int value" in err


def test_find_tool_skips_log_level():
    assert tools.find_tool(["topics", "--list"]) == ("topics", ["--list"])
    assert tools.find_tool(["--log-level", "DEBUG", "configs", "-h"]) == ("configs", ["-h"])
    assert tools.find_tool(["server"]) is None


@pytest.mark.parametrize("tool", sorted(tools.TOOLS))
def test_every_tool_has_help(tool, capsys):
    code = tools.dispatch(tool, ["--help"])
    out = capsys.readouterr().out
    assert code == 0 and ("usage" in out.lower() or "USAGE" in out)


# -- topics ---------------------------------------------------------------------------------------


def _opts(**kw):
    base = dict(
        under_replicated_partitions=False,
        unavailable_partitions=False,
        under_min_isr_partitions=False,
        at_min_isr_partitions=False,
        topics_with_overrides=False,
    )
    base.update(kw)
    return argparse.Namespace(**base)


def _topic():
    parts = [
        topics_output.PartitionInfo(1, 2, [2, 0], [2]),
        topics_output.PartitionInfo(0, 0, [0, 1], [0, 1]),
        topics_output.PartitionInfo(2, None, [1, 2], []),
    ]
    cfg = [("retention.ms", "1000", False), ("min.insync.replicas", "1", True)]
    return topics_output.TopicInfo("orders", "zphAStCuRbulSHA1vqVSZw", parts, cfg)


def test_describe_lines_match_kafka():
    lines = topics_output.describe_lines([_topic()], _opts(), {0, 1, 2})
    assert lines == [
        "Topic: orders\tTopicId: zphAStCuRbulSHA1vqVSZw\tPartitionCount: 3\t"
        "ReplicationFactor: 2\tConfigs: retention.ms=1000",
        "\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1\tElr: N/A\t"
        "LastKnownElr: N/A",
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,0\tIsr: 2\tElr: N/A\t"
        "LastKnownElr: N/A",
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 1,2\tIsr: \tElr: N/A\t"
        "LastKnownElr: N/A",
    ]


def test_describe_report_filters():
    t = _topic()
    under = topics_output.describe_lines([t], _opts(under_replicated_partitions=True), {0, 1, 2})
    assert [line.split("\t")[2] for line in under] == ["Partition: 1", "Partition: 2"]
    unavailable = topics_output.describe_lines([t], _opts(unavailable_partitions=True), {0, 1})
    assert [line.split("\t")[2] for line in unavailable] == ["Partition: 1", "Partition: 2"]
    overrides = topics_output.describe_lines([t], _opts(topics_with_overrides=True), set())
    assert len(overrides) == 1 and overrides[0].startswith("Topic: orders\t")
    t.configs = [("min.insync.replicas", "1", True)]
    assert topics_output.describe_lines([t], _opts(topics_with_overrides=True), set()) == []


def test_topic_line_without_topic_id():
    t = _topic()
    t.topic_id = "AAAAAAAAAAAAAAAAAAAAAA"
    assert topics_output.topic_line(t).startswith("Topic: orders\tPartitionCount: 3")


def test_replica_assignment_and_configs():
    assert topics.parse_replica_assignment("0:1, 1:2,2:0") == [[0, 1], [1, 2], [2, 0]]
    with pytest.raises(CliError, match="duplicate"):
        topics.parse_replica_assignment("0:0")
    with pytest.raises(CliError, match="different replication factor"):
        topics.parse_replica_assignment("0:1,2")
    assert topics.parse_configs(["a = 1", "b=2"]) == {"a": "1", "b": "2"}
    with pytest.raises(CliError, match="key=val"):
        topics.parse_configs(["a"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--list", "--describe"], "exactly one action"),
        (["--create", "--bootstrap-server", "b"], "topic"),
        (["--alter", "--topic", "t", "--bootstrap-server", "b"], "partitions"),
        (["--list"], "--bootstrap-server must be specified"),
        (["--list", "--bootstrap-server", "b", "--config", "a=1"], "config"),
    ],
)
def test_topics_argument_checks(argv, message):
    with pytest.raises(CliError, match=message):
        topics.check_args(topics.build_parser().parse_args(argv))


# -- console producer / consumer -----------------------------------------------------------------


def test_line_reader_keys_and_headers():
    r = console_producer.LineReader.from_props({"parse.key": "true", "parse.headers": "true"})
    assert r.parse("h1:v1,h2:v2\tk\tthe\tvalue") == (
        b"k",
        b"the\tvalue",
        [("h1", b"v1"), ("h2", b"v2")],
    )
    plain = console_producer.LineReader()
    assert plain.parse("just a value") == (None, b"just a value", [])


def test_line_reader_null_marker_and_errors():
    r = console_producer.LineReader.from_props(
        {"parse.key": "true", "key.separator": ":", "null.marker": "<null>"}
    )
    assert r.parse("<null>:<null>") == (None, None, [])
    with pytest.raises(console_producer.ParseError, match="No key separator found on line"):
        r.parse("novalue")
    lenient = console_producer.LineReader.from_props({"parse.key": "true", "ignore.error": "true"})
    assert lenient.parse("novalue") == (None, b"novalue", [])
    with pytest.raises(CliError, match="may not be equal"):
        console_producer.LineReader.from_props({"headers.separator": ":"})


def test_read_lines_strips_terminators():
    assert list(console_producer.read_lines([b"a\r\n", b"b\n", b"c"])) == ["a", "b", "c"]


def test_message_formatter_matches_default_message_formatter():
    f = console_consumer.Formatter.from_props(
        {
            "print.timestamp": "true",
            "print.partition": "true",
            "print.offset": "true",
            "print.headers": "true",
            "print.key": "true",
            "key.separator": " | ",
        }
    )
    out = f.format(
        partition=3,
        offset=42,
        timestamp=(1, 1700000000000),
        key=None,
        value=b"v",
        headers=[("h", b"x"), ("n", None)],
    )
    assert out == b"CreateTime:1700000000000 | Partition:3 | Offset:42 | h:x,n:null | null | v\n"
    plain = console_consumer.Formatter()
    assert (
        plain.format(partition=0, offset=0, timestamp=(0, -1), key=b"k", value=None, headers=None)
        == b"null\n"
    )
    only_key = console_consumer.Formatter.from_props({"print.key": "true", "print.value": "false"})
    assert (
        only_key.format(partition=0, offset=0, timestamp=(2, 5), key=b"k", value=b"v", headers=[])
        == b"k\n"
    )
    ts = console_consumer.Formatter.from_props({"print.timestamp": "true", "print.value": "false"})
    assert (
        ts.format(partition=0, offset=0, timestamp=(2, 5), key=None, value=None, headers=None)
        == b"LogAppendTime:5\n"
    )


def test_console_consumer_argument_checks():
    p = console_consumer.build_parser()

    def check(*argv, props=None):
        return console_consumer.check_args(p.parse_args(list(argv)), props or {})

    assert check("--bootstrap-server", "b", "--topic", "t", "--group", "g") == "g"
    with pytest.raises(CliError, match="partition is required"):
        check("--bootstrap-server", "b", "--topic", "t", "--offset", "5")
    with pytest.raises(CliError, match="group and partition"):
        check("--bootstrap-server", "b", "--topic", "t", "--partition", "0", "--group", "g")
    with pytest.raises(CliError, match="do not match"):
        check("--bootstrap-server", "b", "--topic", "t", "--group", "g", props={"group.id": "h"})
    with pytest.raises(CliError, match="from-beginning"):
        check(
            "--bootstrap-server",
            "b",
            "--topic",
            "t",
            "--from-beginning",
            props={"auto.offset.reset": "latest"},
        )
    assert console_consumer.parse_offset("earliest") == console_consumer.EARLIEST
    assert console_consumer.parse_offset("17") == 17
    with pytest.raises(CliError, match="non-negative"):
        console_consumer.parse_offset("-3")


# -- consumer groups ------------------------------------------------------------------------------


def test_describe_offsets_table():
    rows = [
        consumer_groups_output.Row(
            "g", "orders", 0, 5, 8, "consumer-1-abc", "/127.0.0.1", "consumer-1"
        ),
        consumer_groups_output.Row("g", "orders", 1, None, 3, "-", "-", "-"),
    ]
    text = consumer_groups_output.offsets_table(rows)
    lines = text.split("\n")
    assert lines[0] == ""
    assert lines[1] == (
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"
        "             CONSUMER-ID     HOST            CLIENT-ID"
    )
    assert lines[2] == (
        "g               orders          0          5               8               3"
        "               consumer-1-abc  /127.0.0.1      consumer-1"
    )
    assert lines[3].split() == ["g", "orders", "1", "-", "3", "-", "-", "-", "-"]
    assert text.endswith("\n") and lines[-1] == ""


def test_members_state_list_and_reset_tables():
    m = consumer_groups_output.Member("g", "c-1", "", "/10.0.0.1", "client", [("t", 1), ("t", 0)])
    text = consumer_groups_output.members_table([m], verbose=True)
    head, row = text.split("\n")[1:3]
    assert head.split() == [
        "GROUP",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT",
    ]
    assert row.split() == ["g", "c-1", "/10.0.0.1", "client", "2", "-", "t:0,1", "-", "-"]
    state = consumer_groups_output.state_table("g", "127.0.0.1:9092  (0)", "range", "Stable", 2)
    assert state.split("\n")[2].split() == ["g", "127.0.0.1:9092", "(0)", "range", "Stable", "2"]
    listing = consumer_groups_output.list_table([("my-group", "Empty")])
    assert listing == f"{'GROUP':<25} {'STATE':<20}\n{'my-group':<25} {'Empty':<20}\n"
    plan = {"g": {("t", 1): 7, ("t", 0): 3}}
    assert consumer_groups_output.reset_table(plan) == (
        "\nGROUP           TOPIC           PARTITION  NEW-OFFSET"
        "\ng               t               0          3"
        "\ng               t               1          7\n"
    )
    assert consumer_groups_output.export_csv(plan, True) == "t,0,3\nt,1,7\n"
    assert consumer_groups_input.parse_reset_csv("t,0,3\nt,1,7\n", ["g"]) == plan
    assert consumer_groups_input.parse_reset_csv("g,t,0,3\n", ["g", "h"]) == {"g": {("t", 0): 3}}


def test_reset_time_parsing():
    assert consumer_groups_input.parse_duration_ms("PT1H30M") == 5400000
    assert consumer_groups_input.parse_duration_ms("P1DT0.5S") == 86400500
    with pytest.raises(CliError):
        consumer_groups_input.parse_duration_ms("1 hour")
    assert consumer_groups_input.parse_datetime_ms("1970-01-01T00:00:01.000Z") == 1000
    assert consumer_groups_input.parse_datetime_ms("1970-01-01T01:00:00.000+01:00") == 0
    assert consumer_groups_input.parse_datetime_ms("1970-01-01T01:00:00.000+0100") == 0
    assert consumer_groups_input.parse_topic_partitions("t:0,2") == [("t", 0), ("t", 2)]
    assert consumer_groups_input.split_topic_args(["t:0,2", "u", "v:1"]) == (
        [("t", 0), ("t", 2), ("v", 1)],
        ["u"],
    )
    with pytest.raises(CliError, match="Invalid partition"):
        consumer_groups_input.parse_topic_partitions("t:x")
    assert consumer_groups.parse_states("stable,EMPTY") == {"Stable", "Empty"}
    with pytest.raises(CliError, match="Invalid state list"):
        consumer_groups.parse_states("sleepy")


def test_consumer_groups_argument_checks():
    p = consumer_groups.build_parser()

    def check(*argv):
        return consumer_groups.check_args(p.parse_args(["--bootstrap-server", "b", *argv]))

    assert check("--list", "--state") == "list"
    assert check("--reset-offsets", "--group", "g", "--all-topics", "--to-earliest") == (
        "reset_offsets"
    )
    with pytest.raises(CliError, match="exactly one action"):
        check("--list", "--describe")
    with pytest.raises(CliError, match="group"):
        check("--describe")
    with pytest.raises(CliError, match="only one reset scenario"):
        check("--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest")
    with pytest.raises(CliError, match="execute"):
        check("--describe", "--group", "g", "--execute")


# -- configs, offsets, records, api versions, perf, zookeeper --------------------------------------


def test_configs_add_config_syntax():
    assert configs.parse_add_config("a=1, b = [x,y],c=") == {"a": "1", "b": "x,y", "c": ""}
    with pytest.raises(CliError, match="key=val"):
        configs.parse_add_config("novalue")
    assert configs.parse_delete_config(["a,b", "c"]) == ["a", "b", "c"]


def test_configs_entity_and_entry_line():
    p = configs.build_parser()
    assert configs.entity(p.parse_args(["--describe", "--topic", "t"])) == ("topics", "t")
    assert configs.entity(p.parse_args(["--describe", "--entity-type", "brokers"])) == (
        "brokers",
        None,
    )
    assert configs.entity(
        p.parse_args(["--describe", "--entity-type", "brokers", "--entity-default"])
    ) == ("brokers", "")
    with pytest.raises(CliError, match="valid integer broker id"):
        configs.entity(p.parse_args(["--describe", "--broker", "x"]))
    e = configs.Entry(
        "retention.ms",
        "1000",
        False,
        "DYNAMIC_TOPIC_CONFIG",
        [
            ("DYNAMIC_TOPIC_CONFIG", "retention.ms", "1000"),
            ("DEFAULT_CONFIG", "log.retention.ms", None),
        ],
    )
    assert configs.entry_line(e) == (
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, "
        "DEFAULT_CONFIG:log.retention.ms=null}"
    )


def test_get_offsets_filters_and_times():
    assert get_offsets.parse_time("earliest") == -2 and get_offsets.parse_time("123") == 123
    with pytest.raises(CliError, match="Malformed time argument"):
        get_offsets.parse_time("soon")
    topic_ok, part_ok = get_offsets.filter_from_patterns("t.*:1-3,other")
    assert topic_ok("t1") and topic_ok("other") and not topic_ok("x")
    assert part_ok("t1", 1) and part_ok("t1", 2) and not part_ok("t1", 3)
    assert part_ok("other", 9)
    _, part_ok = get_offsets.filter_from_topic("t", "0,2")
    assert part_ok("t", 2) and not part_ok("t", 1) and not part_ok("u", 0)


def test_delete_records_json():
    text = '{"partitions": [{"topic": "t", "partition": 0, "offset": 5}], "version": 1}'
    assert delete_records.parse_offset_json(text) == [("t", 0, 5)]
    dup = (
        '{"partitions": [{"topic": "t", "partition": 0, "offset": 5},'
        '{"topic": "t", "partition": 0, "offset": 6}]}'
    )
    with pytest.raises(CliError, match="duplicate topic partitions: t-0"):
        delete_records.parse_offset_json(dup)
    with pytest.raises(CliError, match="version"):
        delete_records.parse_offset_json('{"partitions": [], "version": 2}')


def test_broker_api_versions_text():
    assert broker_api_versions.api_name(18) == "ApiVersions"
    assert broker_api_versions.api_text(0, 0, 12).startswith("Produce(0): 0 to 12 [usable: ")
    assert broker_api_versions.api_text(60, 2, 2).startswith("DescribeCluster(60): 2 [usable: ")
    block = broker_api_versions.format_versions({18: (0, 4)})
    assert block.startswith("(\n\t") and block.endswith("\n)")
    assert "\tApiVersions(18): 0 to 4 [usable: 4],\n" in block
    assert "\tJoinGroup(11): UNSUPPORTED," in block and "Vote(52)" not in block
    assert broker_api_versions.node_text(0, "h", 9092, None) == (
        "h:9092 (id: 0 rack: null isFenced: false)"
    )


def test_perf_summary_lines():
    assert producer_perf.window_line(1000, 100000, 5000, 2000, 9) == (
        "1000 records sent, 200.0 records/sec (0.02 MB/sec), 2.0 ms avg latency, "
        "9.0 ms max latency."
    )
    line = producer_perf.total_line(4, 400, 1000, 10, 4, [1, 2, 3, 4])
    assert line == (
        "4 records sent, 4.000000 records/sec (0.00 MB/sec), 2.50 ms avg latency, "
        "4.00 ms max latency, 3 ms 50th, 4 ms 95th, 4 ms 99th, 4 ms 99.9th."
    )
    assert consumer_perf.java_date_format("yyyy-MM-dd HH:mm:ss:SSS", 1234).endswith(":234")
    summary = consumer_perf.consumer_summary(0, 2000, 2 * 1024 * 1024, 100, 500, "yyyy")
    assert summary.split(", ")[2:] == [
        "2.0000",
        "1.0000",
        "100",
        "50.0000",
        "500",
        "1500",
        "1.3333",
        "66.6667",
    ]


def test_zookeeper_stat_lines():
    class St:
        czxid, mzxid, pzxid = 2, 3, 4
        ctime = mtime = 0
        cversion, version, aversion, ephemeralOwner, dataLength, numChildren = 1, 0, 0, 0, 5, 1

    lines = zookeeper_shell.stat_lines(St)
    assert lines[0] == "cZxid = 0x2" and lines[-1] == "numChildren = 1"
    assert [line.split(" = ")[0] for line in lines] == [
        "cZxid",
        "ctime",
        "mZxid",
        "mtime",
        "pZxid",
        "cversion",
        "dataVersion",
        "aclVersion",
        "ephemeralOwner",
        "dataLength",
        "numChildren",
    ]
