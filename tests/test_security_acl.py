"""Kafka's ACL model and the authorizer's decisions (kafkapy.security.acl, .authorizer), sans-io.

Cases follow Kafka's own AclAuthorizer and filter semantics: deny wins, implied DESCRIBE and
DESCRIBE_CONFIGS, literal/wildcard/prefixed patterns, hosts, super users, no-ACL default, and
authorizeByResourceType's domination rules.
"""

from __future__ import annotations

import pytest

from kafkapy.metadata.acl_model import (
    ANY_BINDING,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafkapy.security.authorizer import (
    AclAuthorizer,
    AuthorizerConfig,
    AuthorizerConfigError,
    operations_bit_field,
    operations_from_bit_field,
)
from kafkapy.security.principal import KafkaPrincipal

Op, Perm, RT, PT = AclOperation, PermissionType, ResourceType, PatternType
ALICE, BOB = "User:alice", "User:bob"
H1, H2 = "192.168.1.1", "192.168.1.2"


def ace(principal: str, op: AclOperation, perm: PermissionType = Perm.ALLOW, host: str = "*"):
    return AccessControlEntry(principal, host, op, perm)


def authorizer(*, supers: tuple[str, ...] = (), allow_everyone: bool = False) -> AclAuthorizer:
    return AclAuthorizer(
        AuthorizerConfig("kafka.security.authorizer.AclAuthorizer", frozenset(supers),
                         allow_everyone)
    )


def add(az: AclAuthorizer, pattern: ResourcePattern, *entries: AccessControlEntry) -> None:
    az.set_acls(pattern, az.acls_of(pattern) | set(entries))


def remove(az: AclAuthorizer, pattern: ResourcePattern, *entries: AccessControlEntry) -> None:
    az.set_acls(pattern, az.acls_of(pattern) - set(entries))


def topic(name: str, pt: PatternType = PT.LITERAL) -> ResourcePattern:
    return ResourcePattern(RT.TOPIC, name, pt)


def test_names_and_codes_are_kafkas() -> None:
    assert RT.TRANSACTIONAL_ID.kafka_name == "TransactionalId"
    assert Op.IDEMPOTENT_WRITE.kafka_name == "IdempotentWrite"
    assert Perm.parse("Allow") is Perm.ALLOW and Perm.parse("DENY") is Perm.DENY
    assert RT.parse("transactionalid") is RT.TRANSACTIONAL_ID
    assert Op.parse("DescribeConfigs") is Op.DESCRIBE_CONFIGS
    assert Op.parse("nonsense") is Op.UNKNOWN and RT.from_code(99) is RT.UNKNOWN
    # authorized operations: bit <code> per operation (READ=3, WRITE=4, DESCRIBE=8)
    assert operations_bit_field([Op.READ, Op.WRITE, Op.DESCRIBE]) == (1 << 3) | (1 << 4) | (1 << 8)
    assert operations_from_bit_field(0b100011000) == [Op.READ, Op.WRITE, Op.DESCRIBE]


@pytest.mark.parametrize(
    ("flt", "pattern", "expected"),
    [
        (ResourcePatternFilter(RT.ANY, None, PT.ANY), topic("a"), True),
        (ResourcePatternFilter(RT.GROUP, None, PT.ANY), topic("a"), False),
        (ResourcePatternFilter(RT.TOPIC, "a", PT.LITERAL), topic("a"), True),
        (ResourcePatternFilter(RT.TOPIC, "a", PT.LITERAL), topic("a", PT.PREFIXED), False),
        (ResourcePatternFilter(RT.TOPIC, "a", PT.ANY), topic("a", PT.PREFIXED), True),
        (ResourcePatternFilter(RT.TOPIC, "*", PT.LITERAL), topic("a"), False),
        # MATCH: the name itself, the wildcard and the prefixes of the name
        (ResourcePatternFilter(RT.TOPIC, "abc", PT.MATCH), topic("abc"), True),
        (ResourcePatternFilter(RT.TOPIC, "abc", PT.MATCH), topic("*"), True),
        (ResourcePatternFilter(RT.TOPIC, "abc", PT.MATCH), topic("ab", PT.PREFIXED), True),
        (ResourcePatternFilter(RT.TOPIC, "abc", PT.MATCH), topic("abcd", PT.PREFIXED), False),
        (ResourcePatternFilter(RT.TOPIC, "abc", PT.MATCH), topic("ab"), False),
    ],
)
def test_pattern_filters(flt: ResourcePatternFilter, pattern: ResourcePattern, expected: bool):
    assert flt.matches(pattern) is expected


def test_entry_filters_and_indefinite_fields() -> None:
    e = ace(ALICE, Op.READ, host=H1)
    assert AccessControlEntryFilter(None, None, Op.ANY, Perm.ANY).matches(e)
    assert AccessControlEntryFilter(ALICE, H1, Op.READ, Perm.ALLOW).matches(e)
    assert not AccessControlEntryFilter(BOB, None, Op.ANY, Perm.ANY).matches(e)
    assert not AccessControlEntryFilter(None, None, Op.WRITE, Perm.ANY).matches(e)
    assert not AccessControlEntryFilter(None, None, Op.ANY, Perm.DENY).matches(e)
    assert ResourcePatternFilter(RT.TOPIC, "a", PT.LITERAL).indefinite_field() is None
    assert ResourcePatternFilter(RT.TOPIC, "a", PT.MATCH).indefinite_field()
    assert ResourcePatternFilter(RT.TOPIC, None, PT.LITERAL).indefinite_field()


def test_binding_validation() -> None:
    good = AclBinding(topic("t"), ace(ALICE, Op.READ))
    assert good.validation_error() is None
    bad = [
        AclBinding(ResourcePattern(RT.CLUSTER, "other"), ace(ALICE, Op.ALTER)),
        AclBinding(topic(""), ace(ALICE, Op.READ)),
        AclBinding(topic("a/b"), ace(ALICE, Op.READ)),
        AclBinding(topic("t", PT.MATCH), ace(ALICE, Op.READ)),
        AclBinding(topic("t"), ace("alice", Op.READ)),
        AclBinding(topic("t"), ace(ALICE, Op.ANY)),
        AclBinding(topic("t"), ace(ALICE, Op.READ, Perm.ANY)),
    ]
    assert all(b.validation_error() for b in bad)


def test_no_acl_denies_unless_allow_everyone() -> None:
    assert not authorizer().authorize(ALICE, H1, Op.READ, RT.TOPIC, "t")
    assert authorizer(allow_everyone=True).authorize(ALICE, H1, Op.READ, RT.TOPIC, "t")
    az = authorizer(allow_everyone=True)
    add(az, topic("t"), ace(BOB, Op.READ))
    # an ACL exists for the topic: the default no longer applies
    assert not az.authorize(ALICE, H1, Op.READ, RT.TOPIC, "t")
    assert az.authorize(ALICE, H1, Op.READ, RT.TOPIC, "other")


def test_allow_deny_and_implication() -> None:
    az = authorizer()
    add(az, topic("t"), ace(ALICE, Op.READ), ace(ALICE, Op.ALTER_CONFIGS))
    assert az.authorize(ALICE, H1, Op.READ, RT.TOPIC, "t")
    assert az.authorize(KafkaPrincipal.user("alice"), H1, Op.DESCRIBE, RT.TOPIC, "t")  # by READ
    assert az.authorize(ALICE, H1, Op.DESCRIBE_CONFIGS, RT.TOPIC, "t")  # by ALTER_CONFIGS
    assert not az.authorize(ALICE, H1, Op.WRITE, RT.TOPIC, "t")
    assert not az.authorize(BOB, H1, Op.READ, RT.TOPIC, "t")
    add(az, topic("t"), ace(ALICE, Op.READ, Perm.DENY))
    assert not az.authorize(ALICE, H1, Op.READ, RT.TOPIC, "t")  # deny wins
    # the READ allow still implies DESCRIBE: denials are not implied
    assert az.authorize(ALICE, H1, Op.DESCRIBE, RT.TOPIC, "t")
    add(az, topic("t"), ace(ALICE, Op.DESCRIBE, Perm.DENY, host=H1))
    assert not az.authorize(ALICE, H1, Op.DESCRIBE, RT.TOPIC, "t")
    add(az, topic("t"), ace(ALICE, Op.WRITE), ace(ALICE, Op.ALL, Perm.DENY, host=H2))
    assert az.authorize(ALICE, H1, Op.WRITE, RT.TOPIC, "t")
    assert not az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "t")  # ALL denied from H2


