"""The cluster as kafka-share-groups.sh sees it (kafkapy/cli/share_groups.py): brokers from
Metadata, each group's coordinator (FindCoordinator), and the share group APIs (ListGroups with
the share type, ShareGroupDescribe, DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets, DeleteGroups) plus ListOffsets for --reset-offsets, on the tool's own
connections (kafkapy.cli.wire)."""

from __future__ import annotations

import time
from typing import Any

from kio.schema.alter_share_group_offsets.v0 import request as alter_req
from kio.schema.delete_groups.v2 import request as delete_groups_req
from kio.schema.delete_share_group_offsets.v0 import request as delete_req
from kio.schema.describe_share_group_offsets.v1 import request as offsets_req
from kio.schema.find_coordinator.v4 import request as find_req
from kio.schema.list_groups.v5 import request as list_req
from kio.schema.list_offsets.v7 import request as list_offsets_req
from kio.schema.metadata.v12 import request as metadata_req
from kio.schema.share_group_describe.v1 import request as describe_req

from kafkapy.cli.common import CliError
from kafkapy.cli.wire import Connection, connect_any
from kafkapy.protocol.errors import ErrorCode


def make(cls: Any, **fields: Any) -> Any:
    """A kio request entity (its fields are typed with kio's NewTypes)."""
    return cls(**fields)


RETRIABLE = frozenset({ErrorCode.coordinator_load_in_progress, ErrorCode.not_coordinator,
                       ErrorCode.coordinator_not_available})


class ShareGroupClient:
    def __init__(self, bootstrap: str, props: dict[str, str], timeout_s: float) -> None:
        self.props = props
        self.timeout_s = timeout_s
        self.conn = connect_any(bootstrap, timeout_s, props)
        self._coordinators: dict[str, tuple[Connection, str]] = {}
        self._brokers: dict[int, Connection] = {}

    def close(self) -> None:
        for c in {id(c): c for c, _ in self._coordinators.values()}.values():
            c.close()
        for c in self._brokers.values():
            c.close()
        self.conn.close()

    # -- the cluster -----------------------------------------------------------------------
    def metadata(self, topics: list[str] | None) -> Any:
        names = None if topics is None else tuple(
            make(metadata_req.MetadataRequestTopic, topic_id=None, name=t) for t in topics)
        return self.conn.request(make(metadata_req.MetadataRequest,
            topics=names, allow_auto_topic_creation=False,
            include_topic_authorized_operations=False))

    def _broker(self, node_id: int, host: str, port: int) -> Connection:
        if node_id not in self._brokers:
            self._brokers[node_id] = Connection(host, port, self.timeout_s, props=self.props)
        return self._brokers[node_id]

    def coordinator(self, group: str) -> tuple[Connection, str]:
        """The group's coordinator connection and its "host:port  (id)" text."""
        if group in self._coordinators:
            return self._coordinators[group]
        deadline = time.monotonic() + self.timeout_s
        while True:
            resp = self.conn.request(make(find_req.FindCoordinatorRequest,
                key_type=0, coordinator_keys=(group,)))
            (c,) = resp.coordinators
            if c.error_code == ErrorCode.none:
                break
            if c.error_code not in RETRIABLE or time.monotonic() > deadline:
                raise CliError(c.error_message or c.error_code.name)
            time.sleep(0.1)
        conn = self._broker(c.node_id, c.host, c.port)
        found = (conn, f"{c.host}:{c.port}  ({c.node_id})")
        self._coordinators[group] = found
        return found

    def _retrying(self, group: str, send: Any, error_of: Any) -> Any:
        deadline = time.monotonic() + self.timeout_s
        while True:
            conn, _ = self.coordinator(group)
            resp = send(conn)
            if error_of(resp) not in RETRIABLE or time.monotonic() > deadline:
                return resp
            self._coordinators.pop(group, None)
            time.sleep(0.1)

    # -- the share group APIs ----------------------------------------------------------------
    def list_groups(self) -> list[tuple[str, str]]:
        md = self.metadata([])
        out: dict[str, str] = {}
        for b in md.brokers:
            conn = self._broker(b.node_id, b.host, b.port)
            resp = conn.request(make(list_req.ListGroupsRequest, states_filter=(),
                                                           types_filter=("share",)))
            for g in resp.groups:
                out[g.group_id] = g.group_state
        return sorted(out.items())

    def describe(self, group: str) -> Any:
        resp = self._retrying(
            group,
            lambda c: c.request(make(describe_req.ShareGroupDescribeRequest,
                group_ids=(group,), include_authorized_operations=False)),
            lambda r: r.groups[0].error_code)
        return resp.groups[0]

    def start_offsets(self, group: str) -> Any:
        resp = self._retrying(
            group,
            lambda c: c.request(make(offsets_req.DescribeShareGroupOffsetsRequest, groups=(
                make(offsets_req.DescribeShareGroupOffsetsRequestGroup, group_id=group,
                     topics=None),
            ))),
            lambda r: r.groups[0].error_code)
        return resp.groups[0]

    def alter_offsets(self, group: str, offsets: dict[tuple[str, int], int]) -> Any:
        by_topic: dict[str, list[Any]] = {}
        for (topic, p), off in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append(
                make(alter_req.AlterShareGroupOffsetsRequestPartition, partition_index=p,
                                                                 start_offset=off))
        req = make(alter_req.AlterShareGroupOffsetsRequest, group_id=group, topics=tuple(
            make(alter_req.AlterShareGroupOffsetsRequestTopic, topic_name=t, partitions=tuple(ps))
            for t, ps in by_topic.items()))
        return self._retrying(group, lambda c: c.request(req), lambda r: r.error_code)

    def delete_offsets(self, group: str, topics: list[str]) -> Any:
        req = make(delete_req.DeleteShareGroupOffsetsRequest, group_id=group, topics=tuple(
            make(delete_req.DeleteShareGroupOffsetsRequestTopic, topic_name=t) for t in topics))
        return self._retrying(group, lambda c: c.request(req), lambda r: r.error_code)

    def delete_group(self, group: str) -> int:
        resp = self._retrying(
            group,
            lambda c: c.request(make(delete_groups_req.DeleteGroupsRequest, groups_names=(group,))),
            lambda r: r.results[0].error_code)
        return int(resp.results[0].error_code)

    def log_offsets(self, partitions: list[tuple[str, int]], timestamp: int) -> dict:
        """(topic, partition) -> the offset of ``timestamp`` (-2 earliest, -1 latest), from
        each partition's leader."""
        md = self.metadata(sorted({t for t, _ in partitions}))
        brokers = {b.node_id: b for b in md.brokers}
        leaders = {(t.name, p.partition_index): p.leader_id
                   for t in md.topics for p in t.partitions}
        out: dict[tuple[str, int], int] = {}
        for tp in partitions:
            b = brokers.get(leaders.get(tp, -1))
            if b is None:
                continue
            conn = self._broker(b.node_id, b.host, b.port)
            resp = conn.request(make(list_offsets_req.ListOffsetsRequest,
                replica_id=-1, isolation_level=0, topics=(make(list_offsets_req.ListOffsetsTopic,
                    name=tp[0], partitions=(make(list_offsets_req.ListOffsetsPartition,
                        partition_index=tp[1], current_leader_epoch=-1,
                        timestamp=timestamp),)),)))
            p = resp.topics[0].partitions[0]
            if p.error_code == ErrorCode.none:
                out[tp] = p.offset if p.offset >= 0 else -1
        return out
