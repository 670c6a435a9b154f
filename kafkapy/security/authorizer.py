"""The ACL authorizer's decision function, as Kafka's AclAuthorizer (ZooKeeper mode) decides.

Pure and without I/O: :class:`AclAuthorizer` holds the ACLs of every resource pattern (fed by the
server from the metadata store, kafkapy.metadata.acls) and answers "may this principal, from this
host, perform this operation on this resource?":

* a principal listed in ``super.users`` may do anything;
* the ACLs that apply to a resource are those of its literal name, of the literal wildcard ``*``
  of its type, and of every prefixed pattern its name starts with;
* when none applies, the answer is ``allow.everyone.if.no.acl.found`` (default false);
* otherwise a matching DENY wins over everything; failing that a matching ALLOW is needed. An
  entry matches when its principal is the requester's or ``User:*``, its host the client's
  address or ``*``, and its operation the one asked for or ALL. ALLOW entries also imply:
  DESCRIBE is granted by READ, WRITE, DELETE or ALTER, DESCRIBE_CONFIGS by ALTER_CONFIGS
  (implication never applies to DENY: denying READ does not deny DESCRIBE).

:meth:`AclAuthorizer.authorize_by_resource_type` answers "is there any resource of this type the
principal may perform the operation on?" (Kafka's authorizeByResourceType, used for idempotent
producers without a transactional id), and :meth:`AclAuthorizer.authorized_operations` the
bit field of operations Metadata, DescribeGroups and DescribeCluster report.

Decisions are memoized per (principal, host, operation, resource) until the ACLs change, so a
request that names the same topics over and over costs a dictionary lookup.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafkapy.metadata.acl_model import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.protocol.errors import ErrorCode

from .principal import parse_principal

log = logging.getLogger("kafkapy.authorizer")

#: authorizer.class.name values that mean Kafka's built-in ACL authorizer
BUILT_IN_AUTHORIZERS = (
    "kafka.security.authorizer.AclAuthorizer",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
)

_DENY, _ALLOW, _ALL = PermissionType.DENY, PermissionType.ALLOW, AclOperation.ALL
_ALLOWED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    op: frozenset({op, _ALL}) for op in AclOperation
}
_ALLOWED_BY[AclOperation.DESCRIBE] = frozenset({
    AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
    AclOperation.ALTER, _ALL,
})
_ALLOWED_BY[AclOperation.DESCRIBE_CONFIGS] = frozenset({
    AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, _ALL,
})
_MEMO_LIMIT = 100_000  # decisions remembered before the memo starts afresh


# What an ACL on each resource type can grant (Kafka's AclEntry.supportedOperations); the order
# is irrelevant, authorized-operation fields are bit sets.
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
        AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    }),
    ResourceType.GROUP: frozenset({  # the configs ones: group configs (KIP-848), as Kafka 4.4
        AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
    }),
    ResourceType.CLUSTER: frozenset({
        AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
        AclOperation.DESCRIBE,
    }),
    ResourceType.TRANSACTIONAL_ID: frozenset({AclOperation.DESCRIBE, AclOperation.WRITE}),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS}),
}

# The error a request gets when it may not touch a resource of each type.
AUTHORIZATION_ERRORS: dict[ResourceType, ErrorCode] = {
    ResourceType.TOPIC: ErrorCode.topic_authorization_failed,
    ResourceType.GROUP: ErrorCode.group_authorization_failed,
    ResourceType.CLUSTER: ErrorCode.cluster_authorization_failed,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.transactional_id_authorization_failed,
    ResourceType.DELEGATION_TOKEN: ErrorCode.delegation_token_authorization_failed,
}


def operations_bit_field(operations: Iterable[AclOperation]) -> int:
    """Kafka's 32-bit authorized-operations field: bit ``code`` set for each operation."""
    value = 0
    for op in operations:
        value |= 1 << int(op)
    return value


def operations_from_bit_field(value: int) -> list[AclOperation]:
    """The operations whose bits are set (unknown bits ignored), in code order."""
    return [op for op in AclOperation if op > AclOperation.ALL and value >> int(op) & 1]



