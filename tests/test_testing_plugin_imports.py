"""The pytest plugin costs unrelated test runs nothing.

pytest imports kafkapy's plugin (the ``pytest11`` entry point) in every run of every project
installed next to kafkapy. Importing it must load only pytest, the standard library and the
plugin's own two modules: no broker, trio, kio, clients or ZooKeeper, and no side effect, until a
test asks for a Kafka fixture.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

CHECK = """
import json, sys
import pytest
before = set(sys.modules)
import kafkapy.testing.pytest_plugin
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_entry_point_names_the_plugin() -> None:
    found = [ep for ep in entry_points(group="pytest11") if ep.name == "kafkapy"]
    assert [ep.value for ep in found] == ["kafkapy.testing.pytest_plugin"]


def test_importing_the_plugin_loads_nothing_but_the_standard_library() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True
    ).stdout
    loaded = json.loads(out)
    ours = [m for m in loaded if m.split(".")[0] not in sys.stdlib_module_names]
    assert ours == ["kafkapy", "kafkapy.testing", "kafkapy.testing.pytest_plugin"], ours
