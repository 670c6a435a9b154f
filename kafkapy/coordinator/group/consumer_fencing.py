"""Fencing a member of a consumer group (sans-io): it left, or one of its deadlines passed.

The member's records are tombstoned and the group epoch is bumped (with new subscription metadata
when the subscribed topics change), so the others get a new target assignment on their next
heartbeat. When the member is the last one of the consumer protocol and every other member uses
the classic protocol, the group is downgraded to a classic group instead (``migration``), when
the migration policy allows it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from . import consumer_records as crec
from .consumer import ConsumerGroup, ConsumerMember
from .consumer_sessions import ConsumerSessions
from .migration import Migration
from .state import CoordinatorState

log = logging.getLogger("kafkapy.coordinator.group")


@dataclass(slots=True)
class ConsumerFencing:
    state: CoordinatorState
    sessions: ConsumerSessions
    migration: Migration

    def fence_member(
        self, group: ConsumerGroup, member: ConsumerMember, now_ms: int, why: str
    ) -> int:
        """Remove a member (it left, or a timeout expired) and bump the group epoch; when it was
        the last member of the consumer protocol among classic members, downgrade instead."""
        gid = group.group_id
        if self.migration.can_downgrade(group, member.member_id):
            err = self.migration.downgrade(group, member, now_ms, why)
            if err is not None:
                return err
        remaining = [m for mid, m in group.members.items() if mid != member.member_id]
        sub_meta = self.state.subscription_metadata(remaining)
        records = crec.member_tombstones(gid, member.member_id)
        if sub_meta != group.subscription_metadata:
            records.append(crec.partition_metadata_record(gid, sub_meta))
        records.append(crec.epoch_record(gid, group.group_epoch + 1))
        err = self.state.append(gid, records, now_ms)
        if err:
            return err
        group.remove_member(member.member_id)
        group.subscription_metadata = sub_meta
        group.group_epoch += 1
        self.sessions.cancel(gid, member.member_id)
        log.info("member=%s removed from consumer group=%s: %s", member.member_id, gid, why)
        return E.none
