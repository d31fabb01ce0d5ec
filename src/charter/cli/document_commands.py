"""`charter compile-effective`, `charter expr` and `charter templates`: document workflows."""

from __future__ import annotations

import argparse
import json

from charter.cli.common import json_argument, log, out, target
from charter.cli.options import flag, option
from charter.compiler.diff import diff_effective
from charter.compiler.effective import compile_effective
from charter.compiler.envelope import generate_envelope
from charter.compiler.mermaid import to_mermaid
from charter.db import connection
from charter.db import migrate as migrations
from charter.documents_io import read_document
from charter.dsl.contract import EntityContract
from charter.engine.envelopes import publish_envelope
from charter.errors import ArgumentError, ConfigurationError, RunInputError
from charter.expr import compile_expression, evaluate
from charter.payloads import json_text
from charter.store import Call, first_value, perform
from charter.templates import TEMPLATES


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
    effective.set_defaults(handler=compile_effective_command)

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
) -> int:
    entity = EntityContract.from_json(read_document(contract, "contract"))
    generated = generate_envelope(entity)
    definition = read_document(org, "org definition") if org else None
    compiled = compile_effective(generated, definition)
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
