"""The follower's side of an incremental fetch session (KIP-227; Kafka's FetchSessionHandler),
sans-io.

A follower fetches the same partitions from its leader over and over. With a session, the first
request names them all (a full fetch, epoch 0) and the leader answers with a session id; after
that each request (the same session id, the next epoch) names only the partitions whose fetch
parameters changed since they were last sent (a new fetch offset after an append, a new log
start offset or leader epoch), and forgets the ones no longer fetched; the leader answers with
only the partitions that have something new. An idle partition then costs nothing per round.

Rules (Kafka 3.9's): a full request after a reconnect or any session error closes the old
session (its id with epoch 0) and opens a new one; FETCH_SESSION_ID_NOT_FOUND starts from
scratch (id 0, epoch 0); a response with session id 0 means no session was kept, so the next
request is full again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode

INITIAL_EPOCH = 0
INT32_MAX = 2**31 - 1


def _next(epoch: int) -> int:
    return 1 if epoch == INT32_MAX else epoch + 1


@dataclass(frozen=True, slots=True)
class FetchRound:
    """One request of the session: its metadata, what it names and what it forgets."""

    session_id: int
    epoch: int
    send: list[Hashable]  # the keys whose parameters go in the request
    forget: list[Hashable]  # keys to drop from the leader's session

    @property
    def full(self) -> bool:
        return self.epoch == INITIAL_EPOCH


class FollowerFetchSession:
    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = INITIAL_EPOCH
        self._sent: dict[Hashable, object] = {}  # key -> the parameters last sent for it

    def next_round(self, wanted: Mapping[Hashable, object]) -> FetchRound:
        """The next request for the partitions ``wanted`` (key -> comparable parameters)."""
        if self.epoch == INITIAL_EPOCH:
            self._sent = dict(wanted)
            return FetchRound(self.session_id, INITIAL_EPOCH, list(wanted), [])
        send = [k for k, params in wanted.items() if self._sent.get(k) != params]
        forget = [k for k in self._sent if k not in wanted]
        for k in forget:
            del self._sent[k]
        for k in send:
            self._sent[k] = wanted[k]
        return FetchRound(self.session_id, self.epoch, send, forget)

    def on_response(self, sent: FetchRound, error: int, session_id: int) -> bool:
        """Take the response to ``sent``; False when it is a session error (nothing in it)."""
        if error == ErrorCode.fetch_session_id_not_found:
            self.session_id, self.epoch = 0, INITIAL_EPOCH
            return False
        if error in (ErrorCode.invalid_fetch_session_epoch, ErrorCode.fetch_session_topic_id_error):
            self.epoch = INITIAL_EPOCH  # the next full request closes it and opens another
            return False
        if error:
            self.reset()
            return False
        if session_id == 0:  # no session kept: full requests again
            self.session_id, self.epoch = 0, INITIAL_EPOCH
        elif sent.full:
            self.session_id, self.epoch = session_id, _next(INITIAL_EPOCH)
        else:
            self.epoch = _next(self.epoch)
        return True

    def reset(self) -> None:
        """The connection failed or the session is in doubt: the next request is full (and
        closes the session it names)."""
        self.epoch = INITIAL_EPOCH
