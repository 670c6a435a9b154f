"""Env, the broker a sweep runs against, and the constants every check shares."""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any

from kafkapy.testing import BrokerProcess

from ..rawclient import RawClient, encode_request

SWEEP = "sweep"
ZERO_UUID = uuid.UUID(int=0)
NOW_MS = int(time.time() * 1000) - 60_000  # recent enough that retention never applies
SEED = {0: 5, 1: 3}  # records written to each partition of "sweep" before the sweep
SEED_TS_STEP = 10  # record i of a seed batch has timestamp NOW_MS + 10 * i
RETENTION_OVERRIDE = "86400000"
UNEXPECTED = "unexpected error"


@dataclasses.dataclass
class Env:
    broker: BrokerProcess
    topic_id: uuid.UUID = ZERO_UUID
    node_id: int = -1
    cluster_id: str = ""
    leader_epoch: int = 0
    hw: dict[int, int] = dataclasses.field(default_factory=dict)  # expected HW of "sweep"
    producer_ids: set[int] = dataclasses.field(default_factory=set)
    log_mark: int = 0

    def client(self) -> RawClient:
        return RawClient(self.broker.bootstrap)

    def request(self, entity: Any) -> Any:
        with self.client() as c:
            return c.request(entity)

    def response_body(self, entity: Any) -> bytes:
        """The response's body undecoded (for answers kio cannot decode, such as a token
        refusal's -1 timestamps)."""
        from kafkapy.protocol.headers import is_flexible

        with self.client() as c:
            c.send_frame(encode_request(entity, 1, c.client_id))
            frame = c.recv_frame()
        return frame[5:] if is_flexible(entity.__api_key__, entity.__version__) else frame[4:]

    def new_log(self) -> str:
        """Broker log written since the previous call."""
        text = self.broker.log_text()
        new, self.log_mark = text[self.log_mark :], len(text)
        return new


def ok(code: Any) -> bool:
    return int(code) == 0
