"""kafkapy's config definition table (kafkapy/server/config/config_definitions.tsv) against the
Apache Kafka 4.4 jars' own ConfigDefs, so the table cannot drift from the release it follows.

compat_tests/reference/java/ConfigDefDump.java, compiled and run against Kafka 4.4's libs/,
prints every broker config (AbstractKafkaConfig.CONFIG_DEF, with DynamicBrokerConfig's update
mode and broker synonyms), topic config (LogConfig, with ServerTopicConfigSynonyms) and group
config (GroupConfig, with its broker synonym): name, type, default, validator, importance.
Internal configs (which Kafka neither documents nor describes) are left out of the table.

When Kafka's definitions change (a new release line), regenerate the table from the jars with
``.venv/bin/python -m compat_tests.test_config_definitions --write`` and review the diff.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.server.config import config_definitions as defs

JAVA_SOURCE = Path(__file__).resolve().parent / "reference" / "java" / "ConfigDefDump.java"
SCOPES = ("broker", "topic", "group")


@cache
def kafka_definitions(work: Path) -> list[dict]:
    """The 4.4 jars' definitions, one dict per config (internal ones left out)."""
    classes = work / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-d", str(classes), "-cp", jvm.classpath(), str(JAVA_SOURCE)],
                   check=True, capture_output=True, text=True, timeout=300)
    out = jvm.run_java("ConfigDefDump", extra_cp=(classes,)).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [r for r in rows if not r["internal"]]


def table_rows(rows: list[dict]) -> list[str]:
    """The TSV lines of kafkapy's table for Kafka's definitions."""
    lines = []
    for r in sorted(rows, key=lambda r: (SCOPES.index(r["scope"]), r["name"])):
        default = defs.NULL if r["default"] is None else r["default"]  # "<required>" kept
        fields = [r["scope"], r["name"], r["type"], default, r["validator"] or "",
                  r["importance"], r["mode"] or "", ",".join(r["synonyms"])]
        assert not any("\t" in f or "\n" in f for f in fields), fields
        lines.append("\t".join(fields))
    return lines


def test_table_matches_kafka_44_jars(tmp_path_factory: pytest.TempPathFactory) -> None:
    jvm.require_kafka_jvm(javac=True)
    rows = kafka_definitions(tmp_path_factory.mktemp("configdefs"))
    assert len(rows) > 400  # 350 broker, 37 topic, 21 group configs in 4.4.0
    expected = table_rows(rows)
    ours = defs.table_lines()
    missing = sorted(set(expected) - set(ours))
    extra = sorted(set(ours) - set(expected))
    assert not missing and not extra, (
        "kafkapy's config table differs from the Kafka 4.4 jars (regenerate with "
        "`python -m compat_tests.test_config_definitions --write`):\n"
        + "\n".join(f"- kafka:   {x}" for x in missing[:20])
        + "\n" + "\n".join(f"- kafkapy: {x}" for x in extra[:20]))


def test_table_counts() -> None:
    """What 4.4 describes: 350 broker configs, 37 topic configs, 21 group configs."""
    assert len(defs.definitions("broker")) == 350
    assert len(defs.definitions("topic")) == 37
    assert len(defs.definitions("group")) == 21


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    import tempfile

    rows = kafka_definitions(Path(tempfile.mkdtemp(prefix="configdefs-")))
    header = defs.TABLE_PATH.read_text().splitlines()
    comments = [line for line in header if line.startswith("#")]
    defs.TABLE_PATH.write_text("\n".join([*comments, *table_rows(rows)]) + "\n")
    print(f"wrote {len(rows)} definitions to {defs.TABLE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
