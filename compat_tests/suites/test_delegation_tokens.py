"""Delegation tokens on a three-broker kafkapy cluster on ZooKeeper, with real clients: Apache
Kafka 4.4's Java Admin client creates, describes, renews and expires a token on one broker and
its producer and consumer authenticate with the token (SCRAM-SHA-512, ``tokenauth=true``) on
another (java/TokenClient.java); kafkapy's kafka-delegation-tokens.sh and Kafka 4.4's own
DelegationTokenCommand manage tokens with the same flags and print the same output; tokens live
in ZooKeeper in Kafka's layout; the controller's expiry sweep removes an expired token from every
broker, after which it no longer authenticates.

The brokers: SASL_PLAINTEXT listeners serving PLAIN (users admin and bob) and SCRAM-SHA-512,
``delegation.token.secret.key`` shared, expiry checked every second. librdkafka (confluent-kafka)
cannot send SCRAM's ``tokenauth`` extension, so it cannot use a token with any broker.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.security.helpers import ADMIN, ADMIN_PASSWORD, plain_jaas, sasl_conf
from compat_tests.suites import jvm
from kafkapy.testing.cluster import Cluster, wait_for
from kafkapy.testing.zookeeper import ZooKeeperServer

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
TOOL = "org.apache.kafka.tools.DelegationTokenCommand"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
ADMIN_TOKENS = ("--describe", "--owner-principal", "User:admin")
ROW = re.compile(r"^(\S+) +(\S+) +(User:\S+) +(User:\S+) +\[(.*?)\] +(\S+) +(\S+) +(\S+) *$")


@pytest.fixture(scope="module")
def token_cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("token-cluster")
    zk = ZooKeeperServer(base / "zookeeper")
    zk.start()
    try:
        def overrides(broker_id: int, port: int) -> dict[str, str]:
            return {
                "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
                "security.inter.broker.protocol": "SASL_PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas(
                    {ADMIN: ADMIN_PASSWORD, "bob": "bob-secret"}
                ),
                "delegation.token.secret.key": "cluster-wide-secret",
                "delegation.token.expiry.check.interval.ms": "1000",
                "offsets.topic.replication.factor": "1",
                "default.replication.factor": "1",
            }

        client = sasl_conf("", "PLAIN", ADMIN, ADMIN_PASSWORD)
        del client["bootstrap.servers"]
        cluster = Cluster(base, zk.connect_string, overrides=overrides, client_config=client)
        config = base / "admin.properties"
        config.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
            f'sasl.jaas.config={PLAIN_MODULE} required username="{ADMIN}" '
            f'password="{ADMIN_PASSWORD}";\n'
        )
        cluster.command_config = str(config)  # type: ignore[attr-defined]
        try:
            yield cluster.start()
        finally:
            cluster.stop()
    finally:
        zk.stop()


def kafkapy_tokens(cluster: Cluster, broker: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "delegation-tokens", "--bootstrap-server",
         cluster.brokers[broker].bootstrap, "--command-config",
         cluster.command_config, *args],  # type: ignore[attr-defined]
        capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL,
    )


def tokens_in(output: str) -> list[tuple[str, ...]]:
    """The token rows of the tool's table (token id, HMAC, owner, requester, renewers, dates)."""
    return [m.groups() for line in output.splitlines() if (m := ROW.match(line))]


def stored(cluster: Cluster, token_id: str) -> dict | None:
    path = f"/kafkapy/delegation_token/tokens/{token_id}"
    if cluster.zk.exists(path) is None:
        return None
    return json.loads(cluster.zk.get(path)[0])


