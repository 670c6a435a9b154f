"""UpdateFeatures (key 57), versions 0-2: change finalized feature levels (KIP-584), as Apache
Kafka 4.4's controller answers it (ControllerApis.handleUpdateFeatures, FeatureControlManager).

Every update is checked (server/features.py): an unknown feature, a level outside what kafkapy
implements, a downgrade asked as an upgrade or an upgrade asked as a downgrade is refused, and
then the whole request is: INVALID_UPDATE_VERSION at the top level, "The update failed for all
features since the following feature had an error: " and the first refusal's reason, no
per-feature results. Otherwise each feature gets a result NONE (message "NONE", as 4.4 sends)
and nothing changes: every level kafkapy accepts is the one it runs at. v0 names a downgrade
with allow_downgrade (a safe downgrade), v1+ with upgrade_type; v1+ validate_only changes
nothing either. v2 has no per-feature results.

Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED on every feature).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from .. import features
from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build, has_field
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster

ALL_FAILED = "The update failed for all features since the following feature had an error: "


def _upgrade_type(update: Any) -> int:
    if hasattr(update, "upgrade_type"):
        return int(update.upgrade_type)
    return features.SAFE_DOWNGRADE if update.allow_downgrade else features.UPGRADE


@api("UpdateFeatures")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker

    def respond(error: ErrorCode, message: str | None, per_feature: ErrorCode | None,
                per_message: str | None = None) -> Any:
        if per_feature is None or not has_field(R.UpdateFeaturesResponse, "results"):
            return build(R.UpdateFeaturesResponse, throttle_time=THROTTLE_NONE, error_code=error,
                         error_message=message, results=())
        results = tuple(
            build(R.UpdatableFeatureResult, feature=u.feature, error_code=per_feature,
                  error_message=per_message)
            for u in request.feature_updates
        )
        return build(R.UpdateFeaturesResponse, throttle_time=THROTTLE_NONE, error_code=error,
                     error_message=message, results=results)

    if not authorize_cluster(ctx, ALTER):
        return respond(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE,
                       ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
    controller = broker.cluster.controller_id()
    controller_id = broker.broker_id if controller is None else controller
    for update in request.feature_updates:
        reason = features.update_error(update.feature, int(update.max_version_level),
                                       _upgrade_type(update), controller_id)
        if reason is not None:
            return respond(ErrorCode.invalid_update_version, ALL_FAILED + reason, None)
    return respond(ErrorCode.none, None, ErrorCode.none, "NONE")
