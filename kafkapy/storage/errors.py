"""Storage errors, each carrying the Kafka protocol error code a handler should return."""

from __future__ import annotations


class StorageError(Exception):
    """Base storage error; ``error_code`` is Kafka's (-1 UNKNOWN_SERVER_ERROR by default)."""

    error_code = -1


class OffsetOutOfRangeError(StorageError):
    """OFFSET_OUT_OF_RANGE: the offset is outside [log start, log end]."""

    error_code = 1


class KafkaStorageError(StorageError):
    """KAFKA_STORAGE_ERROR: the log directory or a file in it is unusable."""

    error_code = 56


class InconsistentClusterIdError(StorageError):
    """meta.properties names another cluster (or broker) than the one starting."""

    error_code = 104


class InconsistentTopicIdError(StorageError):
    """partition.metadata names another topic id than the one requested."""

    error_code = 103


class ProducerStateError(StorageError):
    """Base for idempotent/transactional producer checks."""


class OutOfOrderSequenceError(ProducerStateError):
    """OUT_OF_ORDER_SEQUENCE_NUMBER: a gap or reordering in a producer's sequence."""

    error_code = 45


class InvalidProducerEpochError(ProducerStateError):
    """INVALID_PRODUCER_EPOCH: the producer epoch is older than the one last seen."""

    error_code = 47


class UnknownProducerIdError(ProducerStateError):
    """UNKNOWN_PRODUCER_ID (kept for completeness; Kafka 4 accepts unknown idempotent producers)."""

    error_code = 59


class InvalidTxnStateError(ProducerStateError):
    """INVALID_TXN_STATE: a transactional write outside a transaction the coordinator knows of,
    or a plain write while the producer's transaction is open."""

    error_code = 48


class TransactionCoordinatorFencedError(ProducerStateError):
    """TRANSACTION_COORDINATOR_FENCED: a marker from an older coordinator epoch than one seen."""

    error_code = 52
