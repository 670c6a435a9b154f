"""Structured, quiet logging: one logfmt line per event (time, level, logger, message, fields).

The level comes from --log-level or KAFKAPY_LOG_LEVEL (default INFO, which logs only lifecycle
events: start, stop, topic creation and deletion, warnings).
"""

from __future__ import annotations

import logging
import os
import sys
import time


class LogfmtFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        msg = record.getMessage().replace('"', "'")
        line = (
            f"ts={ts}.{int(record.msecs):03d}Z level={record.levelname.lower()} "
            f'logger={record.name} msg="{msg}"'
        )
        if record.exc_info:
            exc = self.formatException(record.exc_info).replace("\n", " | ")
            line += f' exc="{exc}"'
        return line


def setup_logging(level: str | None = None) -> None:
    name = (level or os.environ.get("KAFKAPY_LOG_LEVEL") or "INFO").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogfmtFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, name, logging.INFO))
    logging.getLogger("kazoo").setLevel(logging.WARNING)
