"""Moved to :mod:`charter.ops.side_effects`; this path stays for the documented imports."""

from charter.ops.side_effects import *  # noqa: F403
