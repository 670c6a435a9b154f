"""Helpers for streams group (KIP-1071) tests on the wire: a word count's topology as
StreamsGroupHeartbeat v1 sends it, a heartbeat with a member's tasks, a join that waits for the
group's coordinator, and the tasks of an answer."""

from __future__ import annotations

import datetime
import time

from compat_tests.rawclient import RawClient
from kafkapy.protocol.errors import ErrorCode as E
from kafkapy.protocol.kio_schemas import _streams_group_heartbeat_v1_request as hb1

INPUT = "words"


def topology(app: str, epoch: int = 0, input_topic: str = INPUT) -> hb1.Topology:
    """A word count: subtopology 0 reads the input and repartitions by word, subtopology 1
    counts (a changelog)."""
    rep = hb1.TopicInfo(name=f"{app}-repartition", partitions=0, replication_factor=0,
                        topic_configs=(hb1.KeyValue(key="cleanup.policy", value="delete"),))
    log = hb1.TopicInfo(name=f"{app}-counts-changelog", partitions=0, replication_factor=0,
                        topic_configs=(hb1.KeyValue(key="cleanup.policy", value="compact"),))
    return hb1.Topology(epoch=epoch, subtopologies=(
        hb1.Subtopology(subtopology_id="0", source_topics=(input_topic,), source_topic_regex=(),
                        state_changelog_topics=(), repartition_sink_topics=(rep.name,),
                        repartition_source_topics=(), copartition_groups=()),
        hb1.Subtopology(subtopology_id="1", source_topics=(), source_topic_regex=(),
                        state_changelog_topics=(log,), repartition_sink_topics=(),
                        repartition_source_topics=(rep,), copartition_groups=()),
    ))


def heartbeat(c: RawClient, group: str, member: str, epoch: int, *, topo=None,
              active=None, standby=None, warmup=None, **kw):
    def ids(tasks):
        if tasks is None:
            return None
        return tuple(hb1.TaskIds(subtopology_id=s, partitions=tuple(sorted(ps)))
                     for s, ps in sorted(tasks.items()))

    fields = dict(
        group_id=group, member_id=member, member_epoch=epoch, endpoint_information_epoch=0,
        instance_id=None, rack_id=None,
        rebalance_timeout=datetime.timedelta(milliseconds=30000 if epoch == 0 else -1),
        topology=topo, active_tasks=ids(active), standby_tasks=ids(standby),
        warmup_tasks=ids(warmup), process_id=kw.pop("process_id", member), user_endpoint=None,
        client_tags=None, task_offsets=None, task_end_offsets=None, shutdown_application=False,
    )
    fields.update(kw)
    return c.request(hb1.StreamsGroupHeartbeatRequest(**fields))


def join(c: RawClient, group: str, member: str, app: str, input_topic: str = INPUT):
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest

    deadline = time.monotonic() + 30
    while True:
        c.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
        r = heartbeat(c, group, member, 0, topo=topology(app, input_topic=input_topic), active={},
                      standby={}, warmup={})
        if r.error_code not in (E.not_coordinator, E.coordinator_load_in_progress,
                                E.coordinator_not_available):
            return r
        assert time.monotonic() < deadline, r
        time.sleep(0.2)


def tasks(rows) -> dict[str, set[int]]:
    return {t.subtopology_id: set(t.partitions) for t in rows or () if t.partitions}
