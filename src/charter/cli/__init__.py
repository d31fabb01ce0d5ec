"""The ``charter`` command: one small module per group of commands.

Each module's ``configure`` adds its commands to the parser; each command's handler takes
plain keyword arguments (the parsed options by name) and returns the exit code. Every
option ``--some-name`` also reads ``CHARTER_SOME_NAME`` (see :mod:`charter.cli.options`).
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from rich.markup import escape

from charter import logs
from charter.cli import (
    db_commands,
    definition_commands,
    document_commands,
    flow_commands,
    misc_commands,
    ops_commands,
    outbox_commands,
    run_commands,
)
from charter.cli.common import EXIT_ERROR, err, log, size_tables
from charter.cli.options import flag, ignored_switches, option
from charter.errors import CharterError

_GROUPS = (
    misc_commands,
    flow_commands,
    run_commands,
    definition_commands,
    document_commands,
    outbox_commands,
    ops_commands,
    db_commands,
)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        logs.configure(args.log_format, verbose=args.verbose)
        for problem in ignored_switches():
            log.warning("%s; it was left off", problem)
        size_tables(getattr(args, "wide", False))
        handler: Callable[..., int] = args.handler
        return handler(**_arguments(handler, args))
    except CharterError as exc:
        err.print(f"[bold red]error[/] [{exc.code}] {escape(exc.message)}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


def _arguments(handler: Callable[..., int], args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options the handler asks for, by name."""
    wanted = inspect.signature(handler).parameters
    return {name: value for name, value in vars(args).items() if name in wanted}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="charter", description="Durable, contracted workflows that live in PostgreSQL."
    )
    parser.add_argument(
        "--version", action="version", version=f"charter {metadata.version('charter')}"
    )
    # Not an option() with an environment default: resolve() reads CHARTER_DATABASE_URL
    # itself, so messages can name where the URL came from.
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="PostgreSQL to use (default $CHARTER_DATABASE_URL, else the embedded server)",
    )
    flag(parser, "-v", "--verbose", help="log debug details")
    option(parser, "--log-format", choices=["text", "json"], default="text",
           help="text for people, json for one JSON object per line")  # fmt: skip
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    for group in _GROUPS:
        group.configure(commands)
    return parser


if __name__ == "__main__":
    sys.exit(main())
