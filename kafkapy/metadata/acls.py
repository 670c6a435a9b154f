"""ACLs in Kafka's ZooKeeper layout (AclAuthorizer's ZkAclStore), through the store interface.

Each resource pattern with ACLs has one znode listing them:

    /kafka-acl/<ResourceType>/<name>                         LITERAL patterns
    /kafka-acl-extended/prefixed/<ResourceType>/<name>       PREFIXED patterns

holding ``{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",
"operation":"Read","host":"*"}, ...]}`` (Kafka's PascalCase names). A pattern whose last ACL is
removed loses its znode. Every change creates a sequential notification naming the pattern, in
the same transaction as the change:

    /kafka-acl-changes/acl_changes_N            "TOPIC:<name>" (literal patterns)
    /kafka-acl-extended-changes/acl_changes_N   {"version":1,"resourceType":"TOPIC",
                                                 "name":"<name>","patternType":"PREFIXED"}

Every broker watches both notification paths and rereads the named patterns
(kafkapy.metadata.change_notifications), so an ACL written through any broker, or by Kafka's own
tools against the same ZooKeeper, applies on all of them. Updates are read-modify-write with the
znode's version and retried on a conflicting write, as Kafka's updateResourceAcls.

Synchronous store calls: run them in a worker thread from trio code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import ClassVar

from .acl_model import (
    AccessControlEntry,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)
from .change_notifications import ChangeNotificationFeed
from .errors import BadVersionError, NodeExistsError, NoNodeError
from .store import CreateOp, DeleteOp, MetadataStore, SetOp
from .znodes import SEQUENTIAL, ZNode, dump_json, load_json

log = logging.getLogger(__name__)

LITERAL_ROOT = "/kafka-acl"
EXTENDED_ROOT = "/kafka-acl-extended"
MAX_UPDATE_RETRIES = 10  # Kafka's maxUpdateRetries
STORED_TYPES = tuple(t for t in ResourceType if t > ResourceType.ANY)


def _entry_doc(e: AccessControlEntry) -> dict[str, str]:
    return {
        "principal": e.principal,
        "permissionType": e.permission_type.kafka_name,
        "operation": e.operation.kafka_name,
        "host": e.host,
    }


def _sort_key(e: AccessControlEntry) -> tuple[str, int, int, str]:
    return (e.principal, int(e.permission_type), int(e.operation), e.host)


class AclsZNode(ZNode):
    """/kafka-acl/<Type>/<name>: the ACLs of one literal resource pattern."""

    TEMPLATE = "/kafka-acl/{resource_type}/{name}"

    def encode(self, acls: Iterable[AccessControlEntry]) -> bytes:  # type: ignore[override]
        entries = [_entry_doc(e) for e in sorted(acls, key=_sort_key)]
        return dump_json({"version": 1, "acls": entries})

    def decode(self, data: bytes) -> frozenset[AccessControlEntry]:  # type: ignore[override]
        """The ACLs of the document; ValueError for a version other than 1. Entries with an
        operation or permission type Kafka does not know are skipped (they could match nothing)."""
        if not data:
            return frozenset()
        doc = load_json(data)
        if doc.get("version") != 1:
            raise ValueError(f"ACL document version {doc.get('version')!r} is not 1")
        out = set()
        for item in doc.get("acls") or ():
            principal = str(item["principal"])
            kind, sep, name = principal.partition(":")
            if not (kind and sep and name):
                raise ValueError(f"ACL principal {principal!r} is not principalType:name")
            op = AclOperation.parse(str(item["operation"]))
            perm = PermissionType.parse(str(item["permissionType"]))
            if op in (AclOperation.UNKNOWN, AclOperation.ANY) or perm in (
                PermissionType.UNKNOWN, PermissionType.ANY
            ):
                log.warning("skipping ACL entry %s: unknown operation or permission type", item)
                continue
            out.add(AccessControlEntry(principal, str(item["host"]), op, perm))
        return frozenset(out)

    def pattern_path(self, pattern: ResourcePattern) -> str:
        return self.path(pattern.resource_type.kafka_name, pattern.name)


class ExtendedAclsZNode(AclsZNode):
    """/kafka-acl-extended/prefixed/<Type>/<name>: the ACLs of one prefixed resource pattern."""

    TEMPLATE = "/kafka-acl-extended/{pattern_type}/{resource_type}/{name}"

    def pattern_path(self, pattern: ResourcePattern) -> str:
        return self.path(
            pattern.pattern_type.name.lower(), pattern.resource_type.kafka_name, pattern.name
        )


class AclResourceTypeZNode(ZNode):
    """/kafka-acl/<Type>: the literal patterns of one resource type (empty)."""

    TEMPLATE = "/kafka-acl/{resource_type}"


class ExtendedAclResourceTypeZNode(ZNode):
    """/kafka-acl-extended/<pattern type>/<Type>: the prefixed patterns of one type (empty)."""

    TEMPLATE = "/kafka-acl-extended/{pattern_type}/{resource_type}"


class AclChangesZNode(ZNode):
    TEMPLATE = "/kafka-acl-changes"


class AclChangeNotificationZNode(ZNode):
    """/kafka-acl-changes/acl_changes_N: "<RESOURCE_TYPE>:<name>", a literal pattern changed."""

    TEMPLATE = "/kafka-acl-changes/acl_changes_"
    MODE = SEQUENTIAL
    FORMAT: ClassVar[str] = "text"

    def encode(self, pattern: ResourcePattern) -> bytes:  # type: ignore[override]
        if pattern.pattern_type != PatternType.LITERAL:
            raise ValueError("only literal resource patterns go to /kafka-acl-changes")
        return f"{pattern.resource_type.name}:{pattern.name}".encode()

    def decode(self, data: bytes) -> ResourcePattern:  # type: ignore[override]
        text = data.decode("utf-8")
        kind, sep, name = text.partition(":")
        rtype = ResourceType.parse(kind.replace("_", ""))
        if not sep or rtype in (ResourceType.UNKNOWN, ResourceType.ANY):
            raise ValueError(
                f"expected a string in format ResourceType:ResourceName but got {text!r}"
            )
        return ResourcePattern(rtype, name, PatternType.LITERAL)


class ExtendedAclChangesZNode(ZNode):
    TEMPLATE = "/kafka-acl-extended-changes"


class ExtendedAclChangeNotificationZNode(ZNode):
    """/kafka-acl-extended-changes/acl_changes_N: a prefixed pattern changed (JSON)."""

    TEMPLATE = "/kafka-acl-extended-changes/acl_changes_"
    MODE = SEQUENTIAL

    def encode(self, pattern: ResourcePattern) -> bytes:  # type: ignore[override]
        if pattern.pattern_type == PatternType.LITERAL:
            raise ValueError("literal resource patterns go to /kafka-acl-changes")
        return dump_json({
            "version": 1,
            "resourceType": pattern.resource_type.name,
            "name": pattern.name,
            "patternType": pattern.pattern_type.name,
        })

    def decode(self, data: bytes) -> ResourcePattern:  # type: ignore[override]
        doc = load_json(data)
        if int(doc.get("version", 0)) > 1:
            raise ValueError(f"ACL change event version {doc.get('version')!r} is not supported")
        rtype = ResourceType.parse(str(doc["resourceType"]).replace("_", ""))
        ptype = PatternType.parse(str(doc["patternType"]))
        if rtype in (ResourceType.UNKNOWN, ResourceType.ANY) or not ptype.specific:
            raise ValueError(f"ACL change event names no resource pattern: {doc}")
        return ResourcePattern(rtype, str(doc["name"]), ptype)


ACLS = AclsZNode()
EXTENDED_ACLS = ExtendedAclsZNode()
ACL_RESOURCE_TYPE = AclResourceTypeZNode()
EXTENDED_ACL_RESOURCE_TYPE = ExtendedAclResourceTypeZNode()
ACL_CHANGES = AclChangesZNode()
ACL_CHANGE_NOTIFICATION = AclChangeNotificationZNode()
EXTENDED_ACL_CHANGES = ExtendedAclChangesZNode()
EXTENDED_ACL_CHANGE_NOTIFICATION = ExtendedAclChangeNotificationZNode()

#: the ACL znode kinds, by the names protocol_specs/znodes.json uses
ALL: dict[str, ZNode] = {
    type(z).__name__: z
    for z in (
        ACLS, EXTENDED_ACLS, ACL_RESOURCE_TYPE, EXTENDED_ACL_RESOURCE_TYPE, ACL_CHANGES,
        ACL_CHANGE_NOTIFICATION, EXTENDED_ACL_CHANGES, EXTENDED_ACL_CHANGE_NOTIFICATION,
    )
}


# --- reading and writing -------------------------------------------------------------------------


def _node(pattern: ResourcePattern) -> AclsZNode:
    return ACLS if pattern.pattern_type == PatternType.LITERAL else EXTENDED_ACLS


def _notification(pattern: ResourcePattern) -> CreateOp:
    node = (
        ACL_CHANGE_NOTIFICATION
        if pattern.pattern_type == PatternType.LITERAL
        else EXTENDED_ACL_CHANGE_NOTIFICATION
    )
    return CreateOp(node.path(), node.encode(pattern), sequential=True)


def ensure_paths(store: MetadataStore) -> None:
    """Create the ACL roots, their per-type nodes and the change paths, as Kafka's
    createAclPaths does at startup."""
    for path in (ACL_CHANGES.path(), EXTENDED_ACL_CHANGES.path()):
        store.ensure_path(path)
    for rtype in STORED_TYPES:
        store.ensure_path(ACL_RESOURCE_TYPE.path(rtype.kafka_name))
        store.ensure_path(EXTENDED_ACL_RESOURCE_TYPE.path("prefixed", rtype.kafka_name))


def read_acls(store: MetadataStore, pattern: ResourcePattern) -> tuple[frozenset, int | None]:
    """The pattern's ACLs and its znode's version (None: no znode)."""
    got = store.get_or_none(_node(pattern).pattern_path(pattern))
    if got is None:
        return frozenset(), None
    return ACLS.decode(got[0]), got[1].version


def read_all(store: MetadataStore) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
    """Every stored pattern with its ACLs (Kafka's loadAllAcls); unknown resource types and
    unreadable documents are logged and skipped."""
    out: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
    for root, ptype in (
        (LITERAL_ROOT, PatternType.LITERAL),
        (f"{EXTENDED_ROOT}/prefixed", PatternType.PREFIXED),
    ):
        for kind in _children(store, root):
            rtype = ResourceType.parse(kind)
            if rtype in (ResourceType.UNKNOWN, ResourceType.ANY):
                log.warning("ignoring ACLs of unknown resource type %s/%s", root, kind)
                continue
            for name in _children(store, f"{root}/{kind}"):
                pattern = ResourcePattern(rtype, name, ptype)
                try:
                    acls, _ = read_acls(store, pattern)
                except (ValueError, KeyError, TypeError) as e:
                    log.error("ignoring unreadable ACLs of %s: %s", pattern, e)
                    continue
                if acls:
                    out[pattern] = acls
    return out


def _children(store: MetadataStore, path: str) -> list[str]:
    try:
        return store.children(path)
    except NoNodeError:
        return []


def update_acls(
    store: MetadataStore,
    pattern: ResourcePattern,
    change: Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]],
) -> tuple[frozenset[AccessControlEntry], frozenset[AccessControlEntry]]:
    """Apply ``change`` to the pattern's ACLs; returns (before, after). The write is conditional
    on the version read and retried on a conflict; a changed set is written together with its
    change notification (the znode is deleted when no ACL is left). RuntimeError after
    MAX_UPDATE_RETRIES conflicts in a row."""
    path = _node(pattern).pattern_path(pattern)
    for _ in range(MAX_UPDATE_RETRIES + 1):
        current, version = read_acls(store, pattern)
        new = frozenset(change(current))
        if new == current:
            return current, new
        if not new:
            op: CreateOp | SetOp | DeleteOp = DeleteOp(path, version if version is not None else -1)
        elif version is None:
            store.ensure_path(path.rsplit("/", 1)[0])
            op = CreateOp(path, ACLS.encode(new))
        else:
            op = SetOp(path, ACLS.encode(new), version)
        try:
            store.multi([op, _notification(pattern)])
        except (BadVersionError, NodeExistsError, NoNodeError):
            continue  # another writer got there first: read again
        return current, new
    raise RuntimeError(
        f"Failed to update ACLs for {pattern} after trying a maximum of {MAX_UPDATE_RETRIES} times"
    )


def change_feeds(store: MetadataStore) -> list[ChangeNotificationFeed]:
    """The two ACL change notification feeds (literal, prefixed); each poll gives
    (pattern, ACLs) pairs for the patterns named since the last poll."""

    def read(s: MetadataStore, pattern: ResourcePattern) -> tuple[ResourcePattern, frozenset]:
        try:
            return pattern, read_acls(s, pattern)[0]
        except (ValueError, KeyError, TypeError) as e:
            log.error("ignoring unreadable ACLs of %s: %s", pattern, e)
            return pattern, frozenset()

    return [
        ChangeNotificationFeed(store, ACL_CHANGES.path(), ACL_CHANGE_NOTIFICATION.sequence,
                               ACL_CHANGE_NOTIFICATION.decode, read),
        ChangeNotificationFeed(store, EXTENDED_ACL_CHANGES.path(),
                               EXTENDED_ACL_CHANGE_NOTIFICATION.sequence,
                               EXTENDED_ACL_CHANGE_NOTIFICATION.decode, read),
    ]
