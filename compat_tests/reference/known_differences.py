"""The known differences between Apache Kafka 4.4 and kafkapy that the differential suite
observes, one entry per key path: the session, the path, Kafka 4.4's value, kafkapy's value and
why. Apache Kafka decides what is right; each reason is explained in compat_tests/suites/
FINDINGS.md ("Differences from Apache Kafka 4.4 (differential suite)"). The suite fails on a
difference not listed here and on an entry that no longer occurs, so this list only shrinks.
``"<absent>"`` stands for a path one broker's answer does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Known:
    session: str
    path: str
    kafka: Any  # Apache Kafka 4.4's value
    kafkapy: Any  # kafkapy's value
    reason: str


PROTOCOL_LINE = "to be fixed by the 4.4 protocol-line issue"
# ---- why (FINDINGS.md has the longer story of each)
API_MAX = f"Kafka 4.4 serves a newer version of this API; kafkapy stops at 4.0's ({PROTOCOL_LINE})"
API_SHARE = "share groups (KIP-932) are not implemented by kafkapy"
API_STREAMS = "the streams group protocol (KIP-1071) is not implemented by kafkapy"
API_TOKENS = "delegation tokens are not implemented by kafkapy"
API_KRAFT = ("KRaft quorum and feature APIs: kafkapy runs on ZooKeeper-era metadata and has no "
             "quorum or finalized features")
API_ABSENT = f"API kafkapy does not serve ({PROTOCOL_LINE})"
FEATURES = ("kafkapy advertises no supported or finalized features (no metadata.version, "
            "group.version, transaction.version ...)")
MIN_ISR_CLUSTER_DEFAULT = ("Kafka 4.4's storage format (ELR on) records min.insync.replicas as a "
                           "cluster-wide dynamic default; kafkapy has only the static default")
FETCH_PARTIAL_BATCH = ("Kafka 4.4 fills a fetch up to the byte limit with log bytes, ending in a "
                       "partial batch clients drop; kafkapy sends whole batches only")
OTHER_BROKER_ALTER = ("Kafka 4.4 refuses a broker-config alter naming another broker's id "
                      "(a client sends it to that broker); kafkapy accepts it, as ZooKeeper mode "
                      "let any broker write any broker's configs")
RECORD_ERRORS = ("kafkapy does not fill record_errors (batch index and message) for records "
                 "refused by validation, nor Kafka's summary error_message")


KNOWN: list[Known] = [
    # ---- describe_topic_configs
    Known('describe_topic_configs', 'configs.min.insync.replicas.synonyms.1',
          'min.insync.replicas=1@3',
          'min.insync.replicas=1@5',
          MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_topic_configs', 'configs.min.insync.replicas.synonyms.2',
          'min.insync.replicas=1@5',
          '<absent>',
          MIN_ISR_CLUSTER_DEFAULT),
    # ---- api_versions
    Known('api_versions', 'api_keys.26:end_txn', '0..5', '0..4', API_MAX),
    Known('api_versions', 'api_keys.27:write_txn_markers', '1..2', '1..1', API_MAX),
    Known('api_versions', 'api_keys.28:txn_offset_commit', '0..6', '0..4', API_MAX),
    Known('api_versions', 'api_keys.34:alter_replica_log_dirs', '1..2', '<absent>', API_ABSENT),
    Known('api_versions', 'api_keys.38:create_delegation_token', '1..3', '<absent>', API_TOKENS),
    Known('api_versions', 'api_keys.39:renew_delegation_token', '1..2', '<absent>', API_TOKENS),
    Known('api_versions', 'api_keys.40:expire_delegation_token', '1..2', '<absent>', API_TOKENS),
    Known('api_versions', 'api_keys.41:describe_delegation_token', '1..3', '<absent>', API_TOKENS),
    Known('api_versions', 'api_keys.55:describe_quorum', '0..2', '<absent>', API_KRAFT),
    Known('api_versions', 'api_keys.57:update_features', '0..2', '<absent>', API_KRAFT),
    Known('api_versions', 'api_keys.64:unregister_broker', '0..0', '<absent>', API_KRAFT),
    Known('api_versions', 'api_keys.76:share_group_heartbeat', '1..1', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.77:share_group_describe', '1..1', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.78:share_fetch', '1..2', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.79:share_acknowledge', '1..2', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.80:add_raft_voter', '0..1', '<absent>', API_KRAFT),
    Known('api_versions', 'api_keys.81:remove_raft_voter', '0..0', '<absent>', API_KRAFT),
    Known('api_versions', 'api_keys.83:initialize_share_group_state',
          '0..0',
          '<absent>',
          API_SHARE),
    Known('api_versions', 'api_keys.84:read_share_group_state', '0..0', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.85:write_share_group_state', '0..1', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.86:delete_share_group_state', '0..0', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.87:read_share_group_state_summary',
          '0..1',
          '<absent>',
          API_SHARE),
    Known('api_versions', 'api_keys.88:streams_group_heartbeat', '0..1', '<absent>', API_STREAMS),
    Known('api_versions', 'api_keys.89:streams_group_describe', '0..1', '<absent>', API_STREAMS),
    Known('api_versions', 'api_keys.90:describe_share_group_offsets',
          '0..1',
          '<absent>',
          API_SHARE),
    Known('api_versions', 'api_keys.91:alter_share_group_offsets', '0..0', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.92:delete_share_group_offsets', '0..0', '<absent>', API_SHARE),
    Known('api_versions', 'api_keys.93:unknown', '0..0', '<absent>', API_ABSENT),
    Known('api_versions', 'api_keys.94:unknown', '0..0', '<absent>', API_ABSENT),
    Known('api_versions', 'finalized_features', '<absent>', {}, FEATURES),
    Known('api_versions', 'finalized_features.eligible.leader.replicas.version',
          '1..1',
          '<absent>',
          FEATURES),
    Known('api_versions', 'finalized_features.group.version', '1..1', '<absent>', FEATURES),
    Known('api_versions', 'finalized_features.metadata.version', '33..33', '<absent>', FEATURES),
    Known('api_versions', 'finalized_features.share.version', '2..2', '<absent>', FEATURES),
    Known('api_versions', 'finalized_features.streams.version', '1..1', '<absent>', FEATURES),
    Known('api_versions', 'finalized_features.transaction.version', '2..2', '<absent>', FEATURES),
    Known('api_versions', 'supported_features', '<absent>', {}, FEATURES),
    Known('api_versions', 'supported_features.metadata.version', '7..33', '<absent>', FEATURES),
    # ---- produce_errors
    Known('produce_errors', 'timestamp_far_future.error_message',
          'One or more records have been rejected due to invalid timestamp',
          ('Timestamp <clock> of message with offset 0 is out of range. The timest'
           'amp should be within [-1, <clock>]'),
          RECORD_ERRORS),
    Known('produce_errors', 'timestamp_far_future.record_errors', '<absent>', [], RECORD_ERRORS),
    Known('produce_errors', 'timestamp_far_future.record_errors.0.batch_index',
          0,
          '<absent>',
          RECORD_ERRORS),
    Known('produce_errors', 'timestamp_far_future.record_errors.0.batch_index_error_message',
          ('Timestamp <clock> of message with offset 0 is out of range. The timest'
           'amp should be within [<clock>, <clock>]'),
          '<absent>',
          RECORD_ERRORS),
    # ---- describe_broker_configs
    Known('describe_broker_configs', 'empty_name.configs', '<absent>', {}, MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.read_only', False,
          '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.sensitive', False,
          '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.source', 3,
          '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.synonyms.0',
          'min.insync.replicas=1@3', '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.type', 3,
          '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'empty_name.configs.min.insync.replicas.value', '1',
          '<absent>', MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'by_id.configs.min.insync.replicas.source',
          3,
          5,
          MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'by_id.configs.min.insync.replicas.synonyms.0',
          'min.insync.replicas=1@3',
          'min.insync.replicas=1@5',
          MIN_ISR_CLUSTER_DEFAULT),
    Known('describe_broker_configs', 'by_id.configs.min.insync.replicas.synonyms.1',
          'min.insync.replicas=1@5',
          '<absent>',
          MIN_ISR_CLUSTER_DEFAULT),
    # ---- create_topic_configs
    Known('create_topic_configs', 'configs.min.insync.replicas.source',
          3,
          5,
          MIN_ISR_CLUSTER_DEFAULT),
    # ---- fetch_limits
    Known('fetch_limits', 'partition_limit_two_batches.0.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    Known('fetch_limits', 'partition_limit_two_batches.1.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    Known('fetch_limits', 'response_limit_two_batches.0.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    # ---- alter_broker_configs
    Known('alter_broker_configs', 'other_broker.error_code', 'invalid_request', 'none',
          OTHER_BROKER_ALTER),
    Known('alter_broker_configs', 'other_broker.error_message',
          'Unexpected broker id, expected 1, but received 7', None, OTHER_BROKER_ALTER),
]
