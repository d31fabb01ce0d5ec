"""Moved to :mod:`charter.demos.use_cases`; this path stays for the documented imports."""

from charter.demos.use_cases import *  # noqa: F403
