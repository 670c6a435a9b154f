"""OffsetDelete for `kafkapy consumer-groups --delete-offsets`, sent on the wire (confluent-kafka
has no API for it): find the group's coordinator, ask it to delete the committed offsets of some
partitions, and word Kafka's error codes as Kafka's tool does."""

from __future__ import annotations

from kafkapy.cli.common import CliError


def error_message(code: int) -> str:
    from kafkapy.protocol.errors import error_name

    messages = {
        15: "The coordinator is not available.",
        16: "This is not the correct coordinator.",
        24: "The configured groupId is invalid.",
        68: "The group is not empty.",
        69: "The group id does not exist.",
        30: "Not authorized to access group: Group authorization failed.",
        3: "This server does not host this topic-partition.",
        93: "The consumer group is actively subscribed to the topic",
        35: "The version of API is not supported.",
    }
    return messages.get(code, error_name(code))


def offset_delete(
    bootstrap: str,
    group: str,
    tps: list[tuple[str, int]],
    timeout: float,
    props: dict[str, str] | None = None,
) -> tuple[int, dict[tuple[str, int], str | None]]:
    """OffsetDelete at the group's coordinator (confluent-kafka has no API for it)."""
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
    from kio.schema.offset_delete.v0.request import (
        OffsetDeleteRequest,
        OffsetDeleteRequestPartition,
        OffsetDeleteRequestTopic,
    )

    from kafkapy.cli.wire import Connection, connect_any

    try:
        with connect_any(bootstrap, timeout, props) as conn:
            fc = conn.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
    except ConnectionError:
        raise CliError("The cluster does not serve FindCoordinator (no consumer groups)") from None
    (coord,) = fc.coordinators
    if coord.error_code != 0:
        raise CliError(error_message(int(coord.error_code)))
    topics: dict[str, list[int]] = {}
    for t, p in tps:
        topics.setdefault(t, []).append(p)
    req = OffsetDeleteRequest(
        group_id=group,
        topics=tuple(
            OffsetDeleteRequestTopic(
                name=t,
                partitions=tuple(OffsetDeleteRequestPartition(partition_index=p) for p in ps),
            )
            for t, ps in topics.items()
        ),
    )
    try:
        with Connection(coord.host, coord.port, timeout, props=props) as c:
            resp = c.request(req)
    except ConnectionError as e:
        raise CliError(str(e)) from None
    results: dict[tuple[str, int], str | None] = {}
    for t in resp.topics:
        for p in t.partitions:
            code = int(p.error_code)
            results[(t.name, int(p.partition_index))] = (
                None if code == 0 else "Error: " + error_message(code)
            )
    return int(resp.error_code), results