class AuthorizerConfigError(ValueError):
    """An authorizer setting is invalid (one line naming the key)."""


@dataclass(frozen=True, slots=True)
class AuthorizerConfig:
    """``authorizer.class.name``, ``super.users`` and ``allow.everyone.if.no.acl.found``."""

    class_name: str
    super_users: frozenset[str] = frozenset()  # principals as ``Type:name``
    allow_everyone_if_no_acl_found: bool = False

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> AuthorizerConfig | None:
        """The authorizer the broker properties configure; None when none is (everything is
        then allowed, as in Kafka). AuthorizerConfigError for a class kafkapy does not have or a
        malformed value."""
        class_name = (props.get("authorizer.class.name") or "").strip()
        if not class_name:
            return None
        if class_name not in BUILT_IN_AUTHORIZERS:
            raise AuthorizerConfigError(
                f"Invalid value {class_name!r} for configuration authorizer.class.name: kafkapy "
                f"has Kafka's built-in ACL authorizer, named {' or '.join(BUILT_IN_AUTHORIZERS)}"
            )
        supers = set()
        for item in (props.get("super.users") or "").split(";"):
            if not item.strip():
                continue
            try:
                supers.add(str(parse_principal(item.strip())))
            except ValueError as e:
                raise AuthorizerConfigError(
                    f"Invalid value {props['super.users']!r} for configuration super.users: {e}"
                ) from None
        flag = (props.get("allow.everyone.if.no.acl.found") or "false").strip().lower()
        if flag not in ("true", "false"):
            raise AuthorizerConfigError(
                f"Invalid value {flag!r} for configuration allow.everyone.if.no.acl.found: "
                "expected true or false"
            )
        return cls(class_name, frozenset(supers), flag == "true")


