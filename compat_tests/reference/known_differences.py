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


# ---- why (FINDINGS.md has the longer story of each)
API_SHARE = ("the share coordinator's inter-broker APIs (KIP-932) are not served by kafkapy: "
             "its share-partition leader writes __share_group_state in process")
SHARE_INIT = ("Kafka 4.4 initializes a share group's partitions through its share coordinator "
              "(InitializeShareGroupState) before it assigns them: a joining member gets group "
              "epoch 2 and an empty assignment, the partitions on a later heartbeat; kafkapy's "
              "share-partition leader keeps the state itself and assigns at once (epoch 1)")
SHARE_SUMMARY = ("Kafka 4.4's DescribeShareGroupOffsets reads the share coordinator's summary, "
                 "which still had start offset 2 right after the last acknowledgement; kafkapy "
                 "answers the share-partition's current start offset (3)")
FEATURES = ("kafkapy finalizes only group.version 1, share.version 2, streams.version 1 and "
            "transaction.version 2 (the feature levels whose semantics it implements; no "
            "metadata.version: it has no KRaft metadata log)")
FEATURE_RANGES = ("kafkapy supports only the feature levels it implements (group.version 1, "
                  "share.version 2 ...), where 4.4 supports 0 up to its default levels: "
                  "UpdateFeatures refuses other levels with 'only supports versions A-B'")
FETCH_PARTIAL_BATCH = ("Kafka 4.4 fills a fetch up to the byte limit with log bytes, ending in a "
                       "partial batch clients drop; kafkapy sends whole batches only")
STRICTER = ("kafkapy refuses (INVALID_RECORD) a batch Kafka 4.4 accepts and stores, because "
            "readers then fail on it")
STRICTER_OFFSET_DELTAS = (f"{STRICTER}: offset deltas 0,5 in an uncompressed batch (librdkafka "
                          "loops on it)")
STRICTER_NULL_LENGTH = (f"{STRICTER}: a key or value length below -1, which Kafka reads as "
                        "null (librdkafka stalls on it)")
STRICTER_HEADER_VALUE = (f"{STRICTER}: a header value length below -1, which Kafka reads as "
                         "null (librdkafka fails on it)")
STRICTER_VARINT_BITS = (f"{STRICTER}: a 5-byte varint whose last byte carries bits past 32, "
                        "which Kafka drops (64-bit readers such as librdkafka do not)")



# UpdateFeatures refusals: "... Invalid update version <what>. <why>"
ALL_FAILED = "The update failed for all features since the following feature had an error: "
LOCAL = "Local controller 1"
NO_DOWNGRADE_AS_UPGRADE = ("Can't downgrade the version of this feature without setting the "
                           "upgrade type to either safe or unsafe downgrade.")


def _feature_update(case: str, what: str, kafka_why: str, kafkapy_why: str) -> Known:
    return Known("update_features", f"{case}.error_message",
                 f"{ALL_FAILED}Invalid update version {what}. {kafka_why}",
                 f"{ALL_FAILED}Invalid update version {what}. {kafkapy_why}", FEATURE_RANGES)

