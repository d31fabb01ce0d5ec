"""Options with an environment variable each: ``--some-name`` reads ``CHARTER_SOME_NAME``.

The variable gives the default when the option is not on the command line, so a
deployment can configure every command through its environment. ``--help`` names it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from charter import settings

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_name(flag: str) -> str:
    return "CHARTER_" + flag.lstrip("-").replace("-", "_").upper()


def option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *flags: str,
    help: str,
    default: Any = None,
    type: Callable[[str], Any] | None = None,
    choices: list[str] | None = None,
    env: str | None = None,
    **kwargs: Any,
) -> None:
    """A value option; its environment variable (``env``, else ``CHARTER_`` + the option's
    name), when set, replaces ``default``. The variable's value is converted and checked
    only when the command that has the option runs, so a bad value breaks only that one."""
    name = env or env_name(flags[-1] if flags[-1].startswith("--") else flags[0])
    raw = settings.env_raw(name)
    if choices is not None:
        type = _one_of(choices, type)
        help += f" ({', '.join(choices)})"
    shown = f" (default {default}; ${name})" if default is not None else f" (${name})"
    if raw is not None and raw != "":
        default = raw  # argparse converts a string default with type= when it is used
        shown = f" (${name}={raw})"
    if type is not None:
        kwargs["type"] = type
    parser.add_argument(*flags, help=help + shown, default=default, **kwargs)


def flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *flags: str,
    help: str,
    env: str | None = None,
) -> None:
    """A switch; its environment variable (1/true/yes/on) turns it on. ``env=""`` gives it
    none (a confirmation must be asked for on the command line)."""
    name = (
        env if env is not None else env_name(flags[-1] if flags[-1].startswith("--") else flags[0])
    )
    raw = (settings.env_raw(name) or "").strip().lower() if name else ""
    if raw not in _TRUE | _FALSE:
        raw = ""  # a typo must not switch anything on; the command warns below
        _ignored.append(f"{name}={settings.env_raw(name)!r} is not a switch value (use 1 or 0)")
    suffix = f" (${name})" if name else ""
    parser.add_argument(*flags, action="store_true", default=raw in _TRUE, help=help + suffix)


_ignored: list[str] = []


def ignored_switches() -> list[str]:
    """Switch variables whose values were not understood (and so left off)."""
    return list(_ignored)


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535, for ``type=``: anything else is a usage error naming it."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a TCP port (a whole number from 1 to 65535)"
        )
    return port


def _one_of(choices: list[str], then: Callable[[str], Any] | None) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return then(text) if then is not None else text

    convert.__name__ = "choice"
    return convert


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def seconds(text: str) -> int:
    """A whole number of seconds, 0 or more (up to 2147483647), for ``type=``."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 2**31 - 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number of seconds from 0 to 2147483647"
        )
    return value


def wide(parser: argparse.ArgumentParser) -> None:
    """``--wide`` for a command that prints a table: every cell whole, however wide."""
    flag(parser, "--wide", env="CHARTER_WIDE",
         help="print every cell whole, wider than the terminal if need be")  # fmt: skip


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value
