"""WF-07 at run time: a version runs only from a compiled artifact that checks out.

Workers verify each version's artifact (hash and compiler version) the first time they
would serve it and remember the answer by version id; a version that fails is not served,
and the log names the owner's way out, ``charter recompile``, which compiles the stored
shape again and stores the new artifact in place (same shape, same steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from charter.compiler.compiled import verify_compiled
from charter.compiler.effective import compile_effective
from charter.compiler.flows import compile_shape
from charter.db.store import Call, Operation, first_value
from charter.errors import CompiledWorkflowError, WorkflowArtifactMissingError


@dataclass(frozen=True)
class StoredVersion:
    version_id: str
    flow: str
    version: int
    shape: Any
    compiled: dict[str, Any] | None


def stored_version(data: dict[str, Any]) -> StoredVersion:
    return StoredVersion(
        data["versionId"], data["flow"], data["version"], data["shape"], data["compiled"]
    )


def problem(version: StoredVersion) -> CompiledWorkflowError | None:
    """Why the version's artifact cannot be trusted, or None."""
    if version.compiled is None:
        return WorkflowArtifactMissingError(
            f"Version {version.version} of flow '{version.flow}' ({version.version_id}) has "
            "no compiled artifact. Compile it as the schema's owner: `charter recompile`."
        )
    try:
        verify_compiled(version.compiled)
    except CompiledWorkflowError as exc:
        return exc
    return None


def load_versions(version_ids: list[str] | None) -> Operation[list[StoredVersion]]:
    rows = yield Call(
        "version_artifacts", {"version_ids": version_ids}, lambda rows: [r[0] for r in rows]
    )
    return [stored_version(row) for row in rows]


def recompile(version: StoredVersion) -> Operation[str]:
    """Compile the stored shape again (keeping the handler names the old artifact had) and
    store it; returns the new hash."""
    handlers = {
        node_id: node.get("config", {}).get("handler")
        for node_id, node in ((version.compiled or {}).get("nodes") or {}).items()
    }
    named = {k: v for k, v in handlers.items() if v}
    compiled = compile_shape(version.flow, version.shape, named)
    new_hash: str = yield Call(
        "store_recompiled",
        {"version_id": version.version_id, "compiled": Jsonb(compiled)},
        first_value,
        retry_safe=True,
        what=f"storing the recompiled artifact of {version.version_id}",
    )
    return new_hash


def load_contract_versions() -> Operation[list[dict[str, Any]]]:
    """Every envelope and effective version with what compiling it again needs."""
    rows: list[dict[str, Any]] = yield Call(
        "contract_artifacts", {}, lambda rows: [r[0] for r in rows]
    )
    return rows


def contract_problem(data: dict[str, Any]) -> CompiledWorkflowError | None:
    """Why an envelope or effective version's artifact cannot be trusted, or None."""
    return problem(
        StoredVersion(data["versionId"], data["flow"], data["version"], None, data["compiled"])
    )


def recompile_contracted(data: dict[str, Any]) -> Operation[str]:
    """Compile an envelope (bare) or an effective workflow (its envelope and org definition)
    again with this charter's compiler and store it in place; returns the new hash."""
    org = data.get("orgDefinition") if data["kind"] == "effective" else None
    compiled = compile_effective(data["envelope"], org)
    new_hash: str = yield Call(
        "store_recompiled",
        {"version_id": data["versionId"], "compiled": Jsonb(compiled)},
        first_value,
        retry_safe=True,
        what=f"storing the recompiled artifact of {data['versionId']}",
    )
    return new_hash