def test_hosts_wildcards_and_prefixes() -> None:
    az = authorizer()
    add(az, topic("*"), ace("User:*", Op.DESCRIBE, host=H1))
    add(az, topic("pay", PT.PREFIXED), ace(ALICE, Op.WRITE))
    add(az, topic("payments-secret"), ace(ALICE, Op.WRITE, Perm.DENY))
    assert az.authorize(BOB, H1, Op.DESCRIBE, RT.TOPIC, "anything")
    assert not az.authorize(BOB, H2, Op.DESCRIBE, RT.TOPIC, "anything")
    assert az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "payments")
    assert az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "pay")
    assert not az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "pa")
    assert not az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "payments-secret")
    assert not az.authorize(ALICE, H2, Op.WRITE, RT.GROUP, "payments")  # other resource type
    remove(az, topic("pay", PT.PREFIXED), ace(ALICE, Op.WRITE))
    assert not az.authorize(ALICE, H2, Op.WRITE, RT.TOPIC, "payments")  # memo dropped on change


def test_super_users_and_authorized_operations() -> None:
    az = authorizer(supers=("User:admin",))
    add(az, topic("*"), ace("User:*", Op.ALL, Perm.DENY))
    assert az.authorize("User:admin", H1, Op.DELETE, RT.TOPIC, "t")
    add(az, ResourcePattern(RT.GROUP, "g"), ace(ALICE, Op.READ))
    ops = operations_from_bit_field(az.authorized_operations(ALICE, H1, RT.GROUP, "g"))
    assert ops == [Op.READ, Op.DESCRIBE]
    assert operations_from_bit_field(az.authorized_operations("User:admin", H1, RT.CLUSTER,
                                                              "kafka-cluster")) == sorted(
        [Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS,
         Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE])


