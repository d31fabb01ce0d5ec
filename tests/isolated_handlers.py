"""Module-level handlers for isolation="process" tests: the child process imports them."""

from __future__ import annotations

import os
import time

from charter import Flow, NonRetryable

flow = Flow("isolated", max_attempts=1)


# The timeout counts from the claim, so it includes starting a fresh process after the hung
# one is killed (importing charter: about 1 s on two busy cores); 3 s leaves room for it.
@flow.step(isolation="process", timeout=3)
def hang(run: dict) -> str:  # type: ignore[type-arg]
    if run.get("mode") == "hang":
        while True:  # an endless loop no thread could be stopped in
            time.sleep(0.05)
    if run.get("mode") == "raise":
        raise NonRetryable(f"refused {run['value']}")
    if run.get("mode") == "exit":
        os._exit(7)
    return f"pid {os.getpid()}"


@flow.step(depends_on=[hang], isolation="process")
async def after(hang: str, ctx) -> dict:  # type: ignore[type-arg]
    ctx.add_cost(0.25)
    return {"child": hang, "me": os.getpid(), "step": ctx.step}
