"""`kafkapy delete-records` (kafka-delete-records.sh): move partitions' log start offsets forward.

--offset-json-file holds `{"partitions": [{"topic": "t", "partition": 0, "offset": 10}],
"version": 1}`; offset -1 means the high watermark. Prints, as Kafka's tool does,
`partition: t-0<TAB>low_watermark: 10` (or `error: ...`) per partition.
"""

from __future__ import annotations

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    admin_client,
    kafka_error_message,
    load_properties,
    load_versioned_json,
)

DESCRIPTION = (
    "This tool helps to delete records of the given partitions down to the specified offset."
)


def parse_offset_json(text: str) -> list[tuple[str, int, int]]:
    doc = load_versioned_json(text)
    if "partitions" not in doc:
        raise CliError("Missing partitions field")
    out: list[tuple[str, int, int]] = []
    try:
        for entry in doc["partitions"]:
            out.append((str(entry["topic"]), int(entry["partition"]), int(entry["offset"])))
    except (KeyError, TypeError, ValueError) as e:
        raise CliError(f"Invalid partition entry in offset JSON: {e}") from None
    seen: dict[tuple[str, int], int] = {}
    for t, p, _ in out:
        seen[(t, p)] = seen.get((t, p), 0) + 1
    dups = [f"{t}-{p}" for (t, p), n in seen.items() if n > 1]
    if dups:
        raise CliError(
            "Offset json file contains duplicate topic partitions: " + ",".join(sorted(dups))
        )
    return out


def main(argv: list[str]) -> int:
    from confluent_kafka import KafkaException, TopicPartition

    p = ToolParser("kafka-delete-records", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument(
        "--offset-json-file",
        metavar="FILE",
        help='REQUIRED: JSON file with the offset per partition: {"partitions": [{"topic": '
        '"foo", "partition": 1, "offset": 1}], "version": 1}',
    )
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    opts = p.parse_args(argv)
    if not opts.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    if not opts.offset_json_file:
        raise CliError('Missing required argument "[offset-json-file]"')
    try:
        with open(opts.offset_json_file, encoding="utf-8") as f:
            entries = parse_offset_json(f.read())
    except OSError as e:
        raise CliError(f"Cannot read {opts.offset_json_file}: {e.strerror}") from None
    admin = admin_client(opts.bootstrap_server, load_properties(opts.command_config))
    print("Executing records delete operation")
    tps = [TopicPartition(t, part, off) for t, part, off in entries]
    futures = admin.delete_records(tps, request_timeout=30) if tps else {}
    print("Records delete operation completed:")
    for tp, fut in futures.items():
        name = f"{tp.topic}-{tp.partition}"
        try:
            res = fut.result()
            print(f"partition: {name}\tlow_watermark: {res.low_watermark}")
        except KafkaException as e:
            print(f"partition: {name}\terror: {kafka_error_message(e)}")
    return 0
