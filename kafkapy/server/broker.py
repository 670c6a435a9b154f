"""The broker: wires config, metadata, storage and listeners together, and owns their lifecycle.

Startup: open the log directories (recovering after an unclean stop), open the metadata store,
ensure the cluster id, register this broker and take the controller role (single-broker embedded
mode), open or create the logs of every partition assigned here, watch config change
notifications (server/config/config_listener.py) and, with an authorizer, load the ACLs and watch
their changes (server/security/acl_listener.py), then accept connections. On shutdown
(SIGINT/SIGTERM) connections stop being accepted, logs are flushed and checkpointed and a
clean-shutdown marker is written, so the next start skips recovery. A broker whose every log
directory failed stops itself with exit status 1 (server/log_manager/log_dir_failures.py). Off the
main thread (an embedded broker of kafkapy.testing, a trio loop in a thread) there are no signals:
the broker runs until its caller cancels it (and shuts down the same way) or until it halts itself.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import signal
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from kafkapy.metadata.cluster import ClusterMetadata
from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.models import Endpoint
from kafkapy.security.authorizer import AclAuthorizer
from kafkapy.server.config.broker_config import BrokerConfig
from kafkapy.storage.log_manager import LogManager

from . import apis  # noqa: F401  (importing the package registers every API handler)
from .config.config_listener import ConfigChangeListener
from .config.connection_limit_configs import apply_connection_limits
from .coordinator.group_service import GroupService
from .coordinator.producer_ids import ProducerIdAllocator
from .coordinator.txn_verification import AcceptAllVerifier, TxnVerifier
from .fetch_sessions import FetchSessionCache
from .log_manager.log_dir_failures import LogDirFailureHandler
from .log_manager.log_maintenance import run_log_maintenance
from .network.connection_quotas import ConnectionQuotas
from .network.idle_expiry import IdleExpiry
from .network.listeners import serve_listeners
from .network.memory_pool import memory_pool
from .quota_enforcement import BrokerQuotas
from .replication.purgatory import Purgatory
from .replication.registration import register_broker
from .security.acl_listener import AclChangeListener
from .security.scram_cache import ScramCredentialCache
from .security.token_manager import DelegationTokenManager
from .topics import TopicRegistry

if TYPE_CHECKING:
    from kafkapy.metadata.store import MetadataStore

    from .coordinator.txn_service import TxnService
    from .replication.replica_manager import ReplicaManager

log = logging.getLogger("kafkapy.broker")


class Broker:
    """One broker process's state. Handlers reach everything through it."""

    # the broker's services, opened by start() (no request is served before it returns)
    store: MetadataStore
    cluster: ClusterMetadata
    logs: LogManager
    log_dir_failures: LogDirFailureHandler
    producer_ids: ProducerIdAllocator
    topics: TopicRegistry
    groups: GroupService
    txn: TxnService

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.broker_id: int = config.broker_id
        self.log_dirs: list[Path] = list(config.log_dir_paths)
        self.connections: set[int] = set()
        # requests waiting for partitions to change (long-poll Fetch, acks=all Produce)
        self.appended = Purgatory()
        # incremental fetch sessions (KIP-227)
        self.fetch_sessions = FetchSessionCache(config.max_incremental_fetch_session_cache_slots)
        self.cluster_id = ""
        self.controller_epoch = 0
        self.replicas: ReplicaManager | None = None  # ZooKeeper mode; None when embedded
        self.stopped = False  # stop() ran: background tasks end
        self.bound_port: int | None = None  # the first listener's
        self.bound_ports: dict[str, int] = {}  # listener name -> bound port
        self.scram_credentials = ScramCredentialCache()
        self.delegation_tokens = DelegationTokenManager(self)  # loaded by start()
        # dynamic broker configs (/config/brokers/<id> and /config/brokers/<default>)
        self.dynamic_configs: dict[str, str] = {}
        self.dynamic_default_configs: dict[str, str] = {}
        self.dynamic_config_zxids: dict[str, int] = {}  # entity -> mzxid of the configs held
        self.config_listener: ConfigChangeListener | None = None
        # KIP-890 verification of transactional produce (the transaction coordinator replaces it)
        self.txn_verifier: TxnVerifier = AcceptAllVerifier()
        # floods: connection limits, the request memory pool, idle connection expiry
        self.quotas = ConnectionQuotas()  # the limits in force: start() (dynamic configs too)
        self.request_memory = memory_pool(config.queued_max_request_bytes)
        self.idle = IdleExpiry(config.connections_max_idle_ms)
        # storage faults: the reaction to a failed log directory; halt() ends run_broker
        self.exit_code = 0
        self.stop_requested = trio.Event()
        # the ACL authorizer (server/security/authorization.py); None: every request is allowed
        self.authorizer = AclAuthorizer(config.authorizer) if config.authorizer else None
        self.acl_listener: AclChangeListener | None = None
        self.client_quotas = BrokerQuotas(config)  # server/quota_enforcement.py

    def opened(self, service: str) -> Any:
        """The service ``start()`` has opened under that name, or None: before ``start()`` got
        to it (it failed half-way, or it is still running) the typed attribute is absent."""
        return vars(self).get(service)

    def halt(self, exit_code: int) -> None:
        """Stop the broker (as on SIGTERM, but without moving leaderships) with this status."""
        self.exit_code = exit_code
        self.stop_requested.set()

    @property
    def broker_props(self) -> Any:
        """The server.properties values set explicitly (for config sources and synonyms)."""
        return self.config.raw

    @property
    def advertised_host(self) -> str:
        return self.config.advertised_host

    @property
    def advertised_port(self) -> int:
        return self.config.advertised_port

    @property
    def endpoints(self) -> list[Endpoint]:
        """Every advertised listener, as registered in /brokers/ids/N."""
        return [
            Endpoint(a.name, a.host, a.port, a.security_protocol)
            for a in self.config.advertised_listeners
        ]

    def endpoint(self, listener_name: str) -> Endpoint | None:
        """This broker's advertised endpoint on ``listener_name`` (None: no such listener)."""
        return next((e for e in self.endpoints if e.listener_name == listener_name), None)

    def register(self) -> None:
        """Register this broker with all its endpoints (blocking store call)."""
        self.cluster.register_broker(
            self.broker_id,
            self.advertised_host,
            self.advertised_port,
            rack=self.config.broker_rack,
            listeners=self.endpoints,
        )

    def start(self) -> None:
        """Open storage and metadata (synchronous part of startup)."""
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
        self.store = self._open_store()
        self.cluster = ClusterMetadata(self.store)
        # Kafka 4.4 formats a new cluster (eligible leader replicas on) with min.insync.replicas
        # as a cluster-wide dynamic default, the value of the config it was formatted with
        self.cluster_id = self.cluster.ensure_cluster_id(
            {"min.insync.replicas": str(self.config.min_insync_replicas)}
        )
        self.dynamic_configs = self.cluster.broker_configs(self.broker_id)
        self.dynamic_default_configs = self.cluster.broker_configs("<default>")
        apply_connection_limits(self)
        self.logs = LogManager(self.log_dirs, self._default_log_config())
        self.logs.startup(self.broker_id, self.cluster_id)
        self.log_dir_failures = LogDirFailureHandler(self)
        register_broker(self)  # waits out a killed predecessor's registration
        self.scram_credentials.load(self.store)
        self.delegation_tokens.start()
        self.client_quotas.load(self.store)
        if not self.config.zookeeper_connect:
            # embedded: the lone broker is the controller
            self.controller_epoch = self.cluster.elect_controller(self.broker_id)
        self.producer_ids = ProducerIdAllocator(self.store, self.broker_id)
        self.topics = TopicRegistry(self)
        self.topics.load()
        if self.config.zookeeper_connect:
            # ZooKeeper mode: controller election, leadership and replication
            from .replication.replica_manager import ReplicaManager

            self.replicas = ReplicaManager(self)
            self.replicas.start()
        self.config_listener = ConfigChangeListener(self)
        self.config_listener.start()
        if self.authorizer is not None:
            self.acl_listener = AclChangeListener(self.store, self.authorizer)
            self.acl_listener.start()
        self.groups = GroupService(self)
        self.groups.start()
        from .coordinator.txn_service import TxnService

        self.txn = TxnService(self)
        self.txn.start()

    def _open_store(self) -> MetadataStore:
        """ZooKeeper when zookeeper.connect is set, else the embedded store in the first log dir."""
        if self.config.zookeeper_connect:
            from kafkapy.metadata.zookeeper import ZooKeeperStore

            return ZooKeeperStore(
                self.config.zookeeper_connect,
                session_timeout_ms=self.config.zookeeper_session_timeout_ms,
                connection_timeout_ms=self.config.zookeeper_connection_timeout_ms,
            )
        return EmbeddedStore.in_dir(self.log_dirs[0])

    def _default_log_config(self):
        from .config.log_configs import log_config_for_broker

        return log_config_for_broker(self, {})

    def stop(self) -> None:
        """Stop what start() opened (all of it, or what it got to before it failed)."""
        if self.stopped:
            return
        self.stopped = True
        if self.config_listener is not None:
            self.config_listener.stop()
        if self.acl_listener is not None:
            self.acl_listener.stop()
        self.delegation_tokens.stop()
        if self.replicas is not None:
            self.replicas.stop()
        logs, store = self.opened("logs"), self.opened("store")
        if logs is not None:
            logs.shutdown()
        if store is not None:
            store.close()

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Accept connections on every listener until cancelled (server/network/listeners.py)."""
        await serve_listeners(self, task_status=task_status)


async def _stop_when_requested(broker: Broker, scope: trio.CancelScope) -> None:
    await broker.stop_requested.wait()
    scope.cancel()


GC_GEN0_THRESHOLD = 20_000


def tune_gc() -> None:
    """Keep the cyclic garbage collector off the request path as much as it can be: what
    startup created (modules, kio's entity classes, the topic registry) is frozen out of the
    collector's scans, and the young generation is collected after 20,000 net allocations
    instead of 700. Requests allocate many short-lived containers (refcounting frees them);
    with the default threshold a young collection ran every few requests (about 6 % of an
    empty long-poll Fetch's CPU in a perf profile), and the full collections that follow
    them walked every startup object again."""
    gc.collect()
    gc.freeze()
    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


async def run_broker(
    config: BrokerConfig, *, task_status: Any = trio.TASK_STATUS_IGNORED
) -> int:
    """Run a broker until SIGINT or SIGTERM (on the main thread), until cancelled, or until it
    halts itself (no log directory left), then shut it down; returns the exit status.
    ``task_status.started(broker)`` once it accepts connections."""
    # SIGINT/SIGTERM are caught from now on: one that comes while the broker starts (recovering
    # its logs, binding its listener) stops it cleanly once it has started, never half-way
    signals = contextlib.ExitStack()
    received = None
    if threading.current_thread() is threading.main_thread():
        received = signals.enter_context(trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM))
    broker = Broker(config)
    broker.start()
    if threading.current_thread() is threading.main_thread():
        tune_gc()  # a broker process of its own; a broker in a test's thread leaves its GC be
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_when_requested, broker, nursery.cancel_scope)
            await nursery.start(broker.appended.run)
            await nursery.start(broker.log_dir_failures.run)
            if broker.replicas is not None:
                await nursery.start(broker.replicas.run)
            await nursery.start(broker.groups.run)
            await nursery.start(broker.txn.run)
            await nursery.start(broker.config_listener.run)
            await nursery.start(broker.idle.run)
            if broker.acl_listener is not None:
                await nursery.start(broker.acl_listener.run)
            await nursery.start(broker.delegation_tokens.run)
            broker.client_quotas.start()
            await nursery.start(broker.serve)
            nursery.start_soon(run_log_maintenance, broker)
            task_status.started(broker)
            if received is None:
                await trio.sleep_forever()  # embedded: signals are the host's, not ours
            async for sig in received:
                log.info("shutting down on signal=%s", signal.Signals(sig).name)
                if broker.replicas is not None and broker.config.controlled_shutdown_enable:
                    await broker.replicas.controlled_shutdown()
                nursery.cancel_scope.cancel()
                break
    finally:
        signals.close()
        broker.stop()
        log.info("kafkapy stopped broker.id=%s exit_code=%d", broker.broker_id, broker.exit_code)
    return broker.exit_code


def new_topic_id() -> uuid.UUID:
    """A random topic id that is never the zero id or Kafka's reserved ones (uuid4 never is)."""
    return uuid.uuid4()
