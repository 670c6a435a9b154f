"""ACL authorization end to end (issue 15): a broker with Kafka's ACL authorizer on a SASL_PLAINTEXT
listener with PLAIN users, driven by kafka-python, confluent-kafka and a raw protocol client.

One broker for the module; each test uses topics, groups and principals of its own so the ACLs
of one test do not decide another's. ``admin`` is a super user; the others start with nothing.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
)

from compat_tests.rawclient import RawClient
from compat_tests.security.helpers import plain_jaas, sasl_conf
from kafkapy.metadata.acl_model import AclOperation as Op
from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.authorizer import operations_from_bit_field
from kafkapy.testing import BrokerProcess, free_port

USERS = {
    name: f"{name}-secret"
    for name in ("admin", "alice", "bob", "carol", "dave", "erin", "trent", "mallory")
}
JAAS = plain_jaas(USERS, me=None)


def secured_overrides(port: int) -> dict[str, str]:
    return {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin",
        "group.initial.rebalance.delay.ms": "0",
    }


@pytest.fixture(scope="module")
def secured(tmp_path_factory) -> Iterator[BrokerProcess]:
    port = free_port()
    proc = BrokerProcess(tmp_path_factory.mktemp("authz"), secured_overrides(port), port=port)
    proc.start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0, proc.log_text()[-3000:]


def kp(user: str) -> dict[str, str]:
    """kafka-python settings for a SASL/PLAIN user."""
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": USERS[user],
    }


def ck(broker: BrokerProcess, user: str, **extra: object) -> dict:
    """confluent-kafka settings for a SASL/PLAIN user."""
    return sasl_conf(broker.bootstrap, "PLAIN", user, USERS[user], **extra)


def admin_client(broker: BrokerProcess, user: str = "admin") -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=broker.bootstrap, **kp(user))


def raw(broker: BrokerProcess, user: str) -> RawClient:
    return RawClient(broker.bootstrap).sasl_plain(user, USERS[user])


def acl(principal, rtype, name, op, perm=ACLPermissionType.ALLOW, pattern=None, host="*"):
    return ACL(
        principal=principal,
        host=host,
        operation=op,
        permission_type=perm,
        resource_pattern=ResourcePattern(rtype, name, pattern or ACLResourcePatternType.LITERAL),
    )


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def grant(broker: BrokerProcess, *acls: ACL) -> None:
    admin = admin_client(broker)
    try:
        result = admin.create_acls(list(acls))
        assert not result["failed"], result
    finally:
        admin.close()


def make_topics(broker: BrokerProcess, *names: str, partitions: int = 1) -> None:
    admin = admin_client(broker)
    try:
        admin.create_topics([NewTopic(n, partitions, 1) for n in names])
    finally:
        admin.close()


def metadata(client: RawClient, names: list[str] | None, **kw):
    from kio.schema.metadata.v12 import request as m

    topics = None if names is None else tuple(m.MetadataRequestTopic(name=n, topic_id=None)
                                              for n in names)
    return client.request(m.MetadataRequest(
        topics=topics, allow_auto_topic_creation=kw.get("auto", False),
        include_topic_authorized_operations=kw.get("ops", False)))


# --- the ACL APIs --------------------------------------------------------------------------------


def test_acl_apis_with_kafka_python(secured: BrokerProcess) -> None:
    admin = admin_client(secured)
    topic = unique("kp-acl")
    literal = acl("User:alice", ResourceType.TOPIC, topic, ACLOperation.READ)
    prefixed = acl("User:alice", ResourceType.GROUP, "kp-g", ACLOperation.READ,
                   pattern=ACLResourcePatternType.PREFIXED)
    denied = acl("User:bob", ResourceType.TOPIC, topic, ACLOperation.WRITE,
                 ACLPermissionType.DENY, host="10.1.2.3")
    try:
        assert admin.create_acls([literal, prefixed, denied])["failed"] == []
        by_alice = ACLFilter(principal="User:alice", host=None, operation=ACLOperation.ANY,
                             permission_type=ACLPermissionType.ANY,
                             resource_pattern=ResourcePatternFilter(
                                 ResourceType.ANY, None, ACLResourcePatternType.ANY))
        found, _ = admin.describe_acls(by_alice)
        patterns = {(a.resource_pattern.resource_name, a.resource_pattern.pattern_type)
                    for a in found}
        assert patterns >= {(topic, ACLResourcePatternType.LITERAL),
                            ("kp-g", ACLResourcePatternType.PREFIXED)}
        # MATCH finds the ACLs that apply to one resource: the literal and the prefixes
        matching = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                             permission_type=ACLPermissionType.ANY,
                             resource_pattern=ResourcePatternFilter(
                                 ResourceType.GROUP, "kp-group-1", ACLResourcePatternType.MATCH))
        found, _ = admin.describe_acls(matching)
        assert [(a.principal, a.resource_pattern.resource_name) for a in found] == [
            ("User:alice", "kp-g")]
        on_topic = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                             permission_type=ACLPermissionType.ANY,
                             resource_pattern=ResourcePatternFilter(
                                 ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL))
        found, _ = admin.describe_acls(on_topic)
        assert {(a.principal, a.host, a.operation, a.permission_type) for a in found} == {
            ("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW),
            ("User:bob", "10.1.2.3", ACLOperation.WRITE, ACLPermissionType.DENY),
        }
        [(_, deleted, error)] = admin.delete_acls([on_topic])
        assert len(deleted) == 2 and error.errno == 0
        assert admin.describe_acls(on_topic)[0] == []
        # invalid ACLs are refused one by one
        bad = acl("alice", ResourceType.TOPIC, topic, ACLOperation.READ)  # no principal type
        cluster_name = acl("User:alice", ResourceType.CLUSTER, "other", ACLOperation.ALTER)
        result = admin.create_acls([bad, cluster_name, literal])
        assert [e.errno for e in result["failed"]] == [ErrorCode.invalid_request] * 2
        assert result["succeeded"] == [literal]
    finally:
        admin.close()
    # a non-super user may neither describe nor change ACLs
    alice = admin_client(secured, "alice")
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            alice.describe_acls(on_topic)
        failed = alice.create_acls([literal])["failed"]
        assert [e.errno for e in failed] == [ErrorCode.cluster_authorization_failed]
    finally:
        alice.close()


def test_acl_apis_with_confluent(secured: BrokerProcess) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
    )
    from confluent_kafka.admin import ResourceType as RT

    admin = AdminClient(ck(secured, "admin"))
    prefix = unique("ck")
    bindings = [
        AclBinding(RT.TOPIC, prefix, ResourcePatternType.PREFIXED, "User:carol", "*",
                   AclOperation.WRITE, AclPermissionType.ALLOW),
        AclBinding(RT.TRANSACTIONAL_ID, f"{prefix}-tx", ResourcePatternType.LITERAL,
                   "User:carol", "*", AclOperation.WRITE, AclPermissionType.ALLOW),
    ]
    for f in admin.create_acls(bindings, request_timeout=10).values():
        assert f.result(10) is None
    by_carol = AclBindingFilter(RT.ANY, None, ResourcePatternType.ANY, "User:carol", None,
                                AclOperation.ANY, AclPermissionType.ANY)
    found = admin.describe_acls(by_carol, request_timeout=10).result(10)
    assert sorted(b.name for b in found) == [prefix, f"{prefix}-tx"]
    [deleted] = admin.delete_acls([by_carol], request_timeout=10).values()
    assert sorted(b.name for b in deleted.result(10)) == [prefix, f"{prefix}-tx"]
    assert admin.describe_acls(by_carol, request_timeout=10).result(10) == []
    # not a super user and no ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED
    carol = AdminClient(ck(secured, "carol"))
    with pytest.raises(KafkaException) as info:
        for f in carol.create_acls(bindings[:1], request_timeout=10).values():
            f.result(10)
    assert info.value.args[0].code() == ErrorCode.cluster_authorization_failed


# --- produce, fetch, groups ----------------------------------------------------------------------


def test_produce_fetch_and_group_matrix(secured: BrokerProcess) -> None:
    orders, secret, pay = unique("orders"), unique("secret"), unique("pay")
    make_topics(secured, orders, secret, f"{pay}-eu")
    grant(
        secured,
        acl("User:alice", ResourceType.TOPIC, orders, ACLOperation.WRITE),
        acl("User:alice", ResourceType.TOPIC, orders, ACLOperation.READ),
        acl("User:alice", ResourceType.GROUP, f"{orders}-g", ACLOperation.READ),
        acl("User:alice", ResourceType.TOPIC, pay, ACLOperation.WRITE,
            pattern=ACLResourcePatternType.PREFIXED),
        # everyone may read the secret topic, except alice (deny wins)
        acl("User:*", ResourceType.TOPIC, secret, ACLOperation.READ),
        acl("User:*", ResourceType.GROUP, f"{secret}-g", ACLOperation.READ),
        acl("User:alice", ResourceType.TOPIC, secret, ACLOperation.READ, ACLPermissionType.DENY),
        acl("User:admin", ResourceType.TOPIC, secret, ACLOperation.WRITE),
    )
    producer = KafkaProducer(bootstrap_servers=secured.bootstrap, **kp("alice"))
    try:
        producer.send(orders, b"o1").get(10)
        producer.send(f"{pay}-eu", b"p1").get(10)  # prefixed ACL
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(secret, b"nope").get(10)
    finally:
        producer.close(timeout=5)
    admin_producer = KafkaProducer(bootstrap_servers=secured.bootstrap, **kp("admin"))
    admin_producer.send(secret, b"s1").get(10)  # super user
    admin_producer.close(timeout=5)

    def consume(user: str, topic: str, group: str) -> list[bytes]:
        consumer = KafkaConsumer(topic, bootstrap_servers=secured.bootstrap, group_id=group,
                                 auto_offset_reset="earliest", consumer_timeout_ms=8000,
                                 **kp(user))
        try:
            for message in consumer:
                return [message.value]
            return []
        finally:
            consumer.close()

    assert consume("alice", orders, f"{orders}-g") == [b"o1"]
    assert consume("bob", secret, f"{secret}-g") == [b"s1"]  # User:* READ
    with pytest.raises(GroupAuthorizationFailedError):  # no READ on that group
        consume("alice", orders, f"{orders}-other")

    # exact codes on the wire
    with raw(secured, "alice") as alice:
        from kio.schema.fetch.v12 import request as f

        fetch = alice.request(f.FetchRequest(
            replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1,
            max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
            topics=tuple(f.FetchTopic(topic=t, partitions=(f.FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                log_start_offset=-1, partition_max_bytes=1 << 20),)) for t in (orders, secret)),
            forgotten_topics_data=(), rack_id=""))
        codes = {t.topic: t.partitions[0].error_code for t in fetch.responses}
        assert codes == {orders: ErrorCode.none, secret: ErrorCode.topic_authorization_failed}
        # Metadata: all topics hide what alice may not describe (DESCRIBE is implied by READ,
        # WRITE: the secret topic stays visible through User:* READ, the deny being on READ)
        listed = {t.name for t in metadata(alice, None).topics}
        assert {orders, f"{pay}-eu", secret} <= listed
    with raw(secured, "dave") as dave:
        assert {orders, f"{pay}-eu"}.isdisjoint(t.name for t in metadata(dave, None).topics)
        # asked by name: TOPIC_AUTHORIZATION_FAILED whether it exists or not (not disclosed)
        got = metadata(dave, [orders, "no-such-topic"], auto=True).topics
        assert [(t.name, t.error_code) for t in got] == [
            (orders, ErrorCode.topic_authorization_failed),
            ("no-such-topic", ErrorCode.topic_authorization_failed),
        ]
        assert all(t.topic_id in (None, uuid.UUID(int=0)) for t in got)  # the zero id


def test_auto_creation_needs_create(secured: BrokerProcess) -> None:
    name = unique("auto")
    grant(secured, acl("User:erin", ResourceType.TOPIC, name, ACLOperation.DESCRIBE))
    with raw(secured, "erin") as erin:
        [t] = metadata(erin, [name], auto=True).topics
        assert t.error_code == ErrorCode.topic_authorization_failed  # DESCRIBE but no CREATE
        grant(secured, acl("User:erin", ResourceType.TOPIC, name, ACLOperation.CREATE))
        # created asynchronously, as Kafka 4.4 does: the first answer has no partitions yet
        [t] = metadata(erin, [name], auto=True).topics
        assert (t.name, t.error_code, len(t.partitions)) == (
            name, ErrorCode.unknown_topic_or_partition, 0)
        deadline = time.monotonic() + 10
        while t.error_code != ErrorCode.none and time.monotonic() < deadline:
            time.sleep(0.05)
            [t] = metadata(erin, [name], auto=True).topics
        assert (t.name, t.error_code, len(t.partitions)) == (name, ErrorCode.none, 1)
        # authorized operations when asked: DESCRIBE and CREATE, nothing else
        [t] = metadata(erin, [name], ops=True).topics
        assert operations_from_bit_field(t.topic_authorized_operations) == [Op.CREATE,
                                                                             Op.DESCRIBE]


# --- admin APIs and transactional ids -----------------------------------------------------------


def test_admin_requests_are_refused_without_acls(secured: BrokerProcess) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource

    mine = unique("bob-topic")
    make_topics(secured, mine)
    bob = admin_client(secured, "bob")
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            bob.create_topics([NewTopic(unique("bob-new"), 1, 1)])
        with pytest.raises(TopicAuthorizationFailedError):
            bob.delete_topics([mine])
        confluent = AdminClient(ck(secured, "bob"))
        for kind, name, code in (("BROKER", "0", ErrorCode.cluster_authorization_failed),
                                 ("TOPIC", mine, ErrorCode.topic_authorization_failed)):
            [future] = confluent.describe_configs([ConfigResource(kind, name)]).values()
            with pytest.raises(KafkaException) as info:
                future.result(10)
            assert info.value.args[0].code() == code
        # ListGroups: only the groups bob may describe (no DESCRIBE on the cluster)
        group, hidden = unique("bob-g"), unique("hidden-g")
        from kafka import OffsetAndMetadata, TopicPartition

        for g in (group, hidden):
            consumer = KafkaConsumer(bootstrap_servers=secured.bootstrap, group_id=g, **kp("admin"))
            consumer.assign([TopicPartition(mine, 0)])
            consumer.commit({TopicPartition(mine, 0): OffsetAndMetadata(0, "", -1)})
            consumer.close()
        grant(secured, acl("User:bob", ResourceType.GROUP, group, ACLOperation.DESCRIBE))
        listed = {g["group_id"] for g in bob.list_groups()}
        assert group in listed and hidden not in listed
        admin = admin_client(secured)
        assert {group, hidden} <= {g["group_id"] for g in admin.list_groups()}
        admin.close()
        # granted: bob may now delete the topic
        grant(secured, acl("User:bob", ResourceType.TOPIC, mine, ACLOperation.DELETE))
        bob.delete_topics([mine])
    finally:
        bob.close()


def test_transactional_and_idempotent_producers(secured: BrokerProcess) -> None:
    from confluent_kafka import KafkaException, Producer
    from kio.schema.init_producer_id.v4.request import InitProducerIdRequest

    topic = unique("idem")
    make_topics(secured, topic)
    with raw(secured, "carol") as carol:
        def init(tid):
            return carol.request(InitProducerIdRequest(
                transactional_id=tid, transaction_timeout=datetime.timedelta(
                    seconds=60), producer_id=-1, producer_epoch=-1)).error_code

        assert init("tx-carol") == ErrorCode.transactional_id_authorization_failed
        assert init(None) == ErrorCode.cluster_authorization_failed  # no WRITE anywhere
        grant(secured,
              acl("User:carol", ResourceType.TOPIC, topic, ACLOperation.WRITE),
              acl("User:carol", ResourceType.TRANSACTIONAL_ID, "tx-carol", ACLOperation.WRITE))
        assert init(None) == ErrorCode.none  # WRITE on some topic (authorizeByResourceType)
        assert init("tx-carol") != ErrorCode.transactional_id_authorization_failed
    # real clients: an idempotent producer works, a transactional id without ACL is refused
    producer = Producer(ck(secured, "carol", **{"enable.idempotence": True}))
    producer.produce(topic, b"v")
    assert producer.flush(15) == 0
    txn = Producer(ck(secured, "carol", **{"transactional.id": "tx-other"}))
    with pytest.raises(KafkaException) as info:
        txn.init_transactions(15)
    assert info.value.args[0].code() == ErrorCode.transactional_id_authorization_failed


def test_transaction_apis_check_their_acls(secured: BrokerProcess) -> None:
    """Each transaction API checks what Kafka's KafkaApis checks, in the same order (trent owns
    a transactional id; mallory has no ACL)."""
    from kio.schema.add_offsets_to_txn.v3.request import AddOffsetsToTxnRequest
    from kio.schema.add_partitions_to_txn.v3 import request as apt
    from kio.schema.add_partitions_to_txn.v4 import request as apt4
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from kio.schema.end_txn.v3.request import EndTxnRequest
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
    from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
    from kio.schema.list_transactions.v1.request import ListTransactionsRequest
    from kio.schema.txn_offset_commit.v3 import request as toc

    E = ErrorCode
    tid, hidden, group = unique("tx-trent"), unique("tx-hidden"), unique("trent-g")
    out, other, source = unique("trent-out"), unique("trent-other"), unique("trent-in")
    make_topics(secured, out, other, source)
    grant(
        secured,
        acl("User:trent", ResourceType.TRANSACTIONAL_ID, tid, ACLOperation.WRITE),
        acl("User:trent", ResourceType.TOPIC, out, ACLOperation.WRITE),
        acl("User:trent", ResourceType.TOPIC, other, ACLOperation.WRITE),
        # trent may write "other" but not see it: DescribeTransactions leaves it out
        acl("User:trent", ResourceType.TOPIC, other, ACLOperation.DESCRIBE,
            ACLPermissionType.DENY),
    )

    def init(client: RawClient, txn: str) -> tuple[int, int]:
        found = client.request(FindCoordinatorRequest(key_type=1, coordinator_keys=(txn,)))
        assert found.coordinators[0].error_code == E.none, found
        got = client.request(InitProducerIdRequest(
            transactional_id=txn, transaction_timeout=datetime.timedelta(seconds=60),
            producer_id=-1, producer_epoch=-1))
        assert got.error_code == E.none, got
        return got.producer_id, got.producer_epoch

    def add(client: RawClient, txn: str, pid: int, epoch: int, topics) -> dict:
        resp = client.request(apt.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=txn, v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch, v3_and_below_topics=tuple(
                apt.AddPartitionsToTxnTopic(name=t, partitions=(0,)) for t in topics)))
        return {t.name: t.results_by_partition[0].partition_error_code
                for t in resp.results_by_topic_v3_and_below}

    def commit_offsets(client: RawClient, pid: int, epoch: int, txn: str = tid) -> dict:
        resp = client.request(toc.TxnOffsetCommitRequest(
            transactional_id=txn, group_id=group, producer_id=pid, producer_epoch=epoch,
            topics=(toc.TxnOffsetCommitRequestTopic(name=source, partitions=(
                toc.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=5,
                                                    committed_leader_epoch=-1,
                                                    committed_metadata=""),)),)))
        return {t.name: t.partitions[0].error_code for t in resp.topics}

    with raw(secured, "admin") as admin:
        init(admin, hidden)
    with raw(secured, "trent") as trent, raw(secured, "mallory") as mallory:
        pid, epoch = init(trent, tid)
        # AddPartitionsToTxn: WRITE on the id, then on each topic; an internal topic never
        assert add(mallory, tid, pid, epoch, [out]) == {
            out: E.transactional_id_authorization_failed}
        assert add(trent, tid, pid, epoch, [out, source, "__consumer_offsets"]) == {
            out: E.operation_not_attempted, source: E.topic_authorization_failed,
            "__consumer_offsets": E.topic_authorization_failed}
        assert add(trent, tid, pid, epoch, [out, other]) == {out: E.none, other: E.none}
        # v4+ is for brokers: CLUSTER_ACTION
        resp = trent.request(apt4.AddPartitionsToTxnRequest(transactions=(
            apt4.AddPartitionsToTxnTransaction(
                transactional_id=tid, producer_id=pid, producer_epoch=epoch, verify_only=True,
                topics=(apt4.AddPartitionsToTxnTopic(name=out, partitions=(0,)),)),)))
        assert resp.error_code == E.cluster_authorization_failed
        # AddOffsetsToTxn: WRITE on the id, then READ on the group
        for client, code in ((mallory, E.transactional_id_authorization_failed),
                             (trent, E.group_authorization_failed)):
            resp = client.request(AddOffsetsToTxnRequest(
                transactional_id=tid, producer_id=pid, producer_epoch=epoch, group_id=group))
            assert resp.error_code == code
        grant(secured, acl("User:trent", ResourceType.GROUP, group, ACLOperation.READ))
        resp = trent.request(AddOffsetsToTxnRequest(
            transactional_id=tid, producer_id=pid, producer_epoch=epoch, group_id=group))
        assert resp.error_code == E.none
        # TxnOffsetCommit: the id, the group, then READ on each topic
        assert commit_offsets(mallory, pid, epoch) == {
            source: E.transactional_id_authorization_failed}
        assert commit_offsets(trent, pid, epoch) == {source: E.topic_authorization_failed}
        grant(secured, acl("User:trent", ResourceType.TOPIC, source, ACLOperation.READ))
        assert commit_offsets(trent, pid, epoch) == {source: E.none}
        # DescribeTransactions and ListTransactions: DESCRIBE on the id; only the topics trent
        # may describe are listed (not "other", nor __consumer_offsets)
        described = trent.request(DescribeTransactionsRequest(transactional_ids=(tid, hidden)))
        mine, theirs = described.transaction_states
        assert (mine.error_code, mine.transaction_state) == (E.none, "Ongoing")
        assert [t.topic for t in mine.topics] == [out]
        assert theirs.error_code == E.transactional_id_authorization_failed
        for client, visible in ((trent, {tid}), (mallory, set())):
            listed = client.request(ListTransactionsRequest())
            ids = {t.transactional_id for t in listed.transaction_states}
            assert ids & {tid, hidden} == visible
        # EndTxn: WRITE on the id
        for client, code in ((mallory, E.transactional_id_authorization_failed), (trent, E.none)):
            resp = client.request(EndTxnRequest(
                transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=True))
            assert resp.error_code == code


def test_cluster_operations_and_super_user(secured: BrokerProcess) -> None:
    from kio.schema.describe_cluster.v1.request import DescribeClusterRequest

    def cluster_ops(user: str) -> list[Op]:
        with raw(secured, user) as c:
            resp = c.request(DescribeClusterRequest(include_cluster_authorized_operations=True,
                                                    endpoint_type=1))
            assert resp.error_code == ErrorCode.none
            return operations_from_bit_field(resp.cluster_authorized_operations)

    assert cluster_ops("admin") == [Op.CREATE, Op.ALTER, Op.DESCRIBE, Op.CLUSTER_ACTION,
                                    Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE]
    assert cluster_ops("dave") == []  # no DESCRIBE on the cluster: 0
    grant(secured, acl("User:dave", ResourceType.CLUSTER, "kafka-cluster", ACLOperation.ALTER))
    assert cluster_ops("dave") == [Op.ALTER, Op.DESCRIBE]  # ALTER implies DESCRIBE
    # a deny for everyone does not bind a super user
    name = unique("denied-to-all")
    make_topics(secured, name)
    grant(secured, acl("User:*", ResourceType.TOPIC, name, ACLOperation.ALL,
                       ACLPermissionType.DENY))
    producer = KafkaProducer(bootstrap_servers=secured.bootstrap, **kp("admin"))
    producer.send(name, b"x").get(10)
    producer.close(timeout=5)


# --- kafka-acls.sh -------------------------------------------------------------------------------


def kafka_acls(broker: BrokerProcess, config: str, *args: str, stdin: str = "") -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "acls", "--bootstrap-server",
         broker.bootstrap, "--command-config", config, *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )
    return proc.returncode, proc.stdout + proc.stderr


def properties_file(directory, user: str):
    """A Java client properties file for a SASL/PLAIN user (the tools' --command-config)."""
    path = directory / f"{user}.properties"
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                    f"sasl.jaas.config={plain_jaas({}, (user, USERS[user]))}\n")
    return path


