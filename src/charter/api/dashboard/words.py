"""What the dashboard says in words: a workflow's wait ("waiting for approval by mary or
mike since 10:04"), who acted on a history row and on whose behalf, a failure's summary."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from charter.ops.documents import Wait


def when(moment: datetime | None, now: datetime | None = None) -> str:
    """``10:04`` today (UTC, as the dashboard shows every time), else ``2026-11-26 10:04``."""
    if moment is None:
        return ""
    moment = moment.astimezone(UTC)
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    return moment.strftime("%H:%M" if moment.date() == today else "%Y-%m-%d %H:%M")


def _either(names: list[str], joiner: str) -> str:
    if len(names) <= 1:
        return "".join(names) or "nobody"
    return f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def wait_words(wait: Wait) -> str:
    """A workflow's wait as a sentence. People are named by their directory user id (the
    directory holds no other name)."""
    detail = wait.detail or {}
    since = f" since {when(wait.since)}" if wait.since else ""
    due = detail.get("dueAt")
    if wait.kind == "approval":
        people = [str(a) for a in detail.get("approvers") or []]
        joiner = "and" if detail.get("decision") == "all" else "or"
        stage = f" (stage {int(detail['stage']) + 1} of chain {detail['chainId']})" if (
            detail.get("chainId") and detail.get("stage") is not None) else ""  # fmt: skip
        return f"waiting for approval by {_either(people, joiner)}{stage}{since}"
    if wait.kind == "transition":
        gates = _either([str(g) for g in detail.get("gates") or []], "or")
        return f"waiting in state {detail.get('state')} for someone to {gates}{since}"
    if wait.kind == "event":
        return f"waiting for event {detail.get('eventKey')}{since}"
    if wait.kind in ("timer", "retry"):
        what = "a retry" if wait.kind == "retry" else "a timer"
        return f"waiting for {what} due at {due}{since}" if due else f"waiting for {what}{since}"
    if wait.kind == "delivery":
        effect = detail.get("effect") or "side effect"
        error = f" (last error: {detail['lastError']})" if detail.get("lastError") else ""
        return f"waiting for the {effect} to be delivered{error}{since}"
    if wait.kind == "task":
        return f"waiting for a worker to run action {wait.node}{since}"
    if wait.kind == "fix":
        return f"failed at {wait.node}, waiting for a fix: {failure_line(detail)}"
    return f"waiting for {wait.kind} at {wait.node}{since}"


def acted_by(entry: dict[str, Any]) -> str:
    """Who acted on a history row, and on whose behalf. The audit row records the actor
    (``runAs`` is ``actor``, or the reserved actor itself: ``system``, ``service:NAME``) and
    how (``via``): the workflow acts for the user who started it, as a reserved actor, or on
    the approval decisions its gate followed."""
    actor, via = str(entry.get("actor") or ""), entry.get("via")
    if via != "workflow":
        return actor
    deciders = [str(d["actor"]) for d in entry.get("decisions") or []]
    if deciders:
        return f"the workflow, on the decision of {_either(deciders, 'and')}"
    if entry.get("runAs") not in (None, "actor"):
        return f"the workflow, as {actor}"
    return f"the workflow, on behalf of {actor}"


def failure_line(error: dict[str, Any] | None) -> str:
    """A failure in one line: its code (or exception type), then its message's first line."""
    if not error:
        return ""
    code = error.get("code") or error.get("type") or "error"
    message = str(error.get("message") or "").strip().splitlines()
    return f"{code}: {message[0]}" if message else str(code)