KNOWN: list[Known] = [
    # ---- api_versions
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
    Known('api_versions', 'finalized_features.eligible.leader.replicas.version',
          '1..1',
          '<absent>',
          FEATURES),
    Known('api_versions', 'finalized_features.metadata.version', '33..33', '<absent>', FEATURES),
    Known('api_versions', 'supported_features.group.version', '<absent>', '1..1',
          FEATURE_RANGES),
    Known('api_versions', 'supported_features.metadata.version', '7..33', '<absent>', FEATURES),
    Known('api_versions', 'supported_features.streams.version', '<absent>', '1..1',
          FEATURE_RANGES),
    # ---- share_group (KIP-932)
    Known('share_group', 'describe.epochs.0', 2, 1, SHARE_INIT),
    Known('share_group', 'describe.epochs.1', 2, 1, SHARE_INIT),
    Known('share_group', 'describe.members.0.0', 2, 1, SHARE_INIT),
    Known('share_group', 'describe.members.0.3', [], '<absent>', SHARE_INIT),
    Known('share_group', 'describe.members.0.3.0.0', '<absent>', 0, SHARE_INIT),
    Known('share_group', 'fenced.message',
          'The share group member has a greater member epoch (7) than the one known by the '
          'group coordinator (2). The member must abandon all its partitions and rejoin.',
          'The share group member has a greater member epoch (6) than the one known by the '
          'group coordinator (1). The member must abandon all its partitions and rejoin.',
          SHARE_INIT),
    Known('share_group', 'heartbeat.epoch', 2, 1, SHARE_INIT),
    Known('share_group', 'join.assignment', [], '<absent>', SHARE_INIT),
    Known('share_group', 'join.assignment.0', '<absent>', 0, SHARE_INIT),
    Known('share_group', 'join.epoch', 2, 1, SHARE_INIT),
    Known('share_group', 'offsets.topics.0.1.0.1', 2, 3, SHARE_SUMMARY),
    # ---- crafted_records (kafkapy refuses batches 4.4 stores and some readers cannot read)
    Known('crafted_records', 'header_value_length_minus3.base_offset',
          0, -1, STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.error_code',
          'none', 'invalid_record', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.list_by_time_now_plus_1.0',
          -1, '<absent>', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.list_by_time_now_plus_1.1',
          -1, '<absent>', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.list_max_timestamp.0',
          0, '<absent>', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.list_max_timestamp.1',
          0, '<absent>', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'header_value_length_minus3.stored_max_timestamp_minus_now',
          0, '<absent>', STRICTER_HEADER_VALUE),
    Known('crafted_records', 'key_length_minus5.base_offset',
          0, -1, STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.error_code',
          'none', 'invalid_record', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.list_by_time_now_plus_1.0',
          -1, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.list_by_time_now_plus_1.1',
          -1, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.list_max_timestamp.0',
          0, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.list_max_timestamp.1',
          0, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'key_length_minus5.stored_max_timestamp_minus_now',
          0, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'offset_deltas_0_5.base_offset',
          0, -1, STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.error_code',
          'none', 'invalid_record', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.list_by_time_now_plus_1.0',
          -1, '<absent>', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.list_by_time_now_plus_1.1',
          -1, '<absent>', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.list_max_timestamp.0',
          0, '<absent>', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.list_max_timestamp.1',
          0, '<absent>', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'offset_deltas_0_5.stored_max_timestamp_minus_now',
          0, '<absent>', STRICTER_OFFSET_DELTAS),
    Known('crafted_records', 'length_varint_overflow.base_offset',
          0, -1, STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.error_code',
          'none', 'invalid_record', STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.list_by_time_now_plus_1.0',
          -1, '<absent>', STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.list_by_time_now_plus_1.1',
          -1, '<absent>', STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.list_max_timestamp.0',
          0, '<absent>', STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.list_max_timestamp.1',
          0, '<absent>', STRICTER_VARINT_BITS),
    Known('crafted_records', 'length_varint_overflow.stored_max_timestamp_minus_now',
          0, '<absent>', STRICTER_VARINT_BITS),
    Known('crafted_records', 'value_length_minus7.base_offset',
          0, -1, STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.error_code',
          'none', 'invalid_record', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.list_by_time_now_plus_1.0',
          -1, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.list_by_time_now_plus_1.1',
          -1, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.list_max_timestamp.0',
          0, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.list_max_timestamp.1',
          0, '<absent>', STRICTER_NULL_LENGTH),
    Known('crafted_records', 'value_length_minus7.stored_max_timestamp_minus_now',
          0, '<absent>', STRICTER_NULL_LENGTH),
    # ---- fetch_limits
    Known('fetch_limits', 'partition_limit_two_batches.0.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    Known('fetch_limits', 'partition_limit_two_batches.1.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    Known('fetch_limits', 'response_limit_two_batches.0.partial_tail', True, False,
          FETCH_PARTIAL_BATCH),
    # ---- update_features
    _feature_update('v0.above_every_level', '9 for feature group.version',
                    f'{LOCAL} only supports versions 0-1', f'{LOCAL} only supports versions 1-1'),
    _feature_update('v0.downgrade_as_upgrade', '0 for feature group.version',
                    NO_DOWNGRADE_AS_UPGRADE, f'{LOCAL} only supports versions 1-1'),
    _feature_update('v1.above_every_level', '9 for feature group.version',
                    f'{LOCAL} only supports versions 0-1', f'{LOCAL} only supports versions 1-1'),
    _feature_update('v1.downgrade_as_upgrade', '0 for feature group.version',
                    NO_DOWNGRADE_AS_UPGRADE, f'{LOCAL} only supports versions 1-1'),
    _feature_update('v2.above_every_level', '9 for feature group.version',
                    f'{LOCAL} only supports versions 0-1', f'{LOCAL} only supports versions 1-1'),
    _feature_update('v2.downgrade_as_upgrade', '0 for feature group.version',
                    NO_DOWNGRADE_AS_UPGRADE, f'{LOCAL} only supports versions 1-1'),
]
