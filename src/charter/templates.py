"""Moved to :mod:`charter.library.templates`; this path stays for the documented imports."""

from charter.library.templates import *  # noqa: F403
