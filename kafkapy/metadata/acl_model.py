"""Kafka's ACL data model: resource types, operations, pattern and permission types with Kafka's
codes and names, resource patterns, access control entries, bindings and the filters that match
them. The documents under /kafka-acl (kafkapy.metadata.acls) hold these; the authorizer
(kafkapy.security.authorizer) decides from them.

Codes are the wire values of CreateAcls/DescribeAcls/DeleteAcls and of the authorized-operations
bit fields; names are Kafka's PascalCase ones (``TransactionalId``, ``IdempotentWrite``,
``Allow``) as stored in ZooKeeper, parsed as Kafka's SecurityUtils parses them (the PascalCase name
or the same without case, e.g. ``TOPIC``, ``transactionalid``).

Semantics mirrored from Kafka's clients (ResourcePatternFilter, AccessControlEntryFilter):

* a LITERAL pattern names one resource, ``*`` meaning every resource of its type; a PREFIXED
  pattern every resource whose name starts with it;
* a filter matches a pattern when its type is ANY or equal, its pattern type ANY, MATCH or equal,
  and its name is None (any) or, for ANY/equal pattern types, equal; a MATCH filter with a name
  matches the literal pattern of that name, the literal ``*`` and every prefixed pattern the name
  starts with;
* an entry filter matches when each of principal/host is None or equal, and operation/permission
  are ANY or equal.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

CLUSTER_NAME = "kafka-cluster"  # the one name of the cluster resource
WILDCARD_RESOURCE = "*"
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


class _Named(enum.IntEnum):
    """An enum with Kafka's PascalCase names and SecurityUtils-style parsing."""

    @property
    def kafka_name(self) -> str:
        """Kafka's PascalCase name (``TransactionalId``)."""
        return _pascal(self.name)

    @classmethod
    def parse(cls, text: str) -> _Named:
        """The member named ``text`` (PascalCase, or any case without underscores); UNKNOWN for
        anything else, as Kafka's SecurityUtils."""
        key = text.strip()
        for member in cls:
            if key == member.kafka_name or key.upper() == member.kafka_name.upper():
                return member
        return cls(0)  # UNKNOWN

    @classmethod
    def from_code(cls, code: int) -> _Named:
        try:
            return cls(code)
        except ValueError:
            return cls(0)  # UNKNOWN


class ResourceType(_Named):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class AclOperation(_Named):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class PatternType(_Named):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def specific(self) -> bool:
        """LITERAL or PREFIXED: a pattern an ACL can be stored under."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class PermissionType(_Named):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# --- patterns, entries, bindings ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    """A resource an ACL is stored under: a type, a name and LITERAL or PREFIXED."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
            f"patternType={self.pattern_type.name})"
        )


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """Who (principal ``Type:name``, ``User:*`` for everyone), from where (host, ``*``), may or
    may not (permission) do what (operation)."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: PermissionType

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission_type.name})"
        )


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def validation_error(self) -> str | None:
        """Why this binding cannot be stored (None when it can): unknown or filter-only values,
        a bad principal, a cluster name other than kafka-cluster, an empty name or one with '/'
        (it would not fit a znode name), as Kafka's brokers refuse them."""
        p, e = self.pattern, self.entry
        if p.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            return f"Invalid resource type {p.resource_type.name}"
        if not p.pattern_type.specific:
            return f"Invalid pattern type {p.pattern_type.name}: only LITERAL and PREFIXED ACLs"
        if e.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
            return f"Invalid operation {e.operation.name}"
        if e.permission_type in (PermissionType.UNKNOWN, PermissionType.ANY):
            return f"Invalid permission type {e.permission_type.name}"
        kind, sep, name = (e.principal or "").partition(":")
        if not sep:  # Kafka's SecurityUtils.parseKafkaPrincipal
            return (f"Could not parse principal from `{e.principal}` (no colon is present "
                    "separating the principal type from the principal name)")
        if not kind or not name:
            return f"Invalid principal {e.principal!r}: expected principalType:principalName"
        if e.host is None or not e.host:
            return "Invalid empty host"
        if p.resource_type == ResourceType.CLUSTER and p.name != CLUSTER_NAME:
            return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        if not p.name:
            return "Invalid empty resource name"
        if "/" in p.name or "\x00" in p.name or p.name in (".", ".."):
            return f"ACL binding contains invalid resource name: {p.name}"
        return None


# --- filters --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={name}, "
            f"patternType={self.pattern_type.name})"
        )

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        pt = self.pattern_type
        if pt not in (PatternType.ANY, PatternType.MATCH) and pt != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if pt == PatternType.ANY or pt == pattern.pattern_type:
            return self.name == pattern.name
        # MATCH: the literal name, the wildcard, and every prefix of the name
        if pattern.pattern_type == PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        return self.name.startswith(pattern.name)

    def indefinite_field(self) -> str | None:
        """Why this filter may match more than one pattern (None: at most one)."""
        if self.resource_type == ResourceType.ANY:
            return "Resource type is ANY."
        if self.resource_type == ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type == PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type == PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        return None


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: PermissionType

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != entry.operation:
            return False
        return self.permission_type in (PermissionType.ANY, entry.permission_type)


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter
    entry: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)

    def unknown_element(self) -> str | None:
        """The first UNKNOWN value of the filter (Kafka refuses such filters), or None."""
        for label, value in (
            ("resource type", self.pattern.resource_type),
            ("pattern type", self.pattern.pattern_type),
            ("operation", self.entry.operation),
            ("permission type", self.entry.permission_type),
        ):
            if int(value) == 0:
                return f"the filter's {label} is UNKNOWN"
        return None


ANY_BINDING = AclBindingFilter(
    ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
    AccessControlEntryFilter(None, None, AclOperation.ANY, PermissionType.ANY),
)
