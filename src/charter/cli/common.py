"""What the commands share: the consoles, the database target, reading JSON arguments."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from charter import settings
from charter.db import connection
from charter.errors import ArgumentError, CharterError, ConfigurationError

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

log = logging.getLogger("charter")

# Wide enough for any table charter prints: a table takes only the width its cells need.
_UNBOUNDED = 100_000


def size_tables(wide: bool) -> None:
    """Tables take the terminal's width, or $COLUMNS; with ``--wide``, or when the output
    is not a terminal and $COLUMNS is not set (a pipe, a file), every cell is shown whole
    instead of being cut to 80 columns."""
    whole = wide or (not out.is_terminal and settings.terminal_columns() is None)
    out.width = _UNBOUNDED if whole else None  # type: ignore[assignment]  # None: measure again


# Exit codes: 0 ok, 1 a charter error, 2 usage (argparse), 3 the embedded server is not
# running (`charter db status`, as `pg_ctl status`), 4 a run failed or was cancelled
# (`charter run --wait`), 5 waiting timed out (the run goes on), 130 interrupted.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_NOT_RUNNING = 3
EXIT_RUN_FAILED = 4
EXIT_WAIT_TIMEOUT = 5


def target(database_url: str | None) -> connection.DatabaseTarget:
    resolved = connection.resolve(database_url)
    assert resolved is not None  # resolve() starts the embedded server when needed
    if resolved.embedded is not None:
        log.info(
            "using charter's embedded PostgreSQL %s in %s",
            resolved.embedded.version,
            resolved.embedded.data_dir,
        )
    return resolved


def json_argument(text: str, option: str, *, error: type[CharterError] = ConfigurationError) -> Any:
    """A JSON value given inline, as ``@FILE``, or as ``-`` (standard input)."""
    source = option
    if text == "-":
        source = f"{option} - (standard input)"
        try:
            text = sys.stdin.read()
        except UnicodeDecodeError as exc:
            raise ArgumentError(
                f"{source} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} cannot be "
                "decoded). Send JSON as UTF-8."
            ) from None
    elif text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"{option} {text}: cannot read {path} ({exc}).") from None
        except ValueError:  # U+0000 in the path, or a character the file system cannot take
            raise ArgumentError(
                f"{option} {text!r}: the path contains U+0000 or characters the file system "
                "cannot take; check it."
            ) from None
        source = f"{option} @{path}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{source} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}). "
            'Quote it for your shell, e.g. \'{"url": "https://example.com"}\', or pass @file.json.'
        ) from None
    except RecursionError:
        raise error(f"{source} nests too deeply to read; flatten it.") from None
    except ValueError:  # the only other failure: an integer of more than 4,300 digits
        raise error(
            f"{source} holds a number of more than {sys.get_int_max_str_digits()} digits, "
            "which Python does not read; write it as a string."
        ) from None


def print_json(value: Any) -> None:
    out.print(json.dumps(value, indent=2, ensure_ascii=False, default=str), markup=False)
