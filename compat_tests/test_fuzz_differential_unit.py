"""The differential fuzzer's reductions (compat_tests/fuzz/differential.py), without brokers: the
versions both brokers serve, the error codes of a response, and a difference's kind."""

from __future__ import annotations

from kio.schema.metadata.v12 import response as md

from .fuzz import differential as d
from .fuzz.runner import Case


def test_common_versions_are_what_both_advertise_and_kafkapy_accepts():
    kafkapy = {0: (0, 12), 3: (0, 13), 18: (0, 4)}
    kafka = {0: (0, 13), 3: (0, 13), 18: (0, 5), 68: (0, 1)}
    got = d.common_versions(kafkapy, kafka)
    assert [(k, v) for _, k, v in got if k == 0] == [(0, v) for v in range(3, 13)]  # Produce v3+
    assert {k for _, k, _ in got} == {0, 3, 18}
    assert max(v for _, k, v in got if k == 18) == 4


def test_error_codes_walk_the_whole_response():
    resp = md.MetadataResponse(
        throttle_time=md.MetadataResponse.__dataclass_fields__["throttle_time"].default,
        brokers=(), cluster_id=None, controller_id=md.BrokerId(-1),
        topics=(md.MetadataResponseTopic(error_code=3, name=md.TopicName("t"), topic_id=None,
                                         is_internal=False, partitions=(),
                                         topic_authorized_operations=-2147483648),
                md.MetadataResponseTopic(error_code=0, name=md.TopicName("u"), topic_id=None,
                                         is_internal=False, partitions=(),
                                         topic_authorized_operations=-2147483648)))
    assert d.error_codes(resp) == (0, 3)


def test_signature_names_the_kind_without_the_payload():
    case = Case(3, 12, "set_byte", "00", None, "fz1")
    diff = d.Difference(case, d.Observation("closed"), d.Observation("answered", (3, 17)))
    assert diff.signature() == "Metadata v12 set_byte: kafkapy closed / kafka answered [3, 17]"
    assert diff.connection
    same_fate = d.Difference(case, d.Observation("answered", (0,)),
                             d.Observation("answered", (3,)))
    assert not same_fate.connection
