"""mkdocs hooks of the documentation site (mkdocs.yml ``hooks:``).

* ``on_files``: pages that live beside the code they describe are published as they are, not
  copied: the compatibility findings (compat_tests/suites/FINDINGS.md), the differential suite's
  README and the benchmarks' method (benchmarks/README.md).
* ``on_page_markdown``: the configuration reference's tables are generated from the broker's own
  config definitions at build time (config_reference.py), so they cannot go stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HOOKS = Path(__file__).resolve().parent
ROOT = HOOKS.parents[1]
sys.path.insert(0, str(HOOKS))

import config_reference  # noqa: E402  (found through the path set just above)
from mkdocs.structure.files import File, Files  # noqa: E402

# site path -> file in the repository
INCLUDED = {
    "compatibility/findings.md": "compat_tests/suites/FINDINGS.md",
    "compatibility/differential-suite.md": "compat_tests/reference/README.md",
    "performance/method.md": "benchmarks/README.md",
}


def on_files(files: Files, config: Any) -> Files:
    for uri, path in INCLUDED.items():
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return config_reference.expand(markdown)
