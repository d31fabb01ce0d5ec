"""Running one claimed task's handler and turning whatever happens into an Outcome.

Nothing a handler does may stop the worker: every exception, ``SystemExit`` and
``KeyboardInterrupt`` included, becomes the failure of its own step. Async handlers run on
the event loop, sync handlers in the worker's threads (:mod:`charter.worker.threads`),
``isolation="process"`` handlers in a child process. A sync handler that overruns its
timeout cannot be interrupted: its task is failed, but its slot stays busy
(``overrunning``) until the thread really returns, so the worker never claims more than it
can start.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping
from types import CodeType
from typing import Any

from charter.dsl.flow import Flow, Step
from charter.dsl.outcomes import Reschedule
from charter.errors import RunInputError, StepInputError, StepOutputError
from charter.payloads import json_text
from charter.vocabulary import FailureKind
from charter.worker.context import Context, step_logger
from charter.worker.isolation import ProcessDied, run_in_process
from charter.worker.task import (
    HandlerRaised,
    HandlerTimeout,
    Outcome,
    Task,
    error_record,
    plain_error,
)
from charter.worker.threads import HandlerThreads

log = logging.getLogger("charter.worker")


class Executor:
    def __init__(self, flows: Mapping[str, Flow], concurrency: int) -> None:
        self.flows = flows
        self.threads = HandlerThreads(concurrency)
        self.overrunning = 0  # threads still running handlers whose tasks already timed out
        self.on_slot_freed: Callable[[], None] = lambda: None
        # Async handlers running now, by their code object: the watchdog names the step
        # that blocks the event loop by finding its frame.
        self.running_async: dict[CodeType, list[Task]] = {}

    async def run(self, task: Task) -> Outcome:
        started = time.monotonic()
        flow = self.flows.get(task.flow)
        step = flow.steps.get(task.step) if flow else None
        if step is None:
            return Outcome(task, error=_not_in_code(task), permanent=True)
        ctx = Context(
            run_id=task.run_id,
            org_id=task.org,
            flow=task.flow,
            step=task.step,
            task_index=task.index,
            attempt=task.attempt,
            idempotency_key=task.key,
            run_input=None,
            logger=step_logger(task.run_id, task.flow, task.step, task.index, task.attempt),
        )
        try:
            run_input, inputs, item, resume = task.decode()
            if resume is not None:
                return resumed(task, resume)
            ctx.run_input, ctx.inputs = run_input, inputs
            if step.step_type == "map":
                kwargs = step.spec.bind_item(item, ctx=ctx)
            else:
                kwargs = step.spec.bind(run_input=run_input, inputs=inputs, ctx=ctx)
            try:
                result = await self._call(step, task, kwargs, ctx)
            except HandlerRaised as raised:
                if not isinstance(raised.original, Reschedule):
                    raise
                result = raised.original
            if isinstance(result, Reschedule):
                return _rescheduled(task, result, ctx, started)
            try:
                text = json_text(step.spec.output(result), f"The output of step '{task.step}'")
            except RunInputError as exc:
                raise StepOutputError(exc.message) from None
            directive: dict[str, Any] = {}
            if ctx.children:
                directive["children"] = ctx.children
            if step.child_flow is not None:
                directive["startChild"] = True
            return Outcome(
                task,
                output=text,
                cost=ctx.cost_usd,
                duration=_since(started),
                directive=directive or None,
            )
        except HandlerTimeout as exc:
            error = plain_error(FailureKind.TIMEOUT, str(exc))
            return Outcome(task, error=error, cost=ctx.cost_usd, duration=_since(started))
        except (StepInputError, StepOutputError, RunInputError) as exc:
            return Outcome(
                task,
                error=error_record(exc),
                permanent=True,
                cost=ctx.cost_usd,
                duration=_since(started),
            )
        except ProcessDied as exc:
            error = plain_error(FailureKind.PROCESS_DIED, str(exc), exitCode=exc.exitcode)
            return Outcome(task, error=error, cost=ctx.cost_usd, duration=_since(started))
        except HandlerRaised as raised:
            return Outcome(
                task,
                error=error_record(raised.original, traceback_text=raised.traceback_text),
                permanent=not step.execution.is_retryable(raised.original),
                cost=ctx.cost_usd,
                duration=_since(started),
            )

    async def _call(self, step: Step, task: Task, kwargs: dict[str, Any], ctx: Context) -> Any:
        if step.execution.isolation == "process":
            try:
                result, ctx.cost_usd = await run_in_process(step, kwargs, task.timeout)
            except TimeoutError:
                raise HandlerTimeout(
                    f"Step '{task.step}' did not finish within its timeout of {task.timeout}s "
                    f"(attempt {task.attempt}); its process was killed. Raise the step's "
                    "timeout= if it needs longer."
                ) from None
            return result
        if step.spec.is_async:
            return await self._call_async(step, task, kwargs)
        return await self._call_sync(step, task, kwargs)

    async def _call_async(self, step: Step, task: Task, kwargs: dict[str, Any]) -> Any:
        code = step.handler.__code__
        self.running_async.setdefault(code, []).append(task)
        started = time.monotonic()
        try:
            # Runs in this task (asyncio.wait_for would wrap it in one more).
            async with asyncio.timeout(task.timeout):
                result = await _guarded(step.handler(**kwargs))
        except TimeoutError:
            raise HandlerTimeout(_timeout_message(task)) from None
        finally:
            running = self.running_async[code]
            running.remove(task)
            if not running:
                del self.running_async[code]
        elapsed = time.monotonic() - started
        if elapsed > task.timeout + 1:
            # wait_for could not cancel it in time: the handler held the event loop.
            raise HandlerTimeout(
                f"Step '{task.step}' ran {elapsed:.1f}s, beyond its timeout of "
                f"{task.timeout}s, because it blocked the worker's event loop: an async def "
                "handler called blocking code (time.sleep, a synchronous HTTP client, heavy "
                "computation). Make it a def handler (it then runs in a thread), await the "
                "async equivalent, or use isolation='process'."
            )
        return result

    async def _call_sync(self, step: Step, task: Task, kwargs: dict[str, Any]) -> Any:
        future = self.threads.submit(functools.partial(_call_in_thread, step.handler, kwargs))
        try:
            async with asyncio.timeout(task.timeout):
                return await asyncio.shield(future)
        except TimeoutError:
            self.overrunning += 1
            log.warning(
                "step %s of run %s overran its timeout of %ds; a thread cannot be stopped, so "
                "its slot stays busy until the handler returns (%d slot(s) held by overrunning "
                "handlers); use isolation='process' for steps that must be killable",
                task.label,
                task.run_id,
                task.timeout,
                self.overrunning,
                extra={"run_id": task.run_id, "step": task.step, "task_index": task.index},
            )
            future.add_done_callback(functools.partial(self._overrun_ended, task, time.monotonic()))
            raise HandlerTimeout(_timeout_message(task)) from None

    def _overrun_ended(self, task: Task, since: float, future: asyncio.Future[Any]) -> None:
        if not future.cancelled():
            future.exception()  # retrieved: the attempt was already recorded as a timeout
        self.overrunning -= 1
        log.warning(
            "step %s of run %s returned %.1fs after its timeout; its slot is free again",
            task.label,
            task.run_id,
            time.monotonic() - since,
            extra={"run_id": task.run_id, "step": task.step, "task_index": task.index},
        )
        self.on_slot_freed()

    def shutdown(self) -> None:
        self.threads.shutdown()

    @property
    def has_running_threads(self) -> bool:
        return self.threads.running > 0


async def _guarded(awaitable: Any) -> Any:
    try:
        return await awaitable
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        raise HandlerRaised(exc) from None


def _call_in_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return fn(**kwargs)
    except BaseException as exc:
        raise HandlerRaised(exc) from None


def resumed(task: Task, resume: dict[str, Any]) -> Outcome:
    """A waiting step's task, claimed once what it waited for is there: a sleep or a
    wait_event completes with what SQL found; a child step with its child's output, or
    fails for good with its child's failure."""
    if "output" in resume:
        return Outcome(
            task, output=json_text(resume["output"], f"The output of step '{task.step}'")
        )
    child = resume["child"]
    if child["status"] == "completed":
        return Outcome(task, output=json_text(child["output"], f"The output of step '{task.step}'"))
    error = child.get("error") or {}
    message = error.get("message") if isinstance(error, dict) else None
    return Outcome(
        task,
        error=plain_error(
            FailureKind.CHILD_RUN_FAILED,
            f"The child run {child['runId']} of step '{task.step}' {child['status']}"
            + (f": {message}" if message else ""),
            childRunId=child["runId"],
            childError=error or None,
        ),
        permanent=True,
    )


def _rescheduled(task: Task, request: Reschedule, ctx: Context, started: float) -> Outcome:
    directive: dict[str, Any] = {"resumeAt": request.resume_at().isoformat()}
    if ctx.children:
        directive["children"] = ctx.children
    return Outcome(
        task, output="null", cost=ctx.cost_usd, duration=_since(started), directive=directive
    )


def _timeout_message(task: Task) -> str:
    return (
        f"Step '{task.step}' did not finish within its timeout of {task.timeout}s "
        f"(attempt {task.attempt}); raise the step's timeout= if it needs longer."
    )


def _not_in_code(task: Task) -> dict[str, Any]:
    return plain_error(
        FailureKind.STEP_NOT_IN_CODE,
        f"Step '{task.step}' of flow '{task.flow}' is not in this worker's code, although "
        "the worker claimed it for a version its code matches. Restart the worker so it "
        "loads its flows again.",
    )


def _since(started: float) -> float:
    return time.monotonic() - started
