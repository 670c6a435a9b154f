"""Per user and client-id quotas, as Kafka's ClientQuotaManager (with its default callback) keeps
them: one manager per quota type (produce bytes/s, fetch bytes/s, request time %).

Quotas are set for entities: (user, client-id), user, client-id, each possibly the default
entity (``<default>``). The quota that applies to a request is the most specific one, in Kafka's
order:

    /config/users/<user>/clients/<client-id>
    /config/users/<user>/clients/<default>
    /config/users/<user>
    /config/users/<default>/clients/<client-id>
    /config/users/<default>/clients/<default>
    /config/users/<default>
    /config/clients/<client-id>
    /config/clients/<default>

Usage is shared by everyone mapped to the same *metric tags* (user tag, client-id tag): with only
client-id quotas every connection of one client id shares one rate whatever its user; with only
user quotas, every client of one user. With quotas at several levels, the tags follow the entity
whose quota applies (Kafka's quotaMetricTags). Each tag pair has a sampled rate
(kafkapy.quotas.rate) bounded by its quota; rates idle for an hour are dropped.

Nothing is recorded until a quota of this type has been set once (Kafka's quotasEnabled), so a
broker without quotas pays one attribute check per request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .rate import QuotaRate

DEFAULT = "<default>"  # the default entity, as stored
INACTIVE_EXPIRATION_MS = 3600 * 1000  # Kafka's InactiveSensorExpirationTimeSeconds

# quota types enabled (Kafka's QuotaTypes bits)
CLIENT_ID, USER, USER_CLIENT_ID = 1, 2, 4

Tags = tuple[str, str]  # (user tag, client-id tag); "" = not part of the key


@dataclass(frozen=True, slots=True)
class QuotaEntity:
    """A quota entity: user and client id (None: not part of it; DEFAULT: the default one)."""

    user: str | None = None
    client_id: str | None = None


class ClientQuotaManager:
    """One quota type's quotas and usage (see the module doc)."""

    def __init__(
        self,
        samples: int = 11,
        window_s: int = 1,
        max_throttle_ms: float | None = None,
    ) -> None:
        self.samples = samples
        self.window_ms = window_s * 1000
        self.max_throttle_ms = max_throttle_ms  # request quotas cap throttles at one window
        self._quotas: dict[QuotaEntity, float] = {}
        self._enabled = 0
        self._rates: dict[Tags, QuotaRate] = {}
        self._next_purge_ms = 0.0

    @property
    def enabled(self) -> bool:
        """True once any quota of this type was set (it stays so, as in Kafka)."""
        return self._enabled != 0

    # -- quotas ----------------------------------------------------------------------------------
    def set_quota(self, entity: QuotaEntity, value: float | None) -> None:
        """Set (or remove, with None) the quota of an entity; rates in use take the new bounds."""
        if entity.user is not None:
            self._enabled |= USER_CLIENT_ID if entity.client_id is not None else USER
        elif entity.client_id is not None:
            self._enabled |= CLIENT_ID
        if value is None:
            self._quotas.pop(entity, None)
        else:
            self._quotas[entity] = float(value)
        for tags, rate in self._rates.items():
            rate.bound = self.quota_limit(tags)

    def quota_limit(self, tags: Tags) -> float:
        """The quota of the rate with these tags (inf: none), Kafka's DefaultQuotaCallback."""
        user, client = tags
        q = self._quotas
        if user and client:
            order = [(user, client), (user, DEFAULT), (DEFAULT, client), (DEFAULT, DEFAULT)]
        elif user:
            order = [(user, None), (DEFAULT, None)]
        elif client:
            order = [(None, client), (None, DEFAULT)]
        else:
            return math.inf
        for u, c in order:
            found = q.get(QuotaEntity(u, c))
            if found is not None:
                return found
        return math.inf

    def metric_tags(self, user: str, client_id: str) -> Tags:
        """Which usage a request from ``user`` with ``client_id`` counts against."""
        enabled = self._enabled
        if enabled in (0, CLIENT_ID):
            return "", client_id
        if enabled == USER:
            return user, ""
        if enabled == USER_CLIENT_ID:
            return user, client_id
        q = self._quotas
        for u, c, tags in (
            (user, client_id, (user, client_id)),
            (user, DEFAULT, (user, client_id)),
            (user, None, (user, "")),
            (DEFAULT, client_id, (user, client_id)),
            (DEFAULT, DEFAULT, (user, client_id)),
            (DEFAULT, None, (user, "")),
        ):
            if QuotaEntity(u, c) in q:
                return tags
        return "", client_id

    def quota_for(self, user: str, client_id: str) -> float:
        """The quota applying to ``user`` with ``client_id`` (inf: none)."""
        return self.quota_limit(self.metric_tags(user, client_id))

    # -- usage -----------------------------------------------------------------------------------
    def _rate(self, user: str, client_id: str, now_ms: float) -> QuotaRate:
        if now_ms >= self._next_purge_ms:
            self._purge(now_ms)
        tags = self.metric_tags(user, client_id)
        rate = self._rates.get(tags)
        if rate is None:
            rate = QuotaRate(self.samples, self.window_ms, self.quota_limit(tags))
            self._rates[tags] = rate
        return rate

    def record(self, user: str, client_id: str, value: float, now_ms: float) -> int:
        """Record ``value`` for the request's usage; the throttle time in ms (0: within quota)."""
        if not self._enabled:
            return 0
        return self._rate(user, client_id, now_ms).record(value, now_ms, self.max_throttle_ms)

    def record_only(self, user: str, client_id: str, value: float, now_ms: float) -> None:
        """Record without checking (Kafka's recordNoThrottle); a negative value un-records (a
        throttled fetch sends nothing, so what it would have sent is taken back)."""
        if self._enabled:
            self._rate(user, client_id, now_ms).add(value, now_ms)

    def max_value_in_window(self, user: str, client_id: str) -> float:
        """The most that could be recorded at once without a guaranteed throttle (Kafka's
        getMaxValueInQuotaWindow: quota * (samples - 1) * window); inf without a quota."""
        if not self._enabled:
            return math.inf
        quota = self.quota_for(user, client_id)
        return quota * (self.samples - 1) * self.window_ms / 1000.0

    def _purge(self, now_ms: float) -> None:
        for tags in [t for t, r in self._rates.items()
                     if now_ms - r.last_record_ms > INACTIVE_EXPIRATION_MS]:
            del self._rates[tags]
        self._next_purge_ms = now_ms + 60_000
