"""EmbeddedStore's own behaviour: durability across reopening and crashes, one process per file.

The store contract it shares with ZooKeeperStore (paths, versions, ephemerals, multi, watches,
threads) runs against both stores in test_zk_store_contract.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkapy.metadata.embedded import EmbeddedStore
from kafkapy.metadata.errors import StoreLockedError


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "meta" / "__metadata.db"


@pytest.fixture
def store(db: Path):
    s = EmbeddedStore(db)
    yield s
    s.close()


def test_ephemerals_of_crashed_process_removed_at_open(db: Path) -> None:
    code = f"""
import os
from kafkapy.metadata.embedded import EmbeddedStore
s = EmbeddedStore({str(db)!r})
s.create('/eph', b'e', ephemeral=True)
s.create('/kept', b'k')
s.multi([])
os._exit(0)  # no close: a crash
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    with EmbeddedStore(db) as s:
        assert s.exists("/eph") is None
        assert s.get("/kept")[0] == b"k"
        assert s.exists("/").cversion >= 3  # type: ignore[union-attr]


def test_second_open_is_refused(store: EmbeddedStore, db: Path) -> None:
    with pytest.raises(StoreLockedError):
        EmbeddedStore(db)


def test_persistence_across_reopen(db: Path) -> None:
    with EmbeddedStore(db) as s:
        s.create("/a", b"1")
        s.set("/a", b"2")
    with EmbeddedStore(db) as s:
        data, stat = s.get("/a")
        assert data == b"2" and stat.version == 1
        assert stat.mzxid > stat.czxid
