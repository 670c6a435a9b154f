"""The feature flags kafkapy supports and finalizes (KIP-584), as Apache Kafka 4.4's
``org.apache.kafka.server.common.Feature`` names them, and the checks of an UpdateFeatures
request (Kafka's FeatureControlManager and QuorumFeatures).

Each feature gets the range of levels whose semantics kafkapy implements, and the level it
runs at. A level kafkapy cannot run at is outside the range, so changing to it is refused as
Apache Kafka 4.4 refuses a level its controller does not support (INVALID_UPDATE_VERSION, "Local
controller N only supports versions A-B"); since every range is a single level, UpdateFeatures
can only confirm the running level (transaction.version lists 0-2 as 4.4 does, and refuses the
levels it does not run at). Differences from 4.4 (which finalizes group.version 1,
transaction.version 2, share.version 2, streams.version 1, eligible.leader.replicas.version 1
and metadata.version 4.4-IV2 by default):

* group.version 1: the consumer group protocol (KIP-848) is served; level 0 (turning it off) is
  not implemented;
* transaction.version 2, as 4.4 (KIP-890 part 2: an epoch bump per transaction, partitions
  added by the partition leaders and the group coordinator; clients of the version 1 protocol
  are still served). Levels 0-2 are supported, as 4.4 lists them; kafkapy runs at 2 only, so an
  UpdateFeatures to level 0 or 1 is refused (not in 4.4's words: 4.4 would downgrade);
* streams.version 1, as 4.4: streams groups (KIP-1071) are served; level 0 (turning them off)
  is not implemented;
* share.version 2, as 4.4 (share groups, KIP-932, with ShareFetch/ShareAcknowledge v2 and
  RENEW). Levels 0-2 are supported, as 4.4 lists them; kafkapy runs at 2 only, so an
  UpdateFeatures to level 0 or 1 is refused (share groups cannot be turned off);
* kraft.version 0, eligible.leader.replicas.version 0: no KRaft quorum or ELR;
* metadata.version is not supported at all: it versions the KRaft metadata log, which kafkapy
  does not have.

ApiVersions (v3+) advertises the supported ranges (v0-v3 omit those starting at 0, as Kafka's
``ApiVersionsResponse`` does) and the features finalized above level 0, with epoch
:data:`FINALIZED_EPOCH`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    min_level: int  # lowest level kafkapy can run at
    max_level: int  # highest level kafkapy can run at
    level: int  # the level it runs at (finalized when above 0)


FEATURES: dict[str, Feature] = {
    f.name: f
    for f in (
        Feature("eligible.leader.replicas.version", 0, 0, 0),
        Feature("group.version", 1, 1, 1),
        Feature("kraft.version", 0, 0, 0),
        Feature("share.version", 0, 2, 2),
        Feature("streams.version", 1, 1, 1),
        Feature("transaction.version", 0, 2, 2),
    )
}

# the finalized features never change (every supported range is one level): one epoch for ever
FINALIZED_EPOCH = 0

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
# features listed with 4.4's range but run at one level: what the lower levels would be
_ONE_LEVEL = {
    "transaction.version": "the older transaction protocols",
    "share.version": "share groups turned off or without ShareFetch v2",
}


def supported(api_version: int) -> list[Feature]:
    """The features ApiVersions of ``api_version`` lists as supported."""
    return [f for f in FEATURES.values() if api_version >= 4 or f.min_level > 0]


def finalized() -> list[Feature]:
    return [f for f in FEATURES.values() if f.level > 0]


def update_error(name: str, level: int, upgrade_type: int, controller_id: int) -> str | None:
    """Why the update of ``name`` to ``level`` is refused (INVALID_UPDATE_VERSION), in Apache
    Kafka 4.4's words, or None when it is valid (then it changes nothing)."""
    prefix = f"Invalid update version {level} for feature {name}."
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return f"{prefix} The controller does not support the given upgrade type."
    if level < 0:
        return f"{prefix} A feature version cannot be less than 0."
    feature = FEATURES.get(name)
    if feature is None:
        return f"{prefix} Local controller {controller_id} does not support this feature."
    if not feature.min_level <= level <= feature.max_level:
        return (f"{prefix} Local controller {controller_id} only supports versions "
                f"{feature.min_level}-{feature.max_level}")
    if name in _ONE_LEVEL and upgrade_type != UPGRADE and level < feature.level:
        # supported as 4.4 lists it, but run at one level only
        return (f"{prefix} kafkapy runs {name} at level {feature.level} only: it does not "
                f"implement {_ONE_LEVEL[name]} as a cluster-wide level")
    if upgrade_type == UPGRADE and level < feature.level:
        return (f"{prefix} Can't downgrade the version of this feature without setting the "
                "upgrade type to either safe or unsafe downgrade.")
    if upgrade_type != UPGRADE and level > feature.level:
        return f"{prefix} Can't downgrade to a newer version."
    return None
