"""`charter demo`, `charter lineage` and `charter errors`."""

from __future__ import annotations

import argparse
import dataclasses

from charter.cli.common import out, print_json, target
from charter.cli.options import flag, option, positive_int
from charter.cli.render import render_lineage
from charter.client.client import Client
from charter.demos.documents import run_documents_demo
from charter.demos.site_audit import run_demo
from charter.errors import errors_document


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser("demo", help="run charter's demo on the default database")
    demo.add_argument(
        "what",
        nargs="?",
        choices=["flows", "documents"],
        default="flows",
        help="flows (a site audit with a map step) or documents (seed 002's use cases)",
    )
    option(demo, "--runs", type=positive_int, default=200, help="how many flow runs to start")
    option(demo, "--documents", type=positive_int, default=40,
           help="how many documents of each use case")  # fmt: skip
    demo.set_defaults(handler=demo_command)

    lineage = commands.add_parser("lineage", help="the ancestry tree of a workflow version")
    lineage.add_argument("version_id", metavar="VERSION_ID")
    flag(lineage, "--json", help="print the tree as JSON")
    lineage.set_defaults(handler=lineage_command)

    errors = commands.add_parser("errors", help="every error code, as a Markdown table")
    errors.set_defaults(handler=errors_command)


def demo_command(*, database_url: str | None, what: str, runs: int, documents: int) -> int:
    if what == "documents":
        return run_documents_demo(target(database_url), out, documents=documents)
    return run_demo(target(database_url), out, runs=runs)


def lineage_command(*, database_url: str | None, version_id: str, json: bool) -> int:
    with Client(database_url, migrate=False) as client:
        tree = client.registry.lineage(version_id)
    if json:
        print_json(dataclasses.asdict(tree))
    else:
        out.print(render_lineage(tree))
    return 0


def errors_command() -> int:
    out.print(errors_document(), markup=False, end="")
    return 0