def test_kafka_acls_round_trip(secured: BrokerProcess, tmp_path) -> None:
    config = properties_file(tmp_path, "admin")
    topic, group = unique("cli"), unique("cli-g")
    make_topics(secured, topic)
    code, out = kafka_acls(secured, str(config), "--add", "--allow-principal", "User:erin",
                           "--consumer", "--topic", topic, "--group", group)
    assert code == 0, out
    pattern = f"ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)"
    assert out.splitlines()[:3] == [
        f"Adding ACLs for resource `ResourcePattern(resourceType=GROUP, name={group}, "
        "patternType=LITERAL)`: ",
        " \t(principal=User:erin, host=*, operation=READ, permissionType=ALLOW) ",
        "",
    ]
    assert f"Adding ACLs for resource `{pattern}`: \n \t(principal=User:erin, host=*, " \
           "operation=READ, permissionType=ALLOW)\n\t(principal=User:erin, host=*, " \
           "operation=DESCRIBE, permissionType=ALLOW) \n" in out
    code, out = kafka_acls(secured, str(config), "--list", "--topic", topic)
    assert code == 0 and out.startswith(f"Current ACLs for resource `{pattern}`: \n"), out
    # the ACLs apply: erin consumes with her group
    producer = KafkaProducer(bootstrap_servers=secured.bootstrap, **kp("admin"))
    producer.send(topic, b"hello").get(10)
    producer.close(timeout=5)
    consumer = KafkaConsumer(topic, bootstrap_servers=secured.bootstrap, group_id=group,
                             auto_offset_reset="earliest", consumer_timeout_ms=8000, **kp("erin"))
    assert next(iter(consumer)).value == b"hello"
    consumer.close()
    # --remove asks first; "n" keeps them, --force does not ask
    code, out = kafka_acls(secured, str(config), "--remove", "--topic", topic, stdin="n\n")
    assert code == 0 and "Are you sure you want to delete all ACLs for resource filter" in out
    assert pattern in kafka_acls(secured, str(config), "--list", "--topic", topic)[1]
    code, out = kafka_acls(secured, str(config), "--remove", "--force", "--topic", topic,
                           "--group", group)
    assert code == 0, out
    assert kafka_acls(secured, str(config), "--list", "--topic", topic, "--group", group) == (0, "")
    # usage mistakes and refusals: one line, exit 1
    code, out = kafka_acls(secured, str(config), "--add", "--allow-principal", "User:x",
                           "--operation", "Write", "--group", group)
    assert code == 1 and "ResourceType GROUP only supports operations" in out
    code, out = kafka_acls(secured, str(tmp_path / "none.properties"), "--list")
    assert code == 1 and "Error" in out and "Traceback" not in out


