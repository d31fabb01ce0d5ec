"""``isolation="process"``: a handler in a child process that can be killed on timeout.

A thread cannot be stopped, so a sync handler stuck in C code or an endless loop holds its
slot until it returns. A step declared with ``isolation="process"`` runs instead in a
fresh process (the ``spawn`` start method: safe beside the worker's threads), which imports
the handler's module by name, runs the handler and sends back its result, or what it
raised. On timeout the process is killed. Starting a process costs tens of milliseconds,
so this is for steps that must be stoppable, not for every step.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import multiprocessing
import pickle
import traceback
from multiprocessing.connection import Connection
from typing import Any

from charter.dsl.flow import Step
from charter.dsl.handler import CTX
from charter.worker.context import Context
from charter.worker.task import HandlerRaised

_SPAWN = multiprocessing.get_context("spawn")


class ProcessDied(Exception):
    def __init__(self, message: str, exitcode: int | None) -> None:
        super().__init__(message)
        self.exitcode = exitcode


class RemoteError(Exception):
    """Stands for an exception raised in the child that could not be sent back as itself."""

    def __init__(self, type_name: str, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.remote_type = type_name
        self.permanent = permanent


async def run_in_process(step: Step, kwargs: dict[str, Any], timeout: float) -> tuple[Any, float]:
    """The handler's result and the cost it reported; TimeoutError after killing it;
    HandlerRaised for what it raised; ProcessDied when it exited without an answer."""
    ctx = kwargs.get(CTX)
    arguments = {k: v for k, v in kwargs.items() if k != CTX}
    context_fields = None
    if isinstance(ctx, Context):
        context_fields = {
            "run_id": ctx.run_id,
            "org_id": ctx.org_id,
            "flow": ctx.flow,
            "step": ctx.step,
            "task_index": ctx.task_index,
            "attempt": ctx.attempt,
            "idempotency_key": ctx.idempotency_key,
            "run_input": ctx.run_input,
            "inputs": ctx.inputs,
        }
    receiver, sender = _SPAWN.Pipe(duplex=False)
    process = _SPAWN.Process(
        target=_child,
        args=(
            sender,
            step.handler.__module__,
            step.handler.__qualname__,
            arguments,
            context_fields,
        ),
        daemon=True,
        name=f"charter-step-{step.slug}",
    )
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not answered.done():
            answered.set_result(None)

    process.start()
    sender.close()
    loop.add_reader(receiver.fileno(), readable)
    try:
        try:
            await asyncio.wait_for(answered, timeout)
        except TimeoutError:
            process.kill()
            raise
        try:
            kind, *rest = receiver.recv()
        except EOFError:
            process.join(5)
            raise ProcessDied(
                f"The process running step '{step.slug}' exited with code "
                f"{process.exitcode} before answering (it crashed, or called os._exit).",
                process.exitcode,
            ) from None
    finally:
        loop.remove_reader(receiver.fileno())
        receiver.close()
        process.join(5)
        if process.is_alive():
            process.kill()
    if kind == "ok":
        result, cost = rest
        return result, cost
    exc_bytes, type_name, message, permanent, trace = rest
    original: BaseException
    try:
        original = (
            pickle.loads(exc_bytes) if exc_bytes else RemoteError(type_name, message, permanent)
        )
    except Exception:
        original = RemoteError(type_name, message, permanent)
    raise HandlerRaised(original, traceback_text=trace)


def _child(
    sender: Connection,
    module: str,
    qualname: str,
    arguments: dict[str, Any],
    context_fields: dict[str, Any] | None,
) -> None:
    ctx = Context(**context_fields) if context_fields is not None else None
    try:
        handler = getattr(importlib.import_module(module), qualname)
        kwargs = dict(arguments)
        if ctx is not None:
            kwargs[CTX] = ctx
        result = handler(**kwargs)
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        sender.send(("ok", result, ctx.cost_usd if ctx else 0.0))
    except BaseException as exc:
        exc_bytes = b""
        with contextlib.suppress(Exception):
            pickled = pickle.dumps(exc)
            pickle.loads(pickled)  # some exceptions pickle but cannot be rebuilt
            exc_bytes = pickled
        sender.send(
            (
                "raised",
                exc_bytes,
                type(exc).__name__,
                str(exc),
                getattr(exc, "permanent", False) is True,
                "".join(traceback.format_exception(exc)),
            )
        )
    finally:
        sender.close()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
