"""Delegation tokens on a broker: Kafka's DelegationTokenManager with the semantics of Kafka 4.4's
DelegationTokenControlManager, stored as Kafka 3.x's DelegationTokenManagerZk stores them.

Enabled by ``delegation.token.secret.key`` (without it every operation answers
DELEGATION_TOKEN_AUTH_DISABLED and nothing is loaded). A token's HMAC is HMAC-SHA512 of its id
under the key; every broker of a cluster shares the key, so each computes the HMAC and derives
the SCRAM credentials itself (server/security/token_cache.py).

* create: maximum lifetime ``min(max_lifetime_ms, delegation.token.max.lifetime.ms)`` (the
  broker's when the request asks for 0 or less), first expiry ``min(max, now +
  delegation.token.expiry.time.ms)``;
* renew (owner or renewer, by HMAC): DELEGATION_TOKEN_NOT_FOUND, then _EXPIRED, then
  _OWNER_MISMATCH; the new expiry is ``min(max, now + min(renew period, expiry.time.ms))``; a
  refusal's expiry timestamp is 0, as Kafka 4.4's controller leaves it;
* expire (owner or renewer, by HMAC): NOT_FOUND, then OWNER_MISMATCH; a negative period removes
  the token at once, else EXPIRED for an expired token, else expiry ``min(max, now + period)``;
* every ``delegation.token.expiry.check.interval.ms`` the controller removes the tokens whose
  expiry or maximum lifetime has passed (until then an expired token still authenticates, as in
  Kafka).

Writes go to /delegation_token/tokens with a change notification (kafkapy.metadata.
delegation_tokens), which every broker's :class:`TokenChangeListener` applies.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.clock import now_ms
from kafkapy.metadata import delegation_tokens as dt
from kafkapy.metadata.delegation_tokens import TokenInformation
from kafkapy.metadata.errors import StoreError
from kafkapy.metadata.uuids import random_uuid, uuid_to_base64
from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.scram import TokenCredential

from ..config.change_listener import ChangeListener
from .token_cache import DelegationTokenCache, create_hmac, scram_credentials

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.delegation_tokens")

LONG_MAX = 2**63 - 1
ERROR_TIMESTAMP = 0  # a refused renew or expire: the controller's response leaves it unset


def _sum(now: int, duration: int) -> int:
    return LONG_MAX if now > LONG_MAX - duration else now + duration


@dataclass(frozen=True)
class CreateResult:
    error: ErrorCode
    info: TokenInformation | None = None
    hmac: bytes = b""


class DelegationTokenManager:
    """The broker's tokens and the four operations on them (see the module doc)."""

    def __init__(self, broker: Broker) -> None:
        config = broker.config
        self.broker = broker
        self.secret_key: str | None = config.delegation_token_secret_key or None
        self.max_lifetime_ms = config.delegation_token_max_lifetime_ms
        self.expiry_time_ms = config.delegation_token_expiry_time_ms
        self.check_interval_ms = config.delegation_token_expiry_check_interval_ms
        self.cache = DelegationTokenCache()
        self.listener: TokenChangeListener | None = None
        self._lock = trio.Lock()
        self._nursery: trio.Nursery | None = None

    @property
    def enabled(self) -> bool:
        return self.secret_key is not None

    def hmac(self, token_id: str) -> bytes:
        assert self.secret_key is not None
        return create_hmac(token_id, self.secret_key)

    # -- lifecycle (blocking store calls) ------------------------------------------------------
    def start(self) -> None:
        """Create the paths, watch the change notifications, load every token."""
        if not self.enabled:
            return
        store = self.broker.store
        dt.ensure_paths(store)
        self.listener = TokenChangeListener(self)
        self.listener.start()
        ids = dt.token_ids(store)
        log.info("loading the delegation token cache count=%d", len(ids))
        for token_id in ids:
            try:
                info = dt.read_token(store, token_id)
            except (ValueError, KeyError, TypeError) as e:
                log.error("ignoring unreadable delegation token %s: %s", token_id, e)
                continue
            if info is not None:
                self.take(info)

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()

    def take(self, info: TokenInformation) -> None:
        """Put a stored token in the cache (credentials derived once per token)."""
        hmac = self.hmac(info.token_id)
        fresh = None if self.cache.has_credentials(info.token_id) else scram_credentials(hmac)
        self.cache.update(info, hmac, fresh)

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Apply token changes, and on the controller remove expired tokens periodically."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self.listener is not None:
                await nursery.start(self.listener.run)
                nursery.start_soon(self._expire_periodically)
            task_status.started()

    def refresh_soon(self, token_id: str) -> None:
        """Reread a token named by a change notification (see :meth:`refresh`)."""
        if self._nursery is not None:
            self._nursery.start_soon(self.refresh, token_id)

    async def refresh(self, token_id: str) -> None:
        """Take the token as stored now (gone: drop it). Under the operations' lock, as Kafka
        processes a notification: a read that raced this broker's own expire cannot bring the
        removed token back."""
        async with self._lock:
            try:
                info = await trio.to_thread.run_sync(dt.read_token, self.broker.store, token_id)
            except (ValueError, KeyError, TypeError) as e:
                log.error("ignoring unreadable delegation token %s: %s", token_id, e)
                info = None
            except StoreError as e:
                log.warning("rereading delegation token %s failed: %s", token_id, e)
                return
            if info is None:
                self.cache.remove(token_id)
            else:
                self.take(info)

    async def _expire_periodically(self) -> None:
        while True:
            await trio.sleep(self.check_interval_ms / 1000)
            replicas = self.broker.replicas
            if replicas is not None and not replicas.controller_loop.controller.active:
                continue
            try:
                await self.expire_tokens()
            except Exception:
                log.exception("removing expired delegation tokens failed")

    async def expire_tokens(self) -> None:
        async with self._lock:
            now = now_ms()
            for info in self.cache.tokens():
                if info.expired(now):
                    log.info("Delegation token expired for token: %s for owner: %s",
                             info.token_id, info.owner)
                    await trio.to_thread.run_sync(dt.delete_token, self.broker.store,
                                                  info.token_id)
                    self.cache.remove(info.token_id)

    # -- the operations ------------------------------------------------------------------------
    async def create(
        self, owner: str, requester: str, renewers: tuple[str, ...], max_lifetime_ms: int
    ) -> CreateResult:
        if not self.enabled:
            return CreateResult(ErrorCode.delegation_token_auth_disabled)
        now = now_ms()
        max_life = self.max_lifetime_ms
        if max_lifetime_ms > 0:
            max_life = min(max_life, max_lifetime_ms)
        max_ts = _sum(now, max_life)
        expiry = min(max_ts, _sum(now, self.expiry_time_ms))
        token_id = uuid_to_base64(random_uuid())
        info = TokenInformation(token_id, owner, requester, renewers, now, max_ts, expiry)
        hmac = self.hmac(token_id)
        async with self._lock:
            await trio.to_thread.run_sync(dt.write_token, self.broker.store, info)
            creds = await trio.to_thread.run_sync(scram_credentials, hmac)
            self.cache.update(info, hmac, creds)
        log.info("Created a delegation token: %s for owner: %s", token_id, owner)
        return CreateResult(ErrorCode.none, info, hmac)

    async def renew(self, principal: str, hmac: bytes, renew_period_ms: int) -> tuple[
        ErrorCode, int
    ]:
        """(error, new expiry timestamp)."""
        if not self.enabled:
            return ErrorCode.delegation_token_auth_disabled, ERROR_TIMESTAMP
        async with self._lock:
            now = now_ms()
            info = self.cache.token_for_hmac(hmac)
            if info is None:
                return ErrorCode.delegation_token_not_found, ERROR_TIMESTAMP
            if info.expired(now):
                return ErrorCode.delegation_token_expired, ERROR_TIMESTAMP
            if not info.may_renew(principal):
                return ErrorCode.delegation_token_owner_mismatch, ERROR_TIMESTAMP
            period = self.expiry_time_ms
            if renew_period_ms > 0:
                period = min(period, renew_period_ms)
            expiry = min(info.max_timestamp, now + period)
            await self._store(info.with_expiry(expiry), hmac)
            log.info("Delegation token renewed for token: %s for owner: %s",
                     info.token_id, info.owner)
            return ErrorCode.none, expiry

    async def expire(self, principal: str, hmac: bytes, period_ms: int) -> tuple[ErrorCode, int]:
        """(error, new expiry timestamp)."""
        if not self.enabled:
            return ErrorCode.delegation_token_auth_disabled, ERROR_TIMESTAMP
        async with self._lock:
            now = now_ms()
            info = self.cache.token_for_hmac(hmac)
            if info is None:
                return ErrorCode.delegation_token_not_found, ERROR_TIMESTAMP
            if not info.may_renew(principal):
                return ErrorCode.delegation_token_owner_mismatch, ERROR_TIMESTAMP
            if period_ms < 0:  # expire at once
                await trio.to_thread.run_sync(dt.delete_token, self.broker.store, info.token_id)
                self.cache.remove(info.token_id)
                log.info("Token expired for token: %s for owner: %s", info.token_id, info.owner)
                return ErrorCode.none, now
            if info.expired(now):
                return ErrorCode.delegation_token_expired, ERROR_TIMESTAMP
            expiry = min(info.max_timestamp, _sum(now, period_ms))
            await self._store(info.with_expiry(expiry), hmac)
            log.info("Updated expiry time for token: %s for owner: %s", info.token_id, info.owner)
            return ErrorCode.none, expiry

    async def _store(self, info: TokenInformation, hmac: bytes) -> None:
        await trio.to_thread.run_sync(dt.write_token, self.broker.store, info)
        self.cache.update(info, hmac, None)

    def scram_token(self, mechanism: str, token_id: str) -> TokenCredential | None:
        """What SCRAM with ``tokenauth=true`` authenticates ``token_id`` with (None: unknown)."""
        info = self.cache.token(token_id)
        if info is None:
            return None
        owner = info.owner.partition(":")[2]  # the principal's name, as Kafka's tokenOwner()
        return TokenCredential(owner, self.cache.credential(mechanism, token_id),
                               info.expiry_timestamp)

    def tokens(self) -> list[tuple[TokenInformation, bytes]]:
        """Every token with its HMAC."""
        return [(info, self.hmac(info.token_id)) for info in self.cache.tokens()]


class TokenChangeListener(ChangeListener):
    """Applies /delegation_token/token_changes notifications to the broker's cache."""

    def __init__(self, manager: DelegationTokenManager) -> None:
        super().__init__(manager.broker.store, [dt.change_feed(manager.broker.store)])
        self.manager = manager

    def apply(self, item: str) -> bool:
        log.debug("processing token notification for tokenId: %s", item)
        self.manager.refresh_soon(item)
        self.applied += 1
        return True