def test_java_client_uses_a_token_on_another_broker(token_cluster, java_classes) -> None:
    run = jvm.run_java(
        "TokenClient", token_cluster.brokers[0].bootstrap, token_cluster.brokers[2].bootstrap,
        "token-topic", extra_cp=(java_classes,), timeout=180, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    checks = {
        line.split()[1]: line.split(" ", 2)[2] if line.count(" ") > 1 else ""
        for line in run.stdout.splitlines() if line.startswith("check ")
    }
    assert checks["created"] == (
        "owner=User:admin requester=User:admin renewers=User:bob lifetime_ms=604800000 "
        "expiry_ms=86400000"
    )
    assert checks["described_by_renewer"] == "count=1 same=true"
    assert checks["login_other_broker"] == "ok"
    assert checks["wrong_hmac"] == "SaslAuthenticationException"
    assert checks["unknown_token"] == "SaslAuthenticationException"
    assert checks["token_round_trip"] == "values=t0,t1,t2"
    # a token-authenticated connection may not create tokens (Kafka's allowTokenRequests)
    assert checks["token_creates_token"] == "error=UnsupportedByAuthenticationException"
    assert checks["renewed_by_renewer"] == "matches=true within_ms=true"
    assert checks["renew_unknown"] == "error=DelegationTokenNotFoundException"
    assert checks["expired"] == "now=true left=0"
    assert checks["login_after_expire"] == "SaslAuthenticationException"


def test_tool_creates_describes_renews_and_expires(token_cluster) -> None:
    made = kafkapy_tokens(token_cluster, 1, "--create", "--max-life-time-period", "-1",
                          "--renewer-principal", "User:bob")
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert lines[0] == (
        "Calling create token operation with renewers :[User:bob] , max-life-time-period :-1"
    )
    token_id = lines[1].removeprefix("Created delegation token with tokenId : ")
    assert lines[2] == "" and lines[3].split() == [
        "TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE"]
    [row] = tokens_in(made.stdout)
    assert row[0] == token_id and row[2:5] == ("User:admin", "User:admin", "User:bob")
    hmac = row[1]
    doc = stored(token_cluster, token_id)  # Kafka 3.x's znode, version 3
    assert doc is not None and doc["owner"] == "User%3Aadmin" and doc["renewers"] == ["User%3Abob"]
    assert doc["maxTimestamp"] - doc["issueTimestamp"] == 604800000
    # every broker has it
    for broker in (0, 2):
        seen = wait_for(lambda b=broker: [r for r in tokens_in(
            kafkapy_tokens(token_cluster, b, *ADMIN_TOKENS).stdout) if r[0] == token_id],
            what=f"the token on broker {broker}")
        assert seen[0][1] == hmac
    owners = kafkapy_tokens(token_cluster, 2, "--describe", "--owner-principal", "User:bob")
    assert owners.stdout.startswith("Calling describe token operation for owners: [User:bob]\n")
    assert token_id in [r[0] for r in tokens_in(owners.stdout)]

    renewed = kafkapy_tokens(token_cluster, 0, "--renew", "--hmac", hmac,
                             "--renew-time-period", "3600000")
    assert renewed.returncode == 0, renewed.stderr
    assert re.fullmatch(
        rf"Calling renew token operation with hmac :{re.escape(hmac)} , renew-time-period "
        r":3600000\nCompleted renew operation\. New expiry date : \d{4}-\d\d-\d\dT\d\d:\d\d",
        renewed.stdout)
    assert stored(token_cluster, token_id)["expiryTimestamp"] < doc["expiryTimestamp"]

    gone = kafkapy_tokens(token_cluster, 2, "--expire", "--hmac", hmac,
                          "--expiry-time-period", "-1")
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.startswith(f"Calling expire token operation with hmac :{hmac} , "
                                  "expire-time-period :-1\nCompleted expire operation.")
    assert stored(token_cluster, token_id) is None
    again = kafkapy_tokens(token_cluster, 1, "--renew", "--hmac", hmac, "--renew-time-period", "-1")
    assert again.returncode == 1
    assert again.stderr.strip() == ("org.apache.kafka.common.errors."
                                    "DelegationTokenNotFoundException: Delegation Token is not "
                                    "found on server.")


def test_expired_tokens_are_swept_from_every_broker(token_cluster) -> None:
    made = kafkapy_tokens(token_cluster, 0, "--create", "--max-life-time-period", "1500")
    [row] = tokens_in(made.stdout)
    token_id = row[0]
    assert stored(token_cluster, token_id) is not None
    wait_for(lambda: stored(token_cluster, token_id) is None, timeout=15,
             what="the expiry sweep to delete the token")
    for broker in (0, 1, 2):
        wait_for(lambda b=broker: token_id not in [r[0] for r in tokens_in(
            kafkapy_tokens(token_cluster, b, *ADMIN_TOKENS).stdout)],
            what=f"broker {broker} to drop the token")
    late = kafkapy_tokens(token_cluster, 1, "--renew", "--hmac", row[1],
                          "--renew-time-period", "-1")
    assert late.returncode == 1 and "DelegationTokenNotFoundException" in late.stderr


def test_kafka_tool_and_kafkapy_tool_print_the_same(token_cluster, tools) -> None:
    bootstrap = token_cluster.brokers[1].bootstrap
    common = ["--bootstrap-server", bootstrap, "--command-config",
              token_cluster.command_config]
    java = tools.run(TOOL, *common, "--create", "--max-life-time-period", "-1",
                     "--renewer-principal", "User:bob")
    assert java.stdout.startswith(
        "Calling create token operation with renewers :[User:bob] , max-life-time-period :-1\n"
        "Created delegation token with tokenId : ")
    [java_row] = tokens_in(java.stdout)
    ours = kafkapy_tokens(token_cluster, 1, "--create", "--max-life-time-period", "-1",
                          "--renewer-principal", "User:bob")
    [our_row] = tokens_in(ours.stdout)
    # the same layout, line by line, with the token's own id, HMAC and dates
    shape = re.compile(r"[A-Za-z0-9_+/=-]{20,}")
    assert [shape.sub("X", line) for line in java.stdout.splitlines()] == [
        shape.sub("X", line) for line in ours.stdout.splitlines()]
    assert java_row[2:5] == our_row[2:5] == ("User:admin", "User:admin", "User:bob")
    # without --owner-principal Kafka 4.4's tool sends an empty owner list: no token matches
    mine = tools.run(TOOL, *common, "--describe")
    assert mine.stdout == kafkapy_tokens(token_cluster, 1, "--describe").stdout
    assert mine.stdout.splitlines()[:2] == [
        "Calling describe token operation for current user.", "Total number of tokens : 0"]
    described = tools.run(TOOL, *common, "--describe", "--owner-principal", "User:admin")
    ids = [r[0] for r in tokens_in(described.stdout)]
    assert java_row[0] in ids and our_row[0] in ids
    for row in (java_row, our_row):
        tools.run(TOOL, *common, "--expire", "--hmac", row[1], "--expiry-time-period", "-1")
    refused = tools.run(TOOL, *common, "--renew", "--hmac", java_row[1],
                        "--renew-time-period", "-1", check=False)
    ours_refused = kafkapy_tokens(token_cluster, 1, "--renew", "--hmac", java_row[1],
                                  "--renew-time-period", "-1")
    assert refused.returncode == ours_refused.returncode == 1
    assert ours_refused.stderr.splitlines()[0] == refused.stderr.splitlines()[0]
