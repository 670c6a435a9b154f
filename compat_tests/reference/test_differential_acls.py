"""Differential sessions of ACLs, with and without an authorizer: CreateAcls, DescribeAcls with
filters, DeleteAcls and what a DENY does to a client's Produce, Fetch and Metadata, each asked
raw (every field of the answer) of Apache Kafka 4.4 and of kafkapy.

With an authorizer: a pair of brokers of this module's own (Kafka's StandardAuthorizer, kafkapy's
built-in one, both with allow.everyone.if.no.acl.found=true, so that the plaintext clients,
User:ANONYMOUS, are denied only what an ACL denies). Without: the shared pair, which has none
and answers SECURITY_DISABLED. Differences not in known_differences.py fail the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.reference.conftest import SHARED_CONFIG, _differentials
from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.kafka_broker import NODE_ID, ReferenceKafka
from compat_tests.reference.observe import (
    create_topic,
    entity_obs,
    produce_batch,
    produce_ok,
    raw,
)
from kafkapy.testing import BrokerProcess

AUTHORIZERS = {
    "kafka": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafkapy": "kafka.security.authorizer.AclAuthorizer",
}
TOPIC_RESOURCE, GROUP_RESOURCE, ANY_RESOURCE = 2, 3, 1
LITERAL, PREFIXED, MATCH, ANY_PATTERN = 3, 4, 2, 1
WRITE, READ, DESCRIBE, ANY_OP = 4, 3, 8, 1
DENY, ALLOW, ANY_PERMISSION = 2, 3, 1
ANONYMOUS = "User:ANONYMOUS"


@pytest.fixture(scope="module")
def secured_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    settings = {**SHARED_CONFIG, "allow.everyone.if.no.acl.found": "true"}
    base = Path(tmp_path_factory.mktemp("acls"))
    kafka = ReferenceKafka(base / "kafka",
                           {**settings, "authorizer.class.name": AUTHORIZERS["kafka"]})
    kafkapy = BrokerProcess(base / "kafkapy", {
        **settings, "broker.id": str(NODE_ID), "authorizer.class.name": AUTHORIZERS["kafkapy"]})
    try:
        kafka.start()
        kafkapy.start()
        pair = Differential(Target("kafka", kafka.bootstrap, kafka.cluster_id, NODE_ID),
                            Target("kafkapy", kafkapy.bootstrap, None, NODE_ID))
        _differentials.append(pair)  # in the run's summary
        yield pair
    finally:
        kafka.stop()
        assert kafkapy.stop() in (0, None), kafkapy.log_text()[-3000:]


def _create(target: Target, *bindings: tuple[int, str, int, int, int]) -> Any:
    from kio.schema.create_acls.v3.request import AclCreation, CreateAclsRequest

    with raw(target) as client:
        return client.request(CreateAclsRequest(creations=tuple(
            AclCreation(resource_type=rt, resource_name=name, resource_pattern_type=pattern,
                        principal=ANONYMOUS, host="*", operation=op, permission_type=perm)
            for rt, name, pattern, op, perm in bindings)))


def _describe(target: Target, resource_type: int, name: str | None, pattern: int) -> Any:
    from kio.schema.describe_acls.v3.request import DescribeAclsRequest

    with raw(target) as client:
        return client.request(DescribeAclsRequest(
            resource_type_filter=resource_type, resource_name_filter=name,
            pattern_type_filter=pattern, principal_filter=None, host_filter=None,
            operation=ANY_OP, permission_type=ANY_PERMISSION))


def _delete(target: Target, resource_type: int, name: str | None, pattern: int) -> Any:
    from kio.schema.delete_acls.v3.request import DeleteAclsFilter, DeleteAclsRequest

    with raw(target) as client:
        return client.request(DeleteAclsRequest(filters=(DeleteAclsFilter(
            resource_type_filter=resource_type, resource_name_filter=name,
            pattern_type_filter=pattern, principal_filter=ANONYMOUS, host_filter=None,
            operation=ANY_OP, permission_type=ANY_PERMISSION),)))


def _metadata(target: Target, topic: str) -> Any:
    import uuid

    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    with raw(target) as client:
        resp = client.request(MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=topic),),
            allow_auto_topic_creation=False, include_topic_authorized_operations=True))
    return entity_obs(resp.topics, drop={"topic_id", "partitions"})


def _sorted_resources(resp: Any) -> list[Any]:
    """Resources and their ACLs in a fixed order (Kafka's StandardAuthorizer keeps no order)."""
    resources = entity_obs(resp.resources)
    for r in resources:
        r["acls"] = sorted(r["acls"], key=lambda a: sorted(a.items()))
    return sorted(resources,
                  key=lambda r: (r["resource_type"], r["resource_name"], r["pattern_type"]))


def acls_enforced(target: Target) -> dict[str, Any]:
    create_topic(target, "diff-acl-denied")
    create_topic(target, "diff-acl-open")
    out: dict[str, Any] = {"create": entity_obs(_create(
        target,
        (TOPIC_RESOURCE, "diff-acl-denied", LITERAL, WRITE, DENY),
        (TOPIC_RESOURCE, "diff-acl-denied", LITERAL, DESCRIBE, ALLOW),
        (TOPIC_RESOURCE, "diff-acl-pre", PREFIXED, READ, DENY),
        (GROUP_RESOURCE, "diff-acl-group", LITERAL, READ, ALLOW),
    ))}
    # a refused creation: no principal of the form Type:name
    out["create_bad_principal"] = entity_obs(_create_raw_principal(target, "nobody"))
    out["describe_topic_literal"] = _sorted_resources(
        _describe(target, TOPIC_RESOURCE, "diff-acl-denied", LITERAL))
    out["describe_match"] = _sorted_resources(
        _describe(target, TOPIC_RESOURCE, "diff-acl-pre-x", MATCH))
    out["describe_any"] = _sorted_resources(_describe(target, ANY_RESOURCE, None, ANY_PATTERN))
    denied = produce_batch(target, "diff-acl-denied", [(1_700_000_000_000, b"x")])
    open_ = produce_ok(target, "diff-acl-open", [(1_700_000_000_000, b"x")])
    out["produce_denied"] = entity_obs(denied.responses, drop={"partition_responses"}), [
        entity_obs(p, drop={"base_offset", "log_append_time", "log_start_offset"})
        for t in denied.responses for p in t.partition_responses]
    out["produce_open"] = [p.error_code for t in open_.responses for p in t.partition_responses]
    out["metadata_denied"] = _metadata(target, "diff-acl-denied")
    deleted = _delete(target, ANY_RESOURCE, None, ANY_PATTERN)
    out["delete_all"] = [sorted(entity_obs(r.matching_acls),
                                key=lambda a: (a["resource_type"], a["resource_name"],
                                               a["operation"], a["permission_type"]))
                         for r in deleted.filter_results]
    out["delete_errors"] = [r.error_code for r in deleted.filter_results]
    out["describe_after_delete"] = _sorted_resources(
        _describe(target, ANY_RESOURCE, None, ANY_PATTERN))
    return out


def _create_raw_principal(target: Target, principal: str) -> Any:
    from kio.schema.create_acls.v3.request import AclCreation, CreateAclsRequest

    with raw(target) as client:
        return client.request(CreateAclsRequest(creations=(AclCreation(
            resource_type=TOPIC_RESOURCE, resource_name="diff-acl-bad",
            resource_pattern_type=LITERAL, principal=principal, host="*", operation=READ,
            permission_type=ALLOW),)))


def acls_without_authorizer(target: Target) -> dict[str, Any]:
    return {
        "create": entity_obs(_create(target, (TOPIC_RESOURCE, "diff-noauth", LITERAL, READ,
                                              ALLOW))),
        "describe": entity_obs(_describe(target, ANY_RESOURCE, None, ANY_PATTERN)),
        "delete": entity_obs(_delete(target, ANY_RESOURCE, None, ANY_PATTERN)),
    }


def test_acls_with_an_authorizer(secured_pair: Differential) -> None:
    outcome = secured_pair.check("acls_enforced", acls_enforced)
    assert outcome.observations > 30


def test_acls_without_an_authorizer(differential: Differential) -> None:
    outcome = differential.check("acls_without_authorizer", acls_without_authorizer)
    assert outcome.observations > 5
