"""Delegation tokens in Kafka's ZooKeeper layout (Kafka 3.x's DelegationTokenManagerZk and
ZkData), the same tree in the embedded store.

* ``/delegation_token/tokens/<token id>``: the token's information as JSON, version 3:
  ``owner``, ``tokenRequester`` and each of ``renewers`` as ``Type:name`` sanitized (URL-encoded,
  ``User%3Aalice``), ``issueTimestamp``, ``maxTimestamp``, ``expiryTimestamp`` (ms), ``tokenId``.
  The HMAC is not stored: every broker computes it from ``delegation.token.secret.key`` and
  derives the token's SCRAM credentials from it, as Kafka's brokers do.
* ``/delegation_token/token_changes/token_change_N``: a sequential change notification whose data
  is the token id; every broker rereads that token (gone: removed from its cache).

:class:`TokenInformation` is Kafka's TokenInformation. Synchronous store calls: run them in a
worker thread from trio code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from .change_notifications import ChangeNotificationFeed
from .client_quotas import desanitize, sanitize
from .errors import NoNodeError
from .store import CreateOp, DeleteOp, MetadataStore, SetOp
from .znodes import PERSISTENT, SEQUENTIAL, ZNode, dump_json, load_json

CURRENT_VERSION = 3


@dataclass(frozen=True)
class TokenInformation:
    """A token's facts (Kafka's TokenInformation); principals as ``Type:name`` text, timestamps
    in ms since the epoch."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...] = field(default=())
    issue_timestamp: int = 0
    max_timestamp: int = 0
    expiry_timestamp: int = 0

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's ownerOrRenewer (which DescribeDelegationToken filters by): the owner, the
        requester or a renewer."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def may_renew(self, principal: str) -> bool:
        """Kafka's allowedToRenew (renew and expire): the owner or a renewer."""
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms

    def with_expiry(self, expiry_timestamp: int) -> TokenInformation:
        return replace(self, expiry_timestamp=expiry_timestamp)


def _principal(stored: object) -> str:
    """A sanitized ``Type:name`` back to text; ValueError when it is not one (Kafka's
    SecurityUtils.parseKafkaPrincipal)."""
    text = desanitize(str(stored))
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"expected a string in format principalType:principalName: {text!r}")
    return text


class DelegationTokenAuthZNode(ZNode):
    TEMPLATE = "/delegation_token"


class DelegationTokensZNode(ZNode):
    TEMPLATE = "/delegation_token/tokens"


class DelegationTokenInfoZNode(ZNode):
    """/delegation_token/tokens/<token id>: the token's information (JSON, version 3)."""

    TEMPLATE = "/delegation_token/tokens/{token_id}"
    MODE = PERSISTENT

    def encode(self, info: TokenInformation) -> bytes:  # type: ignore[override]
        return dump_json({
            "version": CURRENT_VERSION,
            "owner": sanitize(info.owner),
            "tokenRequester": sanitize(info.requester),
            "renewers": [sanitize(r) for r in info.renewers],
            "issueTimestamp": info.issue_timestamp,
            "maxTimestamp": info.max_timestamp,
            "expiryTimestamp": info.expiry_timestamp,
            "tokenId": info.token_id,
        })

    def decode(self, data: bytes) -> TokenInformation:  # type: ignore[override]
        """ValueError (or KeyError, TypeError) for a document Kafka would not read."""
        doc = load_json(data)
        version = int(doc["version"])
        if not 0 < version <= CURRENT_VERSION:
            raise ValueError(f"delegation token version {version} is not supported")
        owner = _principal(doc["owner"])
        requester = _principal(doc["tokenRequester"]) if version >= 3 else owner
        renewers = tuple(_principal(r) for r in doc["renewers"])
        return TokenInformation(
            token_id=str(doc["tokenId"]),
            owner=owner,
            requester=requester,
            renewers=renewers,
            issue_timestamp=int(doc["issueTimestamp"]),
            max_timestamp=int(doc["maxTimestamp"]),
            expiry_timestamp=int(doc["expiryTimestamp"]),
        )


class DelegationTokenChangesZNode(ZNode):
    TEMPLATE = "/delegation_token/token_changes"


class DelegationTokenChangeNotificationZNode(ZNode):
    """/delegation_token/token_changes/token_change_N: the token id whose token changed."""

    TEMPLATE = "/delegation_token/token_changes/token_change_"
    MODE = SEQUENTIAL
    FORMAT: ClassVar[str] = "text"

    def encode(self, token_id: str) -> bytes:  # type: ignore[override]
        return token_id.encode()

    def decode(self, data: bytes) -> str:  # type: ignore[override]
        return data.decode("utf-8")


TOKEN_AUTH = DelegationTokenAuthZNode()
TOKENS = DelegationTokensZNode()
TOKEN_INFO = DelegationTokenInfoZNode()
TOKEN_CHANGES = DelegationTokenChangesZNode()
TOKEN_CHANGE_NOTIFICATION = DelegationTokenChangeNotificationZNode()

#: the delegation token znode kinds, by the names protocol_specs/znodes.json uses
ALL: dict[str, ZNode] = {
    type(z).__name__: z
    for z in (TOKEN_AUTH, TOKENS, TOKEN_INFO, TOKEN_CHANGES, TOKEN_CHANGE_NOTIFICATION)
}


def ensure_paths(store: MetadataStore) -> None:
    """Kafka's createDelegationTokenPaths."""
    store.ensure_path(TOKEN_CHANGES.path())
    store.ensure_path(TOKENS.path())


def read_token(store: MetadataStore, token_id: str) -> TokenInformation | None:
    got = store.get_or_none(TOKEN_INFO.path(token_id))
    return None if got is None else TOKEN_INFO.decode(got[0])


def token_ids(store: MetadataStore) -> list[str]:
    try:
        return store.children(TOKENS.path())
    except NoNodeError:
        return []


def _notification(token_id: str) -> CreateOp:
    return CreateOp(
        TOKEN_CHANGE_NOTIFICATION.path(), TOKEN_CHANGE_NOTIFICATION.encode(token_id),
        sequential=True,
    )


def write_token(store: MetadataStore, info: TokenInformation) -> None:
    """Create or replace the token's znode, with its change notification (one write)."""
    path = TOKEN_INFO.path(info.token_id)
    data = TOKEN_INFO.encode(info)
    op: CreateOp | SetOp = SetOp(path, data) if store.exists(path) else CreateOp(path, data)
    store.multi([op, _notification(info.token_id)])


def delete_token(store: MetadataStore, token_id: str) -> None:
    """Delete the token's znode (if there) and post its change notification."""
    path = TOKEN_INFO.path(token_id)
    ops: list[CreateOp | DeleteOp] = [_notification(token_id)]
    if store.exists(path) is not None:
        ops.insert(0, DeleteOp(path))
    try:
        store.multi(ops)
    except NoNodeError:  # another broker deleted it first
        store.multi([_notification(token_id)])


def change_feed(store: MetadataStore) -> ChangeNotificationFeed:
    """Each poll gives the ids of the tokens changed since the last one (the reader rereads each
    token itself, in order with its own writes)."""

    def read(s: MetadataStore, token_id: str) -> str:
        return token_id

    return ChangeNotificationFeed(
        store, TOKEN_CHANGES.path(), TOKEN_CHANGE_NOTIFICATION.sequence,
        TOKEN_CHANGE_NOTIFICATION.decode, read,
    )
