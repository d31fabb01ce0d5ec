"""Options with an environment variable each: ``--some-name`` reads ``CHARTER_SOME_NAME``.

The variable gives the default when the option is not on the command line, so a
deployment can configure every command through its environment. ``--help`` names it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from charter.errors import ConfigurationError

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
    **kwargs: Any,
) -> None:
    """A value option; the environment variable, when set, replaces ``default``."""
    name = env_name(flags[-1] if flags[-1].startswith("--") else flags[0])
    raw = os.environ.get(name)
    if raw is not None and raw != "":
        try:
            default = type(raw) if type is not None else raw
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise ConfigurationError(f"{name}={raw!r} is not usable: {exc}") from None
    shown = f" (default {default}; ${name})" if default is not None else f" (${name})"
    if type is not None:
        kwargs["type"] = type
    parser.add_argument(*flags, help=help + shown, default=default, **kwargs)


def flag(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *flags: str, help: str) -> None:
    """A switch; its environment variable (1/true/yes/on) turns it on."""
    name = env_name(flags[-1] if flags[-1].startswith("--") else flags[0])
    raw = (os.environ.get(name) or "").strip().lower()
    if raw not in _TRUE | _FALSE:
        raise ConfigurationError(f"{name}={raw!r} is not a switch value; use 1 or 0.")
    parser.add_argument(*flags, action="store_true", default=raw in _TRUE, help=f"{help} (${name})")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value
