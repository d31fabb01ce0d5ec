"""`charter publish`: an entity contract, and an org's definition of its workflow;
`charter rebase`: an org onto the newest contract of an entity type; `charter versions`: an
org's versions of a workflow; `charter rollback`: an earlier published one again."""

from __future__ import annotations

import argparse

from charter.cli.common import out
from charter.cli.options import option
from charter.client.client import Client
from charter.dsl.files import read_document


def configure(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    publish = commands.add_parser(
        "publish",
        help="publish an entity contract (and an org's definition of its workflow)",
    )
    publish.add_argument("contract", metavar="CONTRACT", help="entity contract (JSON or YAML)")
    publish.add_argument(
        "org_definition",
        metavar="ORG_DEFINITION",
        nargs="?",
        help="the org's workflow definition with slot patches (JSON or YAML)",
    )
    option(publish, "--org", default="default", help="the org the definition is for")
    publish.set_defaults(handler=publish_command)

    rebase = commands.add_parser(
        "rebase",
        help="move an org onto the newest contract of an entity type (its definition recompiled)",
    )
    rebase.add_argument("entity_type", metavar="ENTITY_TYPE", help="e.g. invoice")
    option(rebase, "--org", default="default", help="the org to move")
    rebase.set_defaults(handler=rebase_command)

    versions = commands.add_parser(
        "versions", help="an org's versions of an entity type's workflow, newest first"
    )
    versions.add_argument("entity_type", metavar="ENTITY_TYPE", help="e.g. invoice")
    option(versions, "--org", default="default", help="the org whose versions to list")
    versions.set_defaults(handler=versions_command)

    rollback = commands.add_parser(
        "rollback",
        help="publish an earlier published version of an org's workflow again (running "
        "instances stay on theirs)",
    )
    rollback.add_argument("entity_type", metavar="ENTITY_TYPE", help="e.g. invoice")
    rollback.add_argument(
        "version_id", metavar="VERSION_ID", help="the version to restore (charter versions)"
    )
    option(rollback, "--org", default="default", help="the org to roll back")
    rollback.set_defaults(handler=rollback_command)


def publish_command(
    *, database_url: str | None, contract: str, org_definition: str | None, org: str
) -> int:
    entity = read_document(contract, "contract")
    definition = read_document(org_definition, "org definition") if org_definition else None
    with Client(database_url, org_id=org) as client:
        envelope = client.definitions.publish(entity)
        out.print(
            f"envelope: {envelope.status} (contract version {envelope.envelope_version}, "
            f"{envelope.version_id})"
        )
        if definition is not None:
            effective = client.definitions.publish(entity, definition)
            out.print(
                f"effective: {effective.status} for org {org} (version {effective.version}, "
                f"{effective.version_id}, hash {(effective.hash or '')[:12]}…)"
            )
    return 0


def rebase_command(*, database_url: str | None, entity_type: str, org: str) -> int:
    with Client(database_url, org_id=org) as client:
        moved = client.definitions.rebase(entity_type)
    what = "the bare envelope" if moved.kind == "envelope" else f"effective {moved.version_id}"
    out.print(
        f"{entity_type}: {moved.status} for org {org}, on contract version "
        f"{moved.envelope_version} ({what})"
    )
    return 0


def versions_command(*, database_url: str | None, entity_type: str, org: str) -> int:
    with Client(database_url, org_id=org) as client:
        listed = client.definitions.versions(entity_type)
    if not listed:
        out.print(f"{entity_type}: org {org} runs the bare envelope (no versions)")
    for v in listed:
        marks = ["current"] if v["current"] else []
        if v.get("rollbackOf"):
            marks.append(f"rollback of {v['rollbackOf']}")
        out.print(
            f"{v['versionId']}  v{v['version']}  {v['kind']:<9} {v['status']:<9} "
            f"envelope v{v['envelopeVersion']}  {str(v['createdAt'])[:19]}"
            + (f"  ({', '.join(marks)})" if marks else "")
        )
    return 0


def rollback_command(
    *, database_url: str | None, entity_type: str, version_id: str, org: str
) -> int:
    with Client(database_url, org_id=org) as client:
        restored = client.definitions.rollback(entity_type, version_id, actor="cli")
    out.print(
        f"{entity_type}: {restored.status} for org {org}: effective {restored.version_id} "
        f"(version {restored.version}, envelope v{restored.envelope_version}), restoring "
        f"{version_id}"
    )
    return 0