def test_acls_listed_by_filter() -> None:
    az = authorizer()
    add(az, topic("a"), ace(ALICE, Op.READ), ace(BOB, Op.WRITE))
    add(az, topic("a", PT.PREFIXED), ace(ALICE, Op.WRITE))
    assert len(az.acls(ANY_BINDING)) == 3
    only_alice = AclBindingFilter(
        ResourcePatternFilter(RT.TOPIC, "a", PT.MATCH),
        AccessControlEntryFilter(ALICE, None, Op.ANY, Perm.ANY),
    )
    assert {b.pattern.pattern_type for b in az.acls(only_alice)} == {PT.LITERAL, PT.PREFIXED}


def test_by_resource_type_deny_dominates_prefixes() -> None:
    az = authorizer()
    g = lambda name: ResourcePattern(RT.GROUP, name, PT.PREFIXED)  # noqa: E731
    allow, deny = ace(ALICE, Op.READ, host=H1), ace(ALICE, Op.READ, Perm.DENY, host=H1)
    assert not az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)
    add(az, g("abcde"), allow)
    assert az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)
    add(az, g("abcd"), deny)
    assert not az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)
    add(az, g("abc"), allow)
    assert az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)
    add(az, g("a"), deny)
    assert not az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)
    add(az, g("ab"), allow)
    assert not az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.GROUP)


def test_by_resource_type_wildcards_all_and_super_users() -> None:
    az = authorizer(supers=("User:admin",))
    add(az, ResourcePattern(RT.GROUP, "hello", PT.PREFIXED), ace(ALICE, Op.WRITE))
    assert az.authorize_by_resource_type(ALICE, H1, Op.WRITE, RT.GROUP)
    add(az, ResourcePattern(RT.GROUP, "*"), ace(ALICE, Op.WRITE, Perm.DENY))
    assert not az.authorize_by_resource_type(ALICE, H1, Op.WRITE, RT.GROUP)
    assert az.authorize_by_resource_type("User:admin", H1, Op.WRITE, RT.GROUP)
    t = topic("sb1")
    add(az, t, ace(ALICE, Op.WRITE, Perm.DENY), ace(ALICE, Op.ALL))
    assert az.authorize_by_resource_type(ALICE, H1, Op.READ, RT.TOPIC)  # ALL grants READ
    assert not az.authorize_by_resource_type(ALICE, H1, Op.WRITE, RT.TOPIC)
    assert not az.authorize_by_resource_type(BOB, H1, Op.READ, RT.TOPIC)


def test_config_from_properties() -> None:
    assert AuthorizerConfig.from_properties({}) is None
    cfg = AuthorizerConfig.from_properties({
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin; User:CN=broker,O=x",
        "allow.everyone.if.no.acl.found": "true",
    })
    assert cfg is not None and cfg.allow_everyone_if_no_acl_found
    assert cfg.super_users == {"User:admin", "User:CN=broker,O=x"}
    for bad in (
        {"authorizer.class.name": "com.example.MyAuthorizer"},
        {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "x"},
        {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
         "allow.everyone.if.no.acl.found": "maybe"},
    ):
        with pytest.raises(AuthorizerConfigError):
            AuthorizerConfig.from_properties(bad)