class AclAuthorizer:
    """Kafka's ACL decisions over an in-memory copy of the ACLs (see the module doc)."""

    def __init__(self, config: AuthorizerConfig) -> None:
        self.config = config
        self.super_users = config.super_users
        self.allow_everyone = config.allow_everyone_if_no_acl_found
        self._acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        self._literal: dict[tuple[ResourceType, str], frozenset[AccessControlEntry]] = {}
        self._prefixed: dict[ResourceType, dict[str, frozenset[AccessControlEntry]]] = {}
        self._memo: dict[tuple[str, str, AclOperation, ResourceType, str], bool] = {}

    # -- the ACLs ---------------------------------------------------------------------------------
    def set_acls(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        """Replace the ACLs of one resource pattern (none: the pattern has no ACLs left)."""
        acls = frozenset(entries)
        if self._acls.get(pattern, frozenset()) == acls:
            return
        if pattern.pattern_type == PatternType.LITERAL:
            index: dict = self._literal
            key: object = (pattern.resource_type, pattern.name)
        else:
            index = self._prefixed.setdefault(pattern.resource_type, {})
            key = pattern.name
        if acls:
            self._acls[pattern] = acls
            index[key] = acls
        else:
            self._acls.pop(pattern, None)
            index.pop(key, None)
        self._memo.clear()

    def replace_all(self, acls: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> None:
        """Start over from a complete set of ACLs (a reload from the store)."""
        for pattern in set(self._acls) - set(acls):
            self.set_acls(pattern, ())
        for pattern, entries in acls.items():
            self.set_acls(pattern, entries)

    def acls_of(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        return self._acls.get(pattern, frozenset())

    def patterns(self) -> list[ResourcePattern]:
        return list(self._acls)

    def acls(self, flt: AclBindingFilter) -> list[AclBinding]:
        """Every ACL binding the filter matches (DescribeAcls, DeleteAcls)."""
        out = []
        for pattern, entries in self._acls.items():
            if not flt.pattern.matches(pattern):
                continue
            out.extend(AclBinding(pattern, e) for e in entries if flt.entry.matches(e))
        return out

    # -- decisions --------------------------------------------------------------------------------
    def authorize(
        self,
        principal: object,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """May ``principal`` (``Type:name`` or a KafkaPrincipal) from ``host`` (the client's IP
        address) perform ``operation`` on the literal resource ``name`` of ``resource_type``?"""
        who = str(principal)
        key = (who, host, operation, resource_type, name)
        memo = self._memo
        got = memo.get(key)
        if got is None:
            got = self._decide(who, host, operation, resource_type, name)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[key] = got
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "principal=%s is %s operation=%s from host=%s on resource=%s:LITERAL:%s",
                    who, "allowed" if got else "denied", operation.kafka_name, host,
                    resource_type.kafka_name, name,
                )
        return got

    def _applicable(self, resource_type: ResourceType, name: str) -> list[frozenset]:
        """The ACL sets that apply to the literal resource: its own, the wildcard's and those
        of the prefixed patterns its name starts with."""
        found = []
        literal = self._literal
        own = literal.get((resource_type, name))
        if own:
            found.append(own)
        if name != WILDCARD_RESOURCE:
            wild = literal.get((resource_type, WILDCARD_RESOURCE))
            if wild:
                found.append(wild)
        prefixed = self._prefixed.get(resource_type)
        if prefixed:
            if len(prefixed) < len(name):
                found.extend(acls for p, acls in prefixed.items() if name.startswith(p))
            else:
                for end in range(1, len(name) + 1):
                    acls = prefixed.get(name[:end])
                    if acls:
                        found.append(acls)
        return found

    def _decide(
        self, who: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if who in self.super_users:
            return True
        applicable = self._applicable(resource_type, name)
        if not applicable:
            return self.allow_everyone
        allowing = _ALLOWED_BY[operation]
        allowed = False
        for acls in applicable:
            for e in acls:
                if (
                    (e.principal == who or e.principal == WILDCARD_PRINCIPAL)
                    and (e.host == host or e.host == WILDCARD_HOST)
                ):
                    if e.permission_type == _DENY:
                        if e.operation == operation or e.operation == _ALL:
                            return False
                    elif e.operation in allowing:
                        allowed = True
        return allowed

    def authorized_operations(
        self, principal: object, host: str, resource_type: ResourceType, name: str
    ) -> int:
        """The bit field of the operations supported on the resource type that the principal
        may perform on the resource (Kafka's authorizedOperations)."""
        return operations_bit_field(
            op
            for op in SUPPORTED_OPERATIONS[resource_type]
            if self.authorize(principal, host, op, resource_type, name)
        )

    def authorize_by_resource_type(
        self, principal: object, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """May the principal perform ``operation`` on at least one resource of the type? Kafka's
        rules: a literal wildcard DENY refuses; with allow.everyone.if.no.acl.found anything else
        is allowed; else some ALLOW (literal or prefixed) must not be covered by a DENY (a literal
        deny of the same name or a prefixed deny of one of its prefixes). Operations match
        exactly or through ALL; there is no implication here, as in Kafka."""
        who = str(principal)
        if who in self.super_users:
            return True
        sets: dict[tuple[PermissionType, PatternType], set[str]] = {
            (perm, pt): set()
            for perm in (_DENY, _ALLOW)
            for pt in (PatternType.LITERAL, PatternType.PREFIXED)
        }
        for pattern, entries in self._acls.items():
            if pattern.resource_type != resource_type:
                continue
            for e in entries:
                if (
                    (e.principal == who or e.principal == WILDCARD_PRINCIPAL)
                    and (e.host == host or e.host == WILDCARD_HOST)
                    and (e.operation == operation or e.operation == _ALL)
                ):
                    sets[(e.permission_type, pattern.pattern_type)].add(pattern.name)
        deny_literals = sets[(_DENY, PatternType.LITERAL)]
        deny_prefixes = sets[(_DENY, PatternType.PREFIXED)]
        if WILDCARD_RESOURCE in deny_literals:
            return False
        if self.allow_everyone:
            return True

        def dominated(name: str) -> bool:
            return any(name[:end] in deny_prefixes for end in range(1, len(name) + 1))

        if any(not dominated(p) for p in sets[(_ALLOW, PatternType.PREFIXED)]):
            return True
        return any(
            name == WILDCARD_RESOURCE or (name not in deny_literals and not dominated(name))
            for name in sets[(_ALLOW, PatternType.LITERAL)]
        )
