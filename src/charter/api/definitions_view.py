"""Definitions as the ops surface shows them: per entity type, the envelope version the org
is on and the newest published, the org's versions (patches and drafts, effective
workflows) and the per-slot diff of the current effective workflow against the bare
envelope it is compiled on (seed 002 § Diff View)."""

from __future__ import annotations

from typing import Any

from charter.api.auth import Principal
from charter.compiler.diff import diff_effective
from charter.db.store import Call, json_rows


async def overview(who: Principal) -> list[dict[str, Any]]:
    rows = await who.client.store.execute(
        Call("definition_overview", {"org_id": who.org_id}, json_rows)
    )
    shown = []
    for row in rows:
        current = next((v for v in row["versions"] if v["versionId"] == row.get("current")), None)
        diff = None
        if current is not None and current.get("compiled") and row["envelope"]["compiled"]:
            diff = diff_effective(current["compiled"], row["envelope"]["compiled"])
        shown.append({
            "entity_type": row["entityType"],
            "envelope_version": row["envelope"]["version"],  # the one the org is on
            "latest_envelope_version": row.get("latestEnvelopeVersion"),
            "current_version_id": row.get("current"),
            "versions": [{k: v for k, v in version.items() if k != "compiled"}
                         for version in row["versions"]],
            "diff": diff,
        })  # fmt: skip
    return shown
