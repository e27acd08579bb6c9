"""Structured logs of the Kafka worker: one JSON object per line on stderr.

``note(log, "episode.done", group=..., partition=...)`` logs the event name with its fields; the formatter
writes ``{"ts", "level", "logger", "event", ...fields}``. Fields are ids, offsets, counts and reasons, never
settings (keys and passwords stay in ``Settings`` as ``SecretStr`` and are not passed here).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


def note(log: logging.Logger, event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``event`` with ``fields`` (rendered as JSON keys by :class:`JsonFormatter`)."""
    log.log(level, event, extra={"fields": fields})


def json_logging(level: int = logging.INFO) -> None:
    """Send the ``epigraph`` loggers' records to stderr as JSON lines (aiokafka's warnings too)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name, at in (("epigraph", level), ("aiokafka", logging.WARNING)):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(at)
        logger.propagate = False
