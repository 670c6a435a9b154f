"""AlterUserScramCredentials (key 51), version 0, as a ZooKeeper-mode Kafka 3.9 broker serves it.

Upsertions carry the salt and salted password computed by the client (the password never
travels); the broker derives StoredKey and ServerKey and stores the credential in the user's
config entity (/config/users/<user>, key SCRAM-SHA-256 or SCRAM-SHA-512) with a config change
notification, so every broker's credential cache takes it (server/security/scram_cache.py). Checks,
per user, in Kafka's order and with its codes and messages:

* empty user name: UNACCEPTABLE_CREDENTIAL "Username must not be empty"; unknown mechanism:
  UNSUPPORTED_SASL_MECHANISM; iterations below 4096 or above 16384: UNACCEPTABLE_CREDENTIAL
  "Too few iterations" / "Too many iterations";
* the same user and mechanism twice in one request: DUPLICATE_RESOURCE;
* deleting a credential the user does not have: RESOURCE_NOT_FOUND.

The user's other alterations in the request are then applied together, in one write. In ZooKeeper
mode only the active controller takes the request (others answer NOT_CONTROLLER, as Kafka does).

Authorization: ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every user), checked
after the controller check, as Kafka.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from kafkapy.metadata import scram_credentials as sc
from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.scram import MAX_ITERATIONS, MECHANISM_IDS, MECHANISMS, ScramCredential

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, CLUSTER_DENIED_MESSAGE, authorize_cluster

log = logging.getLogger("kafkapy.scram")

EMPTY_USER = "Username must not be empty"
UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"


def _upsertion_error(u) -> tuple[ErrorCode, str] | None:
    if not u.name:
        return ErrorCode.unacceptable_credential, EMPTY_USER
    name = MECHANISM_IDS.get(u.mechanism)
    if name is None:
        return ErrorCode.unsupported_sasl_mechanism, UNKNOWN_MECHANISM
    if u.iterations > MAX_ITERATIONS:
        return ErrorCode.unacceptable_credential, "Too many iterations"
    if u.iterations < MECHANISMS[name].min_iterations:
        return ErrorCode.unacceptable_credential, "Too few iterations"
    return None


def _deletion_error(d) -> tuple[ErrorCode, str] | None:
    if not d.name:
        return ErrorCode.unacceptable_credential, EMPTY_USER
    if d.mechanism not in MECHANISM_IDS:
        return ErrorCode.unsupported_sasl_mechanism, UNKNOWN_MECHANISM
    return None


def alter(store, upsertions, deletions) -> list[tuple[str, ErrorCode, str | None]]:
    """Apply the request to the store (blocking); one (user, error, message) per user."""
    results: dict[str, tuple[ErrorCode, str | None]] = {}
    for d in deletions:
        err = _deletion_error(d)
        if err is not None:
            results[d.name] = err
    for u in upsertions:
        err = _upsertion_error(u)
        if err is not None:
            results[u.name] = err
    pairs = [(u.name, u.mechanism) for u in upsertions if u.name not in results]
    pairs += [(d.name, d.mechanism) for d in deletions if d.name not in results]
    for pair in pairs:
        if pairs.count(pair) > 1 and pair[0] not in results:
            results[pair[0]] = (
                ErrorCode.duplicate_resource,
                "A user credential cannot be altered twice in the same request",
            )
    users = list(dict.fromkeys(name for name, _ in pairs if name not in results))
    current = {user: sc.read_user(store, user) for user in users}
    for d in deletions:
        if d.name in current and MECHANISM_IDS[d.mechanism] not in current[d.name]:
            results[d.name] = (
                ErrorCode.resource_not_found,
                "Attempt to delete a user credential that does not exist",
            )
    for user in users:
        if user in results:
            continue
        upserts = {}
        for u in upsertions:
            if u.name == user:
                mech = MECHANISMS[MECHANISM_IDS[u.mechanism]]
                cred = ScramCredential.from_salted_password(
                    mech, u.salt, u.salted_password, u.iterations
                )
                upserts[mech.name] = cred.to_config()
        removed = [MECHANISM_IDS[d.mechanism] for d in deletions if d.name == user]
        try:
            sc.alter_user(store, user, upserts, removed)
        except Exception as e:  # the store failed (ZooKeeper unreachable, version conflict)
            log.warning("altering SCRAM credentials of %s failed: %s", user, e)
            results[user] = (ErrorCode.unknown_server_error, str(e))
            continue
        log.info(
            "SCRAM credentials altered user=%s set=%s removed=%s", user, sorted(upserts), removed
        )
        results[user] = (ErrorCode.none, None)
    return [(user, code, message) for user, (code, message) in results.items()]


@api("AlterUserScramCredentials")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    broker = ctx.broker
    rm = broker.replicas
    results: list[tuple[str, ErrorCode, str | None]]
    if rm is not None and not rm.controller_loop.controller.active:
        everyone = dict.fromkeys(
            [u.name for u in request.upsertions] + [d.name for d in request.deletions]
        )
        results = [(user, ErrorCode.not_controller, None) for user in everyone]
    elif not authorize_cluster(ctx, ALTER):
        names = {u.name for u in request.upsertions} | {d.name for d in request.deletions}
        results = [
            (user, ErrorCode.cluster_authorization_failed, CLUSTER_DENIED_MESSAGE)
            for user in sorted(names)
        ]
    else:
        store = broker.cluster.store
        results = await trio.to_thread.run_sync(alter, store, request.upsertions, request.deletions)
        for user, code, _ in results:
            if code == ErrorCode.none:
                broker.scram_credentials.update(user, sc.read_user(store, user))
    return build(
        R.AlterUserScramCredentialsResponse,
        throttle_time=THROTTLE_NONE,
        results=tuple(
            build(R.AlterUserScramCredentialsResult, user=u, error_code=c, error_message=m)
            for u, c, m in results
        ),
    )
