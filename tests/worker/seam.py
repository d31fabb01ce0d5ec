"""A fast seam for unit tests of worker logic: operations run against scripted replies.

Operations are sans-I/O (charter.db.store): they yield a ``Call`` (a named query, its
parameters and how to read its rows) and receive the call's result, or have its error
thrown in. ``Script`` answers each call by its query name, so a test of what the worker
does with the answers (the errors it raises, what it asks next, how it reads the rows)
needs no PostgreSQL. The rows still go through the call's own ``parse``.

This is a seam over charter's own generator protocol, not a stand-in for PostgreSQL: a test
of what the SQL does keeps using a real database (tests/db, tests/ops).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, TypeVar

import pytest

from charter.db.store import Call, Listen, Operation, Rows, single

T = TypeVar("T")

# What a query answers: its rows, an error to throw into the operation, or a function of
# the call's parameters returning either.
Reply = Rows | Exception | Callable[[Mapping[str, Any]], "Rows | Exception"]


class Script:
    """Scripted replies by query name, and the calls the operations made, in order."""

    def __init__(self, replies: Mapping[str, Reply]) -> None:
        self.replies = dict(replies)
        self.calls: list[Call[Any]] = []

    @property
    def queries(self) -> list[str]:
        return [call.query for call in self.calls]

    def run(self, request: Operation[T] | Call[T]) -> T:
        """Step the operation to its end, answering each call from the script."""
        operation = single(request) if isinstance(request, Call) else request
        try:
            step = next(operation)
            while True:
                if isinstance(step, Listen):
                    raise TypeError("a scripted operation cannot wait for runs")
                reply = self._reply(step)
                if isinstance(reply, Exception):
                    step = operation.throw(reply)
                else:
                    step = operation.send(step.parse(reply))
        except StopIteration as done:
            return done.value

    def perform(self, connection: Any, request: Operation[T] | Call[T]) -> T:
        """In place of charter.db.store.perform: the connection is not used."""
        return self.run(request)

    def _reply(self, call: Call[Any]) -> Rows | Exception:
        self.calls.append(call)
        if call.query not in self.replies:
            raise AssertionError(
                f"the operation called {call.query!r}, which the script does not answer "
                f"(it answers {sorted(self.replies)})"
            )
        reply = self.replies[call.query]
        return reply(call.params) if callable(reply) else reply


def script(
    monkeypatch: pytest.MonkeyPatch, modules: Iterable[ModuleType], replies: Mapping[str, Reply]
) -> Script:
    """A Script that answers the ``perform`` of each module (a connection-taking helper)."""
    scripted = Script(replies)
    for module in modules:
        monkeypatch.setattr(module, "perform", scripted.perform)
    return scripted


def json_reply(value: Any) -> Rows:
    """The rows of a query returning one jsonb value (psycopg loads jsonb as Python data)."""
    return [(value,)]
