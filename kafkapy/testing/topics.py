"""Create and delete topics for tests, fast: one blocking wire connection to the controller.

A fixture that gives every test its own topic pays for CreateTopics and DeleteTopics each time,
so they go over a kept-open connection (kafkapy/cli/wire.py) instead of a client library's
admin start-up. Works against any Kafka (``--kafka-bootstrap``): requests go to the controller
named by Metadata, with a retry when the controller moved, and a created topic is returned once
Metadata shows a leader for each of its partitions.
"""

from __future__ import annotations

import datetime
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

NOT_CONTROLLER = 41
TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMEOUT = datetime.timedelta(seconds=30)
_MAX_NAME = 249


class TopicAdminError(RuntimeError):
    """CreateTopics or DeleteTopics failed: the error name and the broker's message."""


class KafkaTopic(str):
    """A topic name (use it wherever a name goes) that also knows its partitions and configs."""

    partitions: int
    replication_factor: int
    config: dict[str, str]

    def __new__(
        cls, name: str, partitions: int, replication_factor: int, config: Mapping[str, str]
    ) -> KafkaTopic:
        topic = super().__new__(cls, name)
        topic.partitions = partitions
        topic.replication_factor = replication_factor
        topic.config = dict(config)
        return topic

    @property
    def name(self) -> str:
        return str(self)


def topic_name(hint: str, *, unique: bool = True) -> str:
    """A legal topic name from ``hint`` (a test's name), with a random suffix when ``unique``."""
    base = re.sub(r"[^a-zA-Z0-9._-]+", "-", hint).strip("-.") or "topic"
    suffix = f"-{uuid.uuid4().hex[:8]}" if unique else ""
    return base[: _MAX_NAME - len(suffix)] + suffix


class Topics:
    """Topic administration against ``bootstrap`` (a comma-separated list of host:port)."""

    def __init__(self, bootstrap: str, *, timeout: float = 30.0) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._conn: Any = None
        self._controller: tuple[str, int] | None = None
        self.created = 0
        self.deleted = 0
        self.seconds = 0.0  # spent creating and deleting, for the plugin's summary

    # --- connections --------------------------------------------------------------------------

    def _connect(self, where: tuple[str, int] | None) -> Any:
        from kafkapy.cli.wire import Connection, connect_any

        if where is None:
            return connect_any(self.bootstrap, self.timeout)
        return Connection(where[0], where[1], self.timeout, client_id="kafkapy-testing")

    @staticmethod
    def _metadata_request(topics: list[str]) -> Any:
        from kio.schema.metadata.v12 import request as q

        return q.MetadataRequest(
            topics=tuple(q.MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=t) for t in topics),
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )

    def _metadata(self, topics: list[str]) -> Any:
        """Metadata from any bootstrap broker, on a connection of its own."""
        with self._connect(None) as conn:
            return conn.request(self._metadata_request(topics))

    def _at_controller(self, request: Any) -> Any:
        """Send to the controller; on NOT_CONTROLLER or a lost connection, look it up again."""
        last: Exception | None = None
        for attempt in range(20):
            if self._conn is None:
                if self._controller is None:
                    meta = self._metadata([])
                    brokers = {b.node_id: (b.host, b.port) for b in meta.brokers}
                    self._controller = brokers.get(meta.controller_id)
                try:
                    self._conn = self._connect(self._controller)
                except (ConnectionError, OSError) as e:
                    last, self._controller = e, None
                    time.sleep(min(0.05 * (attempt + 1), 0.5))
                    continue
            try:
                response = self._conn.request(request)
            except (ConnectionError, OSError) as e:
                last = e
                self.close()
                continue
            codes = [t.error_code for t in getattr(response, "topics", ())] + [
                t.error_code for t in getattr(response, "responses", ())
            ]
            if NOT_CONTROLLER in codes:
                self.close()
                time.sleep(min(0.05 * (attempt + 1), 0.5))
                continue
            return response
        raise TopicAdminError(f"no controller of {self.bootstrap} answered: {last}")

    def close(self) -> None:
        conn, self._conn, self._controller = self._conn, None, None
        if conn is not None:
            conn.close()

    # --- topics -------------------------------------------------------------------------------

    def create(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: Mapping[str, Any] | None = None,
    ) -> KafkaTopic:
        from kio.schema.create_topics.v7 import request as q

        from kafkapy.protocol.errors import error_name

        started = time.perf_counter()
        configs = {k: str(v) for k, v in (config or {}).items()}
        request = q.CreateTopicsRequest(
            topics=(
                q.CreatableTopic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=replication_factor,
                    assignments=(),
                    configs=tuple(
                        q.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()
                    ),
                ),
            ),
            timeout=REQUEST_TIMEOUT,
            validate_only=False,
        )
        result = self._at_controller(request).topics[0]
        if result.error_code:
            raise TopicAdminError(
                f"creating topic {name!r}: {error_name(result.error_code)}"
                + (f": {result.error_message}" if result.error_message else "")
            )
        self._wait_for_leaders(name, partitions)
        self.created += 1
        self.seconds += time.perf_counter() - started
        return KafkaTopic(name, partitions, replication_factor, configs)

    def _wait_for_leaders(self, name: str, partitions: int) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            topics = self._at_controller(self._metadata_request([name])).topics
            parts = topics[0].partitions if topics and topics[0].error_code == 0 else ()
            if len(parts) == partitions and all(p.leader_id >= 0 for p in parts):
                return
            if time.monotonic() > deadline:
                raise TopicAdminError(f"topic {name!r} has no leader after {self.timeout}s")
            time.sleep(0.01)

    def delete(self, name: str) -> None:
        """Delete ``name``; a topic that is already gone is not an error."""
        from kio.schema.delete_topics.v6 import request as q

        from kafkapy.protocol.errors import error_name

        started = time.perf_counter()
        request = q.DeleteTopicsRequest(
            topics=(q.DeleteTopicState(name=name, topic_id=uuid.UUID(int=0)),),
            timeout=REQUEST_TIMEOUT,
        )
        code = self._at_controller(request).responses[0].error_code
        if code not in (0, UNKNOWN_TOPIC_OR_PARTITION):
            raise TopicAdminError(f"deleting topic {name!r}: {error_name(code)}")
        self.deleted += 1
        self.seconds += time.perf_counter() - started
