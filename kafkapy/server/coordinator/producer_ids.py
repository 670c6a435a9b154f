"""Producer id allocation in blocks recorded in the metadata store.

As Kafka's ZooKeeper mode does, a broker claims a block of ids by updating
/latest_producer_id_block with a conditional write, then hands ids out of it; ids are never reused
across restarts because the claimed block is persisted before any id from it is used.
"""

from __future__ import annotations

import json

from kafkapy.metadata.errors import BadVersionError, NoNodeError
from kafkapy.metadata.store import MetadataStore

PATH = "/latest_producer_id_block"
BLOCK_SIZE = 1000


class ProducerIdAllocator:
    def __init__(self, store: MetadataStore, broker_id: int) -> None:
        self._store = store
        self._broker_id = broker_id
        self._next = 0
        self._end = -1  # inclusive end of the current block

    def allocate(self) -> int:
        if self._next > self._end:
            self._claim_block()
        pid = self._next
        self._next += 1
        return pid

    def _claim_block(self) -> None:
        while True:
            try:
                data, stat = self._store.get(PATH)
            except NoNodeError:
                start = 0
                doc = self._doc(start)
                try:
                    self._store.create(PATH, doc, makepath=True)
                except Exception:
                    continue
                self._next, self._end = start, start + BLOCK_SIZE - 1
                return
            # Kafka creates the node empty; an empty node means no block was claimed yet
            start = int(json.loads(data)["block_end"]) + 1 if data else 0
            try:
                self._store.set(PATH, self._doc(start), version=stat.version)
            except BadVersionError:
                continue
            self._next, self._end = start, start + BLOCK_SIZE - 1
            return

    def _doc(self, start: int) -> bytes:
        return json.dumps(
            {
                "version": 1,
                "broker": self._broker_id,
                "block_start": str(start),
                "block_end": str(start + BLOCK_SIZE - 1),
            }
        ).encode()
