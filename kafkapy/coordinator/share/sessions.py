"""Share sessions (sans-io): Kafka's ShareSessionCache and ShareSessionContext.

A share session belongs to one member of one share group and holds the share-partitions it
fetches from, so ShareFetch requests after the first name only what changed. Epoch 0 opens a
session (replacing the member's previous one) with the request's partitions; each later request
carries the next epoch (1, 2, ... wrapping to 1) and adds its partitions and drops its forgotten
ones; epoch -1 closes it (the member's acquired records are then released by the caller). At most
``group.share.max.share.sessions`` sessions exist (SHARE_SESSION_LIMIT_REACHED). Unknown session:
SHARE_SESSION_NOT_FOUND; wrong epoch: INVALID_SHARE_SESSION_EPOCH.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode as E

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
INT_MAX = 2**31 - 1

TopicPartition = tuple[uuid.UUID, int]


@dataclass(slots=True)
class ShareSession:
    group_id: str
    member_id: str
    epoch: int  # the epoch the next request must carry
    partitions: dict[TopicPartition, None] = field(default_factory=dict)  # ordered set


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= INT_MAX else epoch + 1


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def open_or_update(
        self,
        group_id: str,
        member_id: str,
        epoch: int,
        added: Iterable[TopicPartition],
        forgotten: Iterable[TopicPartition],
    ) -> tuple[int, ShareSession | None, bool]:
        """ShareFetch's session step for epoch >= 0: (error, session, is_full)."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if key not in self.sessions and len(self.sessions) >= self.max_sessions:
                return E.share_session_limit_reached, None, True
            session = ShareSession(group_id, member_id, next_epoch(0))
            for tp in added:
                session.partitions[tp] = None
            self.sessions[key] = session
            return E.none, session, True
        found, err = self._check(key, epoch)
        if found is None:
            return err, None, False
        for tp in forgotten:
            found.partitions.pop(tp, None)
        for tp in added:
            found.partitions[tp] = None
        found.epoch = next_epoch(epoch)
        return E.none, found, False

    def acknowledge_step(
        self, group_id: str, member_id: str, epoch: int
    ) -> tuple[int, ShareSession | None]:
        """ShareAcknowledge's session step (it never opens a session): (error, session)."""
        if epoch == INITIAL_EPOCH:
            return E.invalid_share_session_epoch, None
        if epoch == FINAL_EPOCH:
            return self.close(group_id, member_id)
        session, err = self._check((group_id, member_id), epoch)
        if session is not None:
            session.epoch = next_epoch(epoch)
        return err, session

    def close(self, group_id: str, member_id: str) -> tuple[int, ShareSession | None]:
        session = self.sessions.pop((group_id, member_id), None)
        if session is None:
            return E.share_session_not_found, None
        return E.none, session

    def _check(self, key: tuple[str, str], epoch: int) -> tuple[ShareSession | None, int]:
        session = self.sessions.get(key)
        if session is None:
            return None, E.share_session_not_found
        if session.epoch != epoch:
            return None, E.invalid_share_session_epoch
        return session, E.none
