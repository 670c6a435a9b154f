"""Authorization for request handlers: Kafka's AuthHelper over the broker's authorizer.

``broker.authorizer`` is an :class:`~kafkapy.security.authorizer.AclAuthorizer` when
``authorizer.class.name`` names Kafka's built-in authorizer, else None: then everything is
allowed, as in Kafka, and each helper costs one attribute check. Hot paths (Produce, Fetch) test
``ctx.broker.authorizer is None`` themselves before calling any of this.

Every decision is about the request's session (kafkapy.security.session): its principal and the
client's IP address. The helpers mirror Kafka 3.9's KafkaApis/AuthHelper:

* :func:`authorize` — one operation on one named resource (``authorize(ctx, READ, GROUP, g)``);
* :func:`authorize_cluster` — an operation on the cluster resource ``kafka-cluster``;
* :func:`authorized_names` — the subset of names the operation is allowed on (filterByAuthorized);
* :func:`authorized_operations` — the bit field Metadata, DescribeGroups, DescribeCluster and
  ConsumerGroupDescribe report when asked (every supported operation without an authorizer);
* :func:`authorize_by_resource_type` — "some resource of the type" (idempotent producers);
* :func:`config_resource_error` — DESCRIBE_CONFIGS/ALTER_CONFIGS on a config resource: the
  cluster for broker resources (CLUSTER_AUTHORIZATION_FAILED), the topic for topic resources
  (TOPIC_AUTHORIZATION_FAILED);
* :func:`transactional_id_error` — for transaction handlers: None when the principal may
  perform the operation (WRITE by default) on the transactional id, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkapy.metadata.acl_model import CLUSTER_NAME, AclOperation, ResourceType

__all__ = ["AclOperation", "ResourceType"]  # re-exported for handlers
from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.authorizer import SUPPORTED_OPERATIONS, operations_bit_field

Op = AclOperation
READ, WRITE, CREATE, DELETE, ALTER = Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER
DESCRIBE, CLUSTER_ACTION, IDEMPOTENT_WRITE = Op.DESCRIBE, Op.CLUSTER_ACTION, Op.IDEMPOTENT_WRITE
DESCRIBE_CONFIGS, ALTER_CONFIGS = Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID

#: Kafka's authorized-operations value when the client did not ask for them
NOT_REQUESTED = -(2**31)
#: the message of a cluster-level refusal (Kafka's for CLUSTER_AUTHORIZATION_FAILED)
CLUSTER_DENIED_MESSAGE = "Cluster authorization failed."


def authorize(ctx: Any, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
    az = ctx.broker.authorizer
    if az is None:
        return True
    s = ctx.session
    return az.authorize(s.principal, s.client_host, operation, resource_type, name)


def authorize_cluster(ctx: Any, operation: AclOperation) -> bool:
    return authorize(ctx, operation, CLUSTER, CLUSTER_NAME)


def authorized_names(
    ctx: Any, operation: AclOperation, resource_type: ResourceType, names: Iterable[str]
) -> set[str]:
    """The names among ``names`` the operation is allowed on (all of them without authorizer)."""
    az = ctx.broker.authorizer
    if az is None:
        return set(names)
    s = ctx.session
    principal, host = s.principal, s.client_host
    return {
        n for n in set(names) if az.authorize(principal, host, operation, resource_type, n)
    }


def authorized_operations(ctx: Any, resource_type: ResourceType, name: str) -> int:
    az = ctx.broker.authorizer
    if az is None:
        return operations_bit_field(SUPPORTED_OPERATIONS[resource_type])
    s = ctx.session
    return az.authorized_operations(s.principal, s.client_host, resource_type, name)


def authorize_by_resource_type(
    ctx: Any, operation: AclOperation, resource_type: ResourceType
) -> bool:
    az = ctx.broker.authorizer
    if az is None:
        return True
    s = ctx.session
    return az.authorize_by_resource_type(s.principal, s.client_host, operation, resource_type)


CONFIG_TOPIC, CONFIG_BROKER, CONFIG_BROKER_LOGGER, CONFIG_CLIENT_METRICS = 2, 4, 8, 16
CONFIG_GROUP = 32


def config_resource_error(
    ctx: Any, operation: AclOperation, resource_type: int, name: str
) -> ErrorCode | None:
    """None when ``operation`` (DESCRIBE_CONFIGS or ALTER_CONFIGS) is allowed on the config
    resource (other resource types are left to the handler), else the error Kafka answers."""
    if ctx.broker.authorizer is None:
        return None
    if resource_type == CONFIG_TOPIC:
        if not authorize(ctx, operation, TOPIC, name):
            return ErrorCode.topic_authorization_failed
    elif resource_type in (CONFIG_BROKER, CONFIG_BROKER_LOGGER, CONFIG_CLIENT_METRICS):
        if not authorize_cluster(ctx, operation):
            return ErrorCode.cluster_authorization_failed
    elif resource_type == CONFIG_GROUP:
        if not authorize(ctx, operation, GROUP, name):
            return ErrorCode.group_authorization_failed
    return None


def transactional_id_error(
    ctx: Any, transactional_id: str, operation: AclOperation = WRITE
) -> ErrorCode | None:
    """None when the request may perform ``operation`` on the transactional id (Kafka checks
    WRITE in InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit and
    Produce, DESCRIBE in FindCoordinator, DescribeTransactions and ListTransactions), else
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED."""
    if authorize(ctx, operation, TRANSACTIONAL_ID, transactional_id):
        return None
    return ErrorCode.transactional_id_authorization_failed
