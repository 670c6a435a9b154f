"""Incremental fetch sessions (KIP-227): Kafka's FetchSessionCache and fetch contexts, sans-io.

A client that fetches many partitions opens a session with a full fetch (session id 0, epoch 0);
the broker caches the partitions and their request parameters, and answers with a session id.
Later fetches are incremental (that id, the next epoch): they name only the partitions whose
parameters changed, or that are added or forgotten, and the response holds only the partitions
with something to say (records, a new high watermark or log start offset, an error). A consumer
of many partitions with nothing new then costs a few bytes per request each way.

The rules are Kafka 3.9's (FetchSession.scala), because a half-right cache is worse than none:

* Metadata (session id, epoch): epoch 0 or -1 is a full fetch; a full fetch closes the session
  it names; with epoch -1 no session is created (sessionless). Incremental epochs count up from 1
  and wrap from 2**31 - 1 to 1.
* Incremental errors: an unknown session id is FETCH_SESSION_ID_NOT_FOUND, a wrong epoch
  INVALID_FETCH_SESSION_EPOCH (answered with session id 0 and nothing else), a session created
  by topic name used with a topic-id version (or the reverse) FETCH_SESSION_TOPIC_ID_ERROR. An
  incremental fetch that forgets every partition closes the session (sessionless answer).
* A response includes a cached partition when it has records, its high watermark or log start
  offset changed, or it has an error (its cached high watermark is then set to -1, so it is sent
  again when the error clears). Partitions that returned records move to the end of the session
  (fairness under max_bytes).
* The cache holds ``max.incremental.fetch.session.cache.slots`` sessions (Kafka's default
  1,000). A new session may evict one that was unused for 2 minutes (the least recently used
  first); otherwise the least valuable: a follower's session (privileged) beats a consumer's, a
  bigger session a smaller one, and a session younger than 2 minutes is evictable only by a
  privileged one (and a privileged one younger than that by nobody). When nothing may be
  evicted, the full fetch is answered without a session (id 0), which is always legal.

The fetch handler (server/apis/fetch.py) asks ``FetchSessionCache.new_context`` for a context,
reads the partitions the context names, and lets the context shape the response.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kafkapy.protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
INT32_MAX = 2**31 - 1

Key = tuple[Any, int]  # (topic id, partition) with topic ids, else (topic name, partition)


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Kafka's FetchMetadata.nextEpoch)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class CachedPartition:
    """One partition of a session: the request parameters last sent for it (named as the
    request reader names them, so the read path takes either) and what the last response said
    (high watermark, log start offset)."""

    __slots__ = (
        "current_leader_epoch",
        "fetch_offset",
        "high_watermark",
        "info",
        "last_fetched_epoch",
        "local_log_start",
        "log_start_offset",
        "partition",
        "partition_max_bytes",
        "plog",
        "stamp",
        "topic",
        "topic_id",
    )

    def __init__(self, topic: str | None, topic_id: uuid.UUID | None, fp: Any) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.partition = fp.partition
        self.high_watermark = -1
        self.local_log_start = -1
        # set by the read when it found the partition unchanged: the topic view and log it
        # read, and the log's stamp then; while all three are the same it is unchanged still
        self.info: Any = None
        self.plog: Any = None
        self.stamp = -1
        self.update_request(fp)

    def update_request(self, fp: Any) -> None:
        self.plog = None  # new parameters: read it again
        self.partition_max_bytes = fp.partition_max_bytes
        self.fetch_offset = fp.fetch_offset
        self.log_start_offset = fp.log_start_offset
        self.current_leader_epoch = fp.current_leader_epoch
        self.last_fetched_epoch = fp.last_fetched_epoch

    def must_respond(self, pr: Any, records: int) -> bool:
        """Whether a partition result belongs in an incremental response; remembers what it
        said (Kafka's maybeUpdateResponseData)."""
        must = records > 0
        if self.high_watermark != pr.high_watermark:
            must = True
            self.high_watermark = pr.high_watermark
        if self.local_log_start != pr.log_start_offset:
            must = True
            self.local_log_start = pr.log_start_offset
        if pr.error_code != ErrorCode.none:
            self.high_watermark = -1  # sent again once the error clears
            must = True
        return must


@dataclass(slots=True)
class SessionTopic:
    """A run of a session's partitions of one topic, shaped like a request's topic."""

    topic: str | None
    topic_id: uuid.UUID | None
    partitions: list[CachedPartition] = field(default_factory=list)


class FetchSession:
    """One incremental fetch session."""

    __slots__ = (
        "_topics",
        "cached_size",
        "watch",
        "creation_ms",
        "epoch",
        "evictable_by_all",
        "evictable_by_privileged",
        "id",
        "last_used_ms",
        "partitions",
        "privileged",
        "uses_topic_ids",
    )

    def __init__(
        self,
        session_id: int,
        privileged: bool,
        partitions: dict[Key, CachedPartition],
        uses_topic_ids: bool,
        now_ms: int,
    ) -> None:
        self.id = session_id
        self.privileged = privileged
        self.partitions = partitions  # in fetch order
        self.uses_topic_ids = uses_topic_ids
        self.creation_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.cached_size = -1  # the size at the last touch; -1: not in the cache
        self.evictable_by_all = False
        self.evictable_by_privileged = False
        self._topics: list[SessionTopic] | None = None
        # the session's persistent watch on its partitions (server/replication/purgatory.py), kept
        # across its long polls; closed when the partitions change or the session ends
        self.watch: Any = None

    def drop_watch(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None

    def update(self, requested: Iterable[tuple[Key, CachedPartition]], forgotten: Iterable[Key]):
        """Apply an incremental request: new or changed partitions, then forgotten ones."""
        parts = self.partitions
        before = len(parts)
        changed = False
        for key, cp in requested:
            have = parts.get(key)
            if have is None:
                parts[key] = cp
                changed = True
            else:
                have.update_request(cp)
        for key in forgotten:
            changed = parts.pop(key, None) is not None or changed
        if changed or len(parts) != before:
            self.drop_watch()  # it watches the old set of partitions
            self._topics = None

    def rotate(self, keys: Iterable[Key]) -> None:
        """Partitions that returned records go to the end (the others get their turn)."""
        parts = self.partitions
        moved = False
        for key in keys:
            cp = parts.pop(key, None)
            if cp is not None:
                parts[key] = cp
                moved = True
        if moved:
            self._topics = None

    def topics(self) -> list[SessionTopic]:
        """The session's partitions as request topics (runs of one topic, in fetch order)."""
        if self._topics is None:
            out: list[SessionTopic] = []
            last = None
            for cp in self.partitions.values():
                if last is None or last.topic != cp.topic or last.topic_id != cp.topic_id:
                    last = SessionTopic(cp.topic, cp.topic_id)
                    out.append(last)
                last.partitions.append(cp)
            self._topics = out
        return self._topics


# ---- contexts: what one fetch request is, session-wise ----------------------------------------


@dataclass(slots=True)
class SessionError:
    """The request's session is unknown, or its epoch or topic-id use is wrong."""

    error: ErrorCode


@dataclass(slots=True)
class Sessionless:
    """No session: the request's partitions are read and all answered (session id 0)."""

    topics: list[Any]
    session_id: int = INVALID_SESSION_ID

    def finish(self, results: list[Any], now_ms: int) -> tuple[int, list[Any]]:
        return INVALID_SESSION_ID, results


@dataclass(slots=True)
class Full:
    """A full fetch that may open a session once answered."""

    cache: FetchSessionCache
    topics: list[Any]
    uses_topic_ids: bool
    privileged: bool

    def finish(self, results: list[Any], now_ms: int) -> tuple[int, list[Any]]:
        """(session id or 0, the results, all of them)."""
        size = sum(len(t.partitions) for t in results)

        def partitions() -> dict[Key, CachedPartition]:
            out: dict[Key, CachedPartition] = {}
            # the results answer the request's topics and partitions one to one, in order
            for ft, tr in zip(self.topics, results, strict=True):
                for fp, pr in zip(ft.partitions, tr.partitions, strict=True):
                    cp = CachedPartition(ft.topic, ft.topic_id, fp)
                    cp.high_watermark = -1 if pr.error_code else pr.high_watermark
                    cp.local_log_start = pr.log_start_offset
                    out[_key(self.uses_topic_ids, ft.topic, ft.topic_id, fp.partition)] = cp
            return out

        session_id = self.cache.maybe_create(
            now_ms, self.privileged, size, self.uses_topic_ids, partitions
        )
        return session_id, results


@dataclass(slots=True)
class Incremental:
    """An incremental fetch of an open session."""

    cache: FetchSessionCache
    session: FetchSession
    request_epoch: int

    @property
    def topics(self) -> list[SessionTopic]:
        return self.session.topics()

    def finish(self, results: list[Any], now_ms: int) -> tuple[int, list[Any]]:
        """(the session id, the partitions that must be answered); results of partitions the
        read already found unchanged are simply absent."""
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):
            # a later request of this session got in between (a duplicate): Kafka's answer
            raise StaleEpoch(session.id)
        uses_ids = session.uses_topic_ids
        out = []
        with_records = []
        for tr in results:
            kept = []
            for pr in tr.partitions:
                cp = pr.request  # the cached partition this result answers
                records = pr.records_size
                if cp.must_respond(pr, records):
                    kept.append(pr)
                    if records > 0:
                        with_records.append(_key(uses_ids, cp.topic, cp.topic_id, cp.partition))
            if kept:
                tr.partitions = kept
                out.append(tr)
        session.rotate(with_records)
        return session.id, out


class StaleEpoch(Exception):
    """The session moved to another epoch while this request was being served."""

    def __init__(self, session_id: int) -> None:
        super().__init__(session_id)
        self.session_id = session_id


def _key(uses_ids: bool, name: str | None, topic_id: Any, partition: int) -> Key:
    return (topic_id, partition) if uses_ids else (name, partition)


# ---- the cache ---------------------------------------------------------------------------------


class FetchSessionCache:
    """Kafka's FetchSessionCache (one shard): at most ``max_entries`` sessions."""

    def __init__(
        self, max_entries: int, eviction_ms: int = EVICTION_MS, rng: random.Random | None = None
    ) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, FetchSession] = {}
        self.evictions = 0
        self._rng = rng or random.Random()

    def __len__(self) -> int:
        return len(self.sessions)

    @property
    def total_partitions(self) -> int:
        return sum(max(s.cached_size, 0) for s in self.sessions.values())

    def new_context(
        self,
        version: int,
        session_id: int,
        epoch: int,
        privileged: bool,
        topics: list[Any],
        forgotten: list[Any],
        now_ms: int,
    ) -> SessionError | Sessionless | Full | Incremental:
        """What a fetch request is (Kafka's FetchManager.newContext). ``topics`` and
        ``forgotten`` are the request's (protocol/fetch_request.py)."""
        uses_ids = version >= 13
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full fetch
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)  # any session a full fetch names is closed
            if epoch == FINAL_EPOCH:
                return Sessionless(topics)
            return Full(self, topics, uses_ids, privileged)
        session = self.sessions.get(session_id)
        if session is None:
            return SessionError(ErrorCode.fetch_session_id_not_found)
        if session.epoch != epoch:
            return SessionError(ErrorCode.invalid_fetch_session_epoch)
        if session.uses_topic_ids != uses_ids:
            return SessionError(ErrorCode.fetch_session_topic_id_error)
        requested = [
            (_key(uses_ids, ft.topic, ft.topic_id, fp.partition),
             CachedPartition(ft.topic, ft.topic_id, fp))
            for ft in topics
            for fp in ft.partitions
        ]
        gone = [
            _key(uses_ids, f.topic, f.topic_id, p) for f in forgotten for p in f.partitions
        ]
        session.update(requested, gone)
        if not session.partitions:
            self.remove(session.id)  # everything forgotten: the session ends
            return Sessionless(topics)
        self.touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return Incremental(self, session, epoch)

    # ---- creating, evicting, touching ----------------------------------------------------

    def maybe_create(self, now_ms: int, privileged: bool, size: int, uses_topic_ids: bool,
                     make_partitions) -> int:
        """A new session for a full fetch if there is room or one may be evicted; its id, or
        0 (answered without a session)."""
        if self.max_entries <= 0:
            return INVALID_SESSION_ID
        if len(self.sessions) >= self.max_entries and not self._try_evict(
            privileged, size, now_ms
        ):
            return INVALID_SESSION_ID
        session = FetchSession(
            self._new_id(), privileged, make_partitions(), uses_topic_ids, now_ms
        )
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _new_id(self) -> int:
        while True:
            sid = self._rng.randint(1, INT32_MAX)
            if sid not in self.sessions:
                return sid

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Evict a stale session, else the least valuable one the new session may evict
        (Kafka's tryEvict)."""
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stale.last_used_ms > self.eviction_ms:
            self._evict(stale)
            return True
        candidates = [
            s
            for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        first = min(candidates, key=lambda s: (s.privileged, s.cached_size, s.id))
        if (privileged, size, 0) < (first.privileged, first.cached_size, first.id):
            return False
        self._evict(first)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.evictions += 1

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cached_size = -1
            session.drop_watch()
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """The session was used: its last-use time, size and evictability are updated (as
        Kafka's, evictability is decided here, at use)."""
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = (not session.privileged) or old
        session.evictable_by_all = old
