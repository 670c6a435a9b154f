"""The features this broker supports and the cluster-wide finalized levels ApiVersions reports
(KIP-584; Kafka's FeatureControlManager/BrokerFeatures as seen through ApiVersionsResponse).

Only features whose semantics kafkapy implements are listed:

- ``transaction.version`` 0-2, finalized at 2 as on a new Apache Kafka 4.x cluster: version 2
  is KIP-890 part 2 (an epoch bump per transaction, partitions added by the partition leader and
  the group coordinator). Clients that see it finalized use EndTxn v5, Produce v12 and
  TxnOffsetCommit v5 in transactions; older clients keep the version 1 protocol, still served.

The finalized features' epoch is fixed (kafkapy has no UpdateFeatures yet, so the levels never
change): clients take finalized features only with an epoch >= 0. ApiVersions v0-3 leave out
supported features whose minimum is 0 (KAFKA-17011; v4 lists them), as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass

TRANSACTION_VERSION = "transaction.version"
FINALIZED_FEATURES_EPOCH = 0
SUPPORTED_MIN_ZERO_FROM_API_VERSIONS = 4


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    min_supported: int
    max_supported: int
    finalized: int  # the finalized level (min and max level alike, as Kafka reports them)


FEATURES: tuple[Feature, ...] = (Feature(TRANSACTION_VERSION, 0, 2, 2),)


def supported_features(api_versions_version: int) -> list[tuple[str, int, int]]:
    """(name, min, max) as ApiVersions of that version lists them."""
    return [
        (f.name, f.min_supported, f.max_supported)
        for f in FEATURES
        if f.min_supported > 0 or api_versions_version >= SUPPORTED_MIN_ZERO_FROM_API_VERSIONS
    ]


def finalized_features() -> list[tuple[str, int, int]]:
    """(name, min level, max level) of the finalized features."""
    return [(f.name, f.finalized, f.finalized) for f in FEATURES if f.finalized > 0]


def finalized_level(name: str) -> int:
    return next((f.finalized for f in FEATURES if f.name == name), 0)
