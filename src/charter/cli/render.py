"""Showing a run to a person: `charter status`."""

from __future__ import annotations

import json

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from charter.ops.documents import Document
from charter.ops.registry import Lineage
from charter.ops.run_model import Run, waiting_text

_STYLES = {
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "running": "cyan",
    "ready": "cyan",
    "waiting": "dim",
    "skipped": "dim",
}


def render_run(run: Run) -> Group:
    took = ""
    if run.finished_at is not None:
        took = f" in {(run.finished_at - run.created_at).total_seconds():.3f}s"
    header = Text.assemble(
        ("run ", ""),
        (run.id, "bold"),
        (f"  flow {run.flow} v{run.version}  ", ""),
        (run.status, _STYLES.get(run.status, "")),
        (took, ""),
    )
    table = Table(box=None, pad_edge=False)
    for column in (
        "step",
        "type",
        "status",
        "tasks",
        "attempts",
        "started",
        "took",
        "output / error",
    ):
        table.add_column(column)
    for step in run.steps:
        tasks = (
            ""
            if step.tasks is None
            else (f"{step.tasks - (step.remaining_tasks or 0)}/{step.tasks}")
        )
        detail = Text("")
        if step.error:
            message = f"{step.error.get('type', '')}: {step.error.get('message', '')}"
            detail = Text(message[:100], "red")
        elif step.status == "completed":
            detail = Text(json.dumps(step.output, ensure_ascii=False)[:100])
        elif step.waiting_for:
            detail = Text(waiting_text(step.waiting_for), "cyan")
        table.add_row(
            step.slug,
            step.step_type,
            Text(step.status, _STYLES.get(step.status, "")),
            tasks,
            str(step.attempts),
            step.started_at.strftime("%H:%M:%S.%f")[:-3] if step.started_at else "",
            f"{step.duration_s:.3f}s" if step.duration_s is not None else "",
            detail,
        )
    parts: list[Text | Table | Tree] = [header, table]
    if run.parent:
        parts.append(
            Text(
                f"child of run {run.parent['runId']} (step {run.parent['step']}, key "
                f"{run.parent['key']})"
            )
        )
    if run.children:
        tree = Tree(Text(f"children ({len(run.children)})"))
        for child in run.children:
            tree.add(
                Text.assemble(
                    (child.run_id, "bold"),
                    (f"  flow {child.flow}  from {child.step} key {child.key}  ", ""),
                    (child.status, _STYLES.get(child.status, "")),
                )
            )
        parts.append(tree)
    if run.usd_cost:
        parts.append(Text(f"cost: ${run.usd_cost:.6f}"))
    instance = run.flow.startswith(("effective:", "envelope:"))
    if run.status == "running" and run.serving_workers == 0 and not instance:
        parts.append(
            Text(
                f"waiting: no live worker runs the code of {run.flow} v{run.version} "
                f"({run.version_id}); start a worker with that version's code "
                "(`charter workers` lists what each serves)",
                "yellow",
            )
        )
    if run.status == "completed":
        parts.append(Text("output: " + json.dumps(run.output, ensure_ascii=False)[:2000]))
    if run.error:
        kind = run.error.get("type") or run.error.get("sqlstate")
        parts.append(Text(f"error: {kind}: {run.error.get('message')}", "red"))
    return Group(*parts)


def render_document(document: Document, run: Run | None) -> Group:
    """A document, where its workflow instance is and what it waits for, then the instance's
    node executions (`charter status --document`)."""
    header = Text.assemble(
        ("document ", ""),
        (document.id, "bold"),
        f"  {document.entity_type} v{document.version}  state ",
        (document.state, "bold"),
    )
    parts: list[Text | Group] = [header]
    workflow = document.workflow
    if workflow is None or workflow.run_id is None:
        parts.append(Text("no workflow instance yet (is a worker running?)", "yellow"))
        return Group(*parts)
    parts.append(
        Text.assemble(
            f"workflow {workflow.workflow} run {workflow.run_id}  ",
            (workflow.status or "", _STYLES.get(workflow.status or "", "")),
            f"  at {', '.join(workflow.current_nodes) or 'nothing'}",
        )
    )
    for wait in workflow.waiting_for:
        detail = json.dumps(wait.detail, ensure_ascii=False)[:160]
        parts.append(Text(f"  waits for {wait.kind} at {wait.node}: {detail}", "cyan"))
    if workflow.error:
        parts.append(Text(f"  failed: {workflow.error.get('message')}", "red"))
    if run is not None:
        parts.append(render_run(run))
    return Group(*parts)


def render_lineage(lineage: Lineage) -> Tree:
    """A version and its ancestors, parents under children (`charter lineage`)."""
    tree = Tree(_lineage_label(lineage))
    _add_parents(tree, lineage)
    return tree


def _add_parents(branch: Tree, lineage: Lineage) -> None:
    for parent in lineage.parents:
        _add_parents(branch.add(_lineage_label(parent)), parent)


def _lineage_label(lineage: Lineage) -> Text:
    generation = f" gen {lineage.generation_id}" if lineage.generation_id else ""
    return Text.assemble(
        (lineage.version_id, "bold"),
        f"  {lineage.workflow_id} v{lineage.version}  ",
        (lineage.operation or "", "cyan"),
        generation,
        f"  {lineage.commit_message or ''}",
    )