def test_console_consumer_stops_on_authorization_errors(secured: BrokerProcess, tmp_path) -> None:
    """kafka-console-consumer ends with Kafka's message and exit 1 when the group or the topic
    is not authorized, as Java's ConsoleConsumer does, instead of waiting without output."""
    config = properties_file(tmp_path, "erin")
    topic, hidden = unique("console"), unique("console-hidden")
    make_topics(secured, topic, hidden)
    grant(secured, acl("User:erin", ResourceType.TOPIC, topic, ACLOperation.READ))

    def consume(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kafkapy.cli.main", "console-consumer", "--bootstrap-server",
             secured.bootstrap, "--command-config", str(config), "--from-beginning",
             "--timeout-ms", "20000", *args],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )

    for args, reason in (
        (("--topic", topic, "--group", unique("no-acl-g")), "Group authorization failed"),
        (("--topic", hidden), "Topic authorization failed"),
    ):
        proc = consume(*args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert "Error processing message, terminating consumer process" in proc.stderr, proc.stderr
        assert reason in proc.stderr and "Traceback" not in proc.stderr


def test_describe_groups_reports_authorized_operations(secured: BrokerProcess) -> None:
    """DescribeGroups: GROUP_AUTHORIZATION_FAILED without DESCRIBE on the group; with it, the
    operations the caller may perform when asked (READ implies DESCRIBE)."""
    from kafka import OffsetAndMetadata, TopicPartition
    from kio.schema.describe_groups.v5.request import DescribeGroupsRequest

    topic, readable, described, hidden = (unique("dg"), unique("dg-read"), unique("dg-desc"),
                                          unique("dg-hidden"))
    make_topics(secured, topic)
    for g in (readable, described, hidden):
        consumer = KafkaConsumer(bootstrap_servers=secured.bootstrap, group_id=g, **kp("admin"))
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(0, "", -1)})
        consumer.close()
    grant(secured,
          acl("User:dave", ResourceType.GROUP, readable, ACLOperation.READ),
          acl("User:dave", ResourceType.GROUP, described, ACLOperation.DESCRIBE))
    with raw(secured, "dave") as dave:
        resp = dave.request(DescribeGroupsRequest(groups=(readable, described, hidden),
                                                  include_authorized_operations=True))
    got = {g.group_id: (g.error_code, operations_from_bit_field(g.authorized_operations))
           for g in resp.groups}
    assert got[readable] == (ErrorCode.none, [Op.READ, Op.DESCRIBE])
    assert got[described] == (ErrorCode.none, [Op.DESCRIBE])
    assert got[hidden][0] == ErrorCode.group_authorization_failed
