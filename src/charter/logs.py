"""How the ``charter`` command writes its log: people read text, machines read JSON.

Records of charter's worker carry structured fields as attributes (``worker``, ``run_id``,
``flow``, ``step``, ``task_index``, ``attempt``, ``outcome``, ``duration``), and so do
``ctx.logger`` records of step handlers. ``--log-format json`` prints one JSON object per
line with every such field; the text format shows them compactly. Loggers of other
libraries (a handler's httpx, say) keep their own names, and warnings say they are.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]

FIELDS = ("worker", "run_id", "flow", "step", "task_index", "attempt", "outcome", "duration")


class TextFormatter(logging.Formatter):
    """``charter: message``; ``charter: warning: message``; ``httpx: message``; a step
    handler's records name their run and step: ``charter.step [run r-1 step fetch[2]]: …``."""

    def format(self, record: logging.LogRecord) -> str:
        ours = ("charter", "charter.worker", "charter.db", "charter.store")
        name = "charter" if record.name in ours else record.name
        where = ""
        run_id = getattr(record, "run_id", None)
        if record.name == "charter.step" and run_id:
            index = getattr(record, "task_index", 0)
            step = getattr(record, "step", "?") + (f"[{index}]" if index else "")
            where = f" [run {run_id} step {step}]"
        level = ""
        if record.levelno >= logging.ERROR:
            level = "error: "
        elif record.levelno >= logging.WARNING:
            level = "warning: "
        text = f"{name}{where}: {level}{record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the structured fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in FIELDS:
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(log_format: LogFormat = "text", *, verbose: bool = False) -> None:
    """Send every log record to stderr in ``log_format``; INFO and up, DEBUG when verbose."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # Libraries' chatter stays at warnings unless asked for.
    for noisy in ("psycopg", "psycopg.pool", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose else logging.WARNING)
