"""The suite's --profile runs: py-spy samples of the broker (TestBroker.profile) under produce
and Metadata load, summarized as top functions."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import suite
from common import create_topic, progress
from raw_client import Raw, metadata_v12_all, timed_roundtrips
from raw_produce import raw_produce
from suite import Results, Settings, pinned_broker
from suite_produce import PRODUCE_BROKER, confluent_produce

from kafkapy.testing import BrokerProcess
from kafkapy.testing.profiling import py_spy_binary


def profile_broker(b: BrokerProcess, name: str, load, res: Results, seconds: float = 4.0) -> None:
    """py-spy the broker while `load()` runs; write collapsed stacks and top functions."""
    if py_spy_binary() is None:
        progress("py-spy not installed (.venv/bin/pip install py-spy): profile skipped")
        return
    out = suite.RESULTS / "profiles"
    out.mkdir(parents=True, exist_ok=True)
    raw = out / f"{name}.collapsed.txt"
    progress(f"profiling the broker under {name} load with py-spy")
    load()  # warm: lazily imported schemas and first-request costs stay out of the profile
    proc = b.profile(raw, seconds)
    assert proc is not None
    time.sleep(0.5)
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        load()
    _, err = proc.communicate(timeout=60)
    if not raw.exists():
        progress(f"py-spy failed: {err.decode(errors='replace')[-400:]}")
        return
    top = summarize_profile(raw)
    (out / f"{name}.top.txt").write_text(top)
    res.extra.setdefault("profiles", {})[name] = top  # type: ignore[index]


def summarize_profile(path: Path, n: int = 25) -> str:
    """Top functions by self and by total (inclusive) samples from py-spy's collapsed stacks."""
    self_c: Counter[str] = Counter()
    total_c: Counter[str] = Counter()
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        k = int(count)
        samples += k
        frames = [f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].split("/")[-1] + ")"
                  if " (" in f else f for f in stack.split(";")]
        frames = [f for f in frames if not f.startswith("process ") and not f.startswith("thread ")]
        if frames:
            self_c[frames[-1]] += k
        for f in set(frames):
            total_c[f] += k
    lines = [f"{samples} samples", "", "self %   function (file)"]
    lines += [f"{c / samples * 100:6.1f}  {f}" for f, c in self_c.most_common(n)]
    lines += ["", "total %  function (file)"]
    lines += [f"{c / samples * 100:6.1f}  {f}" for f, c in total_c.most_common(n)]
    return "\n".join(lines) + "\n"


def run_profiles(s: Settings, res: Results, root: Path) -> None:
    with pinned_broker(root, "profile", PRODUCE_BROKER) as b:
        for size in (100, 1024):
            topic = f"prof{size}"
            create_topic(b, topic, 1)
            profile_broker(b, f"produce-{size}B",
                           lambda t=topic, z=size: confluent_produce(b.bootstrap, t, z, 1.0),
                           res)
            topic = f"profraw{size}"
            create_topic(b, topic, 1)
            profile_broker(b, f"produce-raw-{size}B",
                           lambda t=topic, z=size: raw_produce(b.bootstrap, t, z, 1.0), res)
        create_topic(b, "wide", 1000)
        c = Raw(b.bootstrap)
        try:
            profile_broker(b, "metadata-1000-partitions",
                           lambda: timed_roundtrips(c, 3, 12, metadata_v12_all(), 20, True), res)
        finally:
            c.close()
