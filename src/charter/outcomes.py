"""What a step handler can raise to steer its own retries.

>>> from charter import NonRetryable
>>> def charge(run: dict) -> dict:                                   # doctest: +SKIP
...     if run["card"] == "declined":
...         raise NonRetryable("the card was declined; retrying will not help")

Any exception with a true ``permanent`` attribute works the same, so a library's own
exception class can opt in without depending on charter.
"""

from __future__ import annotations


class NonRetryable(Exception):
    """Fails the step at once, without using its remaining attempts."""

    permanent = True
