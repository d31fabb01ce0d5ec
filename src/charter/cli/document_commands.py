"""`charter compile-effective`, `charter expr`, `charter templates` and `charter documents
pause|resume|restart`: document workflows."""

from __future__ import annotations

import argparse
import dataclasses
import json
import json as json_module
from typing import Any

from rich.markup import escape
from rich.table import Table

from charter.cli.common import json_argument, log, out, print_json, target
from charter.cli.options import flag, option, wide
from charter.client.client import Client
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.compiler.mermaid import to_mermaid
from charter.db import connection
from charter.db import migrate as migrations
from charter.db.store import Call, first_json, first_value, perform, single
from charter.dsl.contract import EntityContract
from charter.dsl.files import read_document
from charter.errors import ArgumentError, ConfigurationError, RunInputError
from charter.expr import compile_expression, evaluate
from charter.library.templates import TEMPLATES
from charter.ops.envelopes import publish_envelope
from charter.payloads import json_text
from charter.vocabulary import DecisionVerb


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    effective = commands.add_parser(
        "compile-effective",
        help="compile an entity contract (and an org definition) into the effective workflow",
    )
    effective.add_argument("contract", metavar="CONTRACT", help="entity contract (JSON or YAML)")
    effective.add_argument(
        "org",
        metavar="ORG_DEFINITION",
        nargs="?",
        help="org workflow definition with slot patches (JSON or YAML)",
    )
    shown = effective.add_mutually_exclusive_group()
    flag(shown, "--diff", help="print what the org changed, by slot")
    flag(shown, "--mermaid", help="print a Mermaid flowchart")
    flag(shown, "--envelope", help="print the generated envelope")
    flag(effective, "--publish", help="also store the envelope as an immutable default definition")
    option(
        effective,
        "--instance",
        metavar="RUN_ID",
        help="with --mermaid: draw the workflow this instance runs (its pinned version), "
        "coloured by where it is",
    )
    effective.set_defaults(handler=compile_effective_command)

    approvals = commands.add_parser("approvals", help="approval requests: inbox and decisions")
    steps = approvals.add_subparsers(title="approvals commands", required=True, metavar="ACTION")
    inbox = steps.add_parser("inbox", help="the requests waiting for a user's decision")
    inbox.add_argument("user", metavar="USER")
    option(inbox, "--org", default="default", help="the user's org")
    flag(inbox, "--json", help="print them as JSON")
    wide(inbox)
    inbox.set_defaults(handler=approvals_inbox_command)
    decide = steps.add_parser("decide", help="approve, reject or abstain on the pinned version")
    decide.add_argument("request_id", metavar="REQUEST_ID")
    decide.add_argument("decision", choices=[verb.value for verb in DecisionVerb])
    option(decide, "--actor", required=True, help="who decides (a user of the org's directory)")
    option(decide, "--version", type=int, required=True,
           help="the document version you looked at (the request's pinned version)")  # fmt: skip
    option(decide, "--comment", help="why (kept with the decision)")
    option(decide, "--org", default="default", help="the request's org")
    decide.set_defaults(handler=approvals_decide_command)

    documents = commands.add_parser(
        "documents", help="a document's workflow instance: pause, resume, restart"
    )
    acts = documents.add_subparsers(title="documents commands", required=True, metavar="ACTION")
    for act, text in (
        ("pause", "pause its instance: it runs nothing, fires no timer, passes no gate"),
        ("resume", "resume its paused instance (due timers fire, held events apply)"),
        ("restart", "start a new instance (after a cancel or a failure) at its current state, "
                    "on the org's current workflow"),
    ):  # fmt: skip
        command = acts.add_parser(act, help=text)
        command.add_argument("document_id", metavar="DOCUMENT_ID")
        option(command, "--actor", required=True, help="who does it (kept in the audit trail)")
        option(command, "--reason", help="why (kept in the audit trail)")
        option(command, "--org", default="default", help="the document's org")
        command.set_defaults(handler=documents_act_command, act=act)

    schedules = commands.add_parser("schedules", help="cron schedules of an org")
    actions = schedules.add_subparsers(title="schedules commands", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every schedule, its target and next tick")
    option(listing, "--org", default="default", help="the org whose schedules to list")
    flag(listing, "--json", help="print them as JSON")
    wide(listing)
    listing.set_defaults(handler=schedules_list_command)
    delete = actions.add_parser("delete", help="remove a schedule (its runs and documents stay)")
    delete.add_argument("name", metavar="NAME")
    option(delete, "--org", default="default", help="the schedule's org")
    delete.set_defaults(handler=schedules_delete_command)

    expr = commands.add_parser("expr", help="evaluate a typed-DSL expression")
    expr.add_argument("expression", metavar="EXPRESSION")
    option(
        expr,
        "--vars",
        default="{}",
        help="variables as JSON (entity, actor, org, context), @FILE or - for stdin",
    )
    option(
        expr, "--schema", help='declared fields as JSON, e.g. \'{"entity": {"total": "number"}}\''
    )
    flag(expr, "--sql", help="evaluate with charter.eval_expr in the database")
    expr.set_defaults(handler=expr_command)

    templates = commands.add_parser("templates", help="the template library")
    templates.add_argument(
        "name", nargs="?", help="print this template's contract and org definition"
    )
    templates.set_defaults(handler=templates_command)


def compile_effective_command(
    *,
    database_url: str | None,
    contract: str,
    org: str | None,
    diff: bool,
    mermaid: bool,
    envelope: bool,
    publish: bool,
    instance: str | None,
) -> int:
    entity = EntityContract.from_json(read_document(contract, "contract"))
    generated = generate_envelope(entity)
    definition = read_document(org, "org definition") if org else None
    compiled = compile_effective(generated, definition)
    if instance is not None:
        if not mermaid:
            raise ArgumentError("--instance draws an instance's position: use it with --mermaid")
        with Client(database_url, migrate=False) as client:
            where: dict[str, Any] = client.store.perform(single(_position_call(instance)))
        if where["compiled"]["hash"] != compiled["hash"]:
            log.info(
                "instance %s runs version %s, which differs from %s compiled now; drawing "
                "the version it runs",
                instance,
                where["versionId"],
                contract,
            )
        out.print(
            to_mermaid(where["compiled"], where["nodes"]).rstrip("\n"),
            markup=False,
            highlight=False,
        )
        return 0
    if publish:
        with connection.connect(target(database_url)) as conn:
            migrations.migrate(conn)
            stored = publish_envelope(conn, entity)
        log.info(
            "envelope %s: %s (version %s)",
            stored["workflowId"],
            stored["status"],
            stored["version"],
        )
    if envelope:
        text = json.dumps(generated, indent=2, ensure_ascii=False)
    elif diff:
        changes = diff_effective(compiled, compile_effective(generated))
        text = json.dumps(changes, indent=2, ensure_ascii=False)
    elif mermaid:
        text = to_mermaid(compiled).rstrip("\n")
    else:
        text = json.dumps(compiled, indent=2, ensure_ascii=False)
    out.print(text, markup=False, highlight=False)
    return 0


def expr_command(
    *, database_url: str | None, expression: str, vars: str, schema: str | None, sql: bool
) -> int:
    variables = json_argument(vars, "--vars")
    declared = json_argument(schema, "--schema") if schema else None
    compiled = compile_expression(expression, declared)
    try:  # what SQL cannot take is refused in both modes, naming the option
        params = {
            "compiled": json_text(compiled, "The expression"),
            "variables": json_text(variables, "--vars"),
        }
    except RunInputError as exc:
        raise ArgumentError(exc.message) from None
    if sql:
        with connection.connect(target(database_url)) as conn:
            migrations.migrate(conn)
            audit = perform(conn, _eval_call(params))
    else:
        audit = evaluate(compiled, variables)
    out.print(json.dumps(audit, indent=2, ensure_ascii=False), markup=False, highlight=False)
    return 0


def _eval_call(params: dict[str, str]) -> Call[object]:
    return Call("eval_expr", params, first_value)


def _position_call(run_id: str) -> Call[Any]:
    return Call("instance_position", {"run_id": run_id}, first_json)


def schedules_list_command(*, database_url: str | None, org: str, json: bool) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        schedules = client.schedules.list()
    if json:
        print_json([dataclasses.asdict(s) for s in schedules])
        return 0
    if not schedules:
        out.print(f"org {org} has no schedules")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("name", "cron", "target", "missed", "next tick", "last tick", "last result"):
        table.add_column(column)
    for s in schedules:
        target = (
            f"flow {s.target['flow']}"
            if s.target["kind"] == "flow"
            else f"{s.target['entityType']} {s.target['action']}"
        )
        table.add_row(
            escape(s.name),
            escape(f"{s.cron} ({s.timezone})"),
            escape(target),
            s.missed,
            s.next_at.isoformat(timespec="seconds"),
            s.last_tick_at.isoformat(timespec="seconds") if s.last_tick_at else "",
            escape(json_module.dumps(s.last_result)[:60]) if s.last_result else "",
        )
    out.print(table)
    return 0


def approvals_inbox_command(*, database_url: str | None, user: str, org: str, json: bool) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        requests = client.approvals.inbox(user)
    if json:
        print_json([dataclasses.asdict(r) for r in requests])
        return 0
    if not requests:
        out.print(f"nothing waits for {escape(user)}'s decision in org {escape(org)}")
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("request", "document", "version", "rule", "asked by", "since"):
        table.add_column(column)
    for r in requests:
        table.add_row(
            escape(r.id),
            escape(f"{r.entity_type or ''} {r.document_id}"),
            str(r.entity_version),
            f"{r.decision} of {', '.join(r.approvers)}",
            escape(r.requester or ""),
            r.since.isoformat(timespec="seconds"),
        )
    out.print(table)
    return 0


def approvals_decide_command(
    *,
    database_url: str | None,
    request_id: str,
    decision: str,
    actor: str,
    version: int,
    comment: str | None,
    org: str,
) -> int:
    word = DecisionVerb(decision).decision.value
    with Client(database_url, migrate=False, org_id=org) as client:
        result = client.approvals.decide(
            request_id, word, actor=actor, entity_version=version, comment=comment
        )
    out.print(
        f"{escape(actor)} {word} request {escape(request_id)} (version {version}); the request "
        f"is {result['requestStatus']}"
    )
    return 0


def documents_act_command(
    *,
    database_url: str | None,
    act: str,
    document_id: str,
    actor: str,
    reason: str | None,
    org: str,
) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        documents = client.documents
        act_on = {"pause": documents.pause, "resume": documents.resume}.get(act, documents.restart)
        document = act_on(document_id, actor=actor, reason=reason)
    workflow = document.workflow
    out.print(
        f"document {escape(document.id)} ({escape(document.state)}): workflow instance "
        f"{escape(workflow.run_id or '')} is {workflow.status}"
        if workflow is not None
        else f"document {escape(document.id)} has no workflow instance"
    )
    return 0


def schedules_delete_command(*, database_url: str | None, name: str, org: str) -> int:
    with Client(database_url, migrate=False, org_id=org) as client:
        deleted = client.schedules.delete(name)
    if not deleted:
        raise ArgumentError(f"org {org} has no schedule {name!r} (`charter schedules list`)")
    out.print(f"schedule {escape(name)} deleted")
    return 0


def templates_command(*, name: str | None) -> int:
    if not name:
        for template_name, template in TEMPLATES.items():
            out.print(f"{template_name}: {template.description}", markup=False)
        return 0
    chosen = TEMPLATES.get(name)
    if chosen is None:
        raise ConfigurationError(
            f"There is no template {name!r}; the templates are {', '.join(TEMPLATES)}."
        )
    out.print(
        json.dumps({"contract": chosen.contract, "org": chosen.org}, indent=2),
        markup=False,
        highlight=False,
    )
    return 0
