"""Errors raised by metadata stores (ZooKeeper semantics) and by the cluster metadata facade."""

from __future__ import annotations


class MetadataError(Exception):
    """Base class of every error raised by kafkapy.metadata."""


# --- store level: one class per ZooKeeper error code the stores can produce ---------------------


class StoreError(MetadataError):
    """A store operation failed; ``path`` names the znode concerned (when known)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        #: index of the failing operation when raised by ``multi``; None otherwise
        self.op_index: int | None = None


class NoNodeError(StoreError):
    """The znode (or, for create, its parent) does not exist."""


class NodeExistsError(StoreError):
    """A create found the znode already there."""


class BadVersionError(StoreError):
    """The expected version did not match the znode's current version."""


class NotEmptyError(StoreError):
    """A non-recursive delete of a znode that still has children."""


class NoChildrenForEphemeralsError(StoreError):
    """Ephemeral znodes cannot have children."""


class InvalidPathError(StoreError, ValueError):
    """The path is not a valid absolute znode path."""


class StoreClosedError(StoreError):
    """The store (its session) is closed."""


class StoreLockedError(StoreError):
    """Another process holds the embedded store."""


# --- cluster level -------------------------------------------------------------------------------


class ClusterMetadataError(MetadataError):
    """A cluster-level rule was violated (topic exists, broker id taken, ...)."""


class TopicExistsError(ClusterMetadataError):
    """The topic already exists (Kafka's TOPIC_ALREADY_EXISTS)."""


class UnknownTopicError(ClusterMetadataError):
    """The topic does not exist (Kafka's UNKNOWN_TOPIC_OR_PARTITION)."""


class InvalidTopicError(ClusterMetadataError):
    """Illegal or colliding topic name (Kafka's INVALID_TOPIC_EXCEPTION)."""


class InvalidReplicaAssignmentError(ClusterMetadataError):
    """A replica assignment breaks Kafka's rules (Kafka's INVALID_REPLICA_ASSIGNMENT)."""


class InvalidPartitionsError(ClusterMetadataError):
    """A partition-count change breaks Kafka's rules (Kafka's INVALID_PARTITIONS)."""


class BrokerAlreadyRegisteredError(ClusterMetadataError):
    """Another session registered the same broker.id; ``owner`` is that session's id (0 when
    unknown). Whether the owner is a live broker or a dead one whose session has not expired yet
    only the session's expiry tells."""

    def __init__(self, message: str, owner: int = 0) -> None:
        super().__init__(message)
        self.owner = owner


class ControllerExistsError(ClusterMetadataError):
    """Another broker is the controller; ``controller_id`` names it."""

    def __init__(self, message: str, controller_id: int) -> None:
        super().__init__(message)
        self.controller_id = controller_id
