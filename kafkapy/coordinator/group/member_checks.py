"""Who may act on a group (pure functions): member identity and generation/epoch fencing.

- ``validate_classic_member``: a classic group's member, by member id or by static instance id
  (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), as JoinGroup, SyncGroup, Heartbeat and OffsetCommit
  check it.
- ``check_classic_commit`` and ``check_consumer_commit``: whether an offset commit's generation
  (classic) or member epoch (consumer protocol) and member id are current, as Kafka's
  ClassicGroup/ConsumerGroup.validateOffsetCommit decide. TxnOffsetCommit's KIP-447 fencing
  (generation id, member id, group instance id sent with transactional commits) is the same check.
"""

from __future__ import annotations

from kafkapy.protocol.errors import ErrorCode as E

from .classic import ClassicGroup, GroupState
from .consumer import ConsumerGroup

S = GroupState


def validate_classic_member(group: ClassicGroup, member_id: str, instance_id: str | None) -> int:
    if instance_id is not None:
        existing = group.static_members.get(instance_id)
        if existing is None:
            return E.unknown_member_id
        if existing != member_id:
            return E.fenced_instance_id
    elif member_id not in group.members:
        return E.unknown_member_id
    return E.none


def check_classic_commit(
    group: ClassicGroup,
    generation_id: int,
    member_id: str,
    instance_id: str | None,
    *,
    transactional: bool = False,
) -> int:
    """A generation below zero with no member is a simple consumer or an admin client, allowed
    while the group is empty; a member commits at the current generation, not while the group
    waits for the leader's assignment. A transactional commit (TxnOffsetCommit) that names no
    member is allowed in any state (older producers send none), and is not held back by a
    rebalance."""
    if group.is_in(S.DEAD):
        return E.coordinator_not_available
    if generation_id < 0 and group.is_in(S.EMPTY):
        return E.none  # a simple consumer or an admin client
    if generation_id >= 0 or member_id or instance_id is not None:
        err = validate_classic_member(group, member_id, instance_id)
        if err:
            return err
        if generation_id != group.generation_id:
            return E.illegal_generation
    elif not transactional and not group.is_in(S.EMPTY):
        return E.unknown_member_id
    if not transactional and group.is_in(S.COMPLETING_REBALANCE):
        return E.rebalance_in_progress
    return E.none


def check_consumer_commit(
    group: ConsumerGroup,
    member_epoch: int,
    member_id: str,
    api_version: int,
    instance_id: str | None = None,
    *,
    transactional: bool = False,
) -> int:
    """Kafka's ConsumerGroup.validateOffsetCommit: an epoch below zero is an admin client or
    a simple consumer, allowed while the group is empty; members of the consumer protocol
    must use v9+ and commit at their current member epoch (else STALE_MEMBER_EPOCH), members
    of the classic protocol with their generation = member epoch (else ILLEGAL_GENERATION).
    A transactional commit naming no member, epoch or instance is allowed (no version rule)."""
    if member_epoch < 0 and group.is_empty():
        return E.none
    if transactional and member_epoch == -1 and not member_id and instance_id is None:
        return E.none
    member = group.members.get(member_id)
    if member is None:
        return E.unknown_member_id
    if not transactional and member.classic is None and api_version < 9:
        return E.unsupported_version
    if member_epoch != member.member_epoch:
        return E.illegal_generation if member.classic is not None else E.stale_member_epoch
    return E.none
