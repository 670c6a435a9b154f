"""The feature table and UpdateFeatures' checks (kafkapy/server/features.py), in the order and
words of Apache Kafka 4.4's FeatureControlManager."""

from __future__ import annotations

from kafkapy.server import features
from kafkapy.server.features import SAFE_DOWNGRADE, UPGRADE, update_error


def test_only_the_running_level_is_accepted() -> None:
    assert update_error("group.version", 1, UPGRADE, 0) is None
    assert update_error("kraft.version", 0, SAFE_DOWNGRADE, 0) is None
    assert update_error("group.version", 0, SAFE_DOWNGRADE, 3) == (
        "Invalid update version 0 for feature group.version. Local controller 3 only supports "
        "versions 1-1")
    assert update_error("share.version", 2, UPGRADE, 0) is None  # share groups (KIP-932)
    assert update_error("share.version", 1, SAFE_DOWNGRADE, 0) == (
        "Invalid update version 1 for feature share.version. kafkapy runs share.version at "
        "level 2 only: it does not implement share groups turned off or without ShareFetch v2 "
        "as a cluster-wide level")
    # transaction.version: 0-2 supported as 4.4 lists them, run at 2 only (KIP-890 part 2)
    assert update_error("transaction.version", 2, UPGRADE, 0) is None
    assert update_error("transaction.version", 3, UPGRADE, 0) == (
        "Invalid update version 3 for feature transaction.version. Local controller 0 only "
        "supports versions 0-2")
    assert update_error("transaction.version", 1, SAFE_DOWNGRADE, 0) == (
        "Invalid update version 1 for feature transaction.version. kafkapy runs "
        "transaction.version at level 2 only: it does not implement the older transaction "
        "protocols as a cluster-wide level")


def test_refusals_in_kafkas_order() -> None:
    assert update_error("no.such.version", 1, UPGRADE, 0) == (
        "Invalid update version 1 for feature no.such.version. Local controller 0 does not "
        "support this feature.")
    assert update_error("group.version", -1, UPGRADE, 0) == (
        "Invalid update version -1 for feature group.version. A feature version cannot be less "
        "than 0.")
    assert update_error("group.version", 1, 0, 0) == (
        "Invalid update version 1 for feature group.version. The controller does not support "
        "the given upgrade type.")


def test_api_versions_lists() -> None:
    # v0-v3 omit min 0
    assert [f.name for f in features.supported(3)] == ["group.version", "streams.version"]
    assert len(features.supported(4)) == len(features.FEATURES)
    assert [(f.name, f.level) for f in features.finalized()] == [
        ("group.version", 1),
        ("share.version", 2),
        ("streams.version", 1),
        ("transaction.version", 2),
    ]
