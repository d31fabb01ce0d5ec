"""Imports point one way through the layers of the package (docs/architecture.md §2):

    leaf utilities, dsl, expr, compiler, library  →  db  →  ops  →  client, worker  →  api
    →  demos  →  cli

A module may import from its own layer and the layers before it, never from a later one.
The api serves the client's operations over HTTP, so it comes after client and worker (it
builds an AsyncClient). The demos run a client and workers; the cli is the entry point
that launches them (`charter demo`), so it comes last. charter/__init__.py (the public
surface), __main__.py and the one-line shims kept for documented import paths sit above
everything and are not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "charter"

LEAVES = ("errors", "vocabulary", "settings", "canonical", "payloads", "backoff", "tracing", "logs")
LAYERS: dict[str, int] = {
    **dict.fromkeys(LEAVES, 0),
    "dsl": 0,
    "expr": 0,
    "compiler": 0,
    "library": 0,
    "db": 1,
    "ops": 2,
    "client": 3,
    "worker": 3,
    "api": 4,
    "demos": 5,
    "cli": 6,
}
# Not checked: the public surface and the shims that keep documented paths working.
UNCHECKED = {"__init__", "__main__", "usecases", "templates", "side_effects"}

# Imports inside a function that point up a layer, each with why it cannot be avoided.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def _part(module: str) -> str:
    """charter.ops.runs -> ops; charter.errors -> errors."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "charter":
                found += [(f"charter.{alias.name}", node.lineno) for alias in node.names]
            elif node.module.startswith("charter."):
                found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("charter.")]
    return found


def _module(path: Path) -> str:
    return ".".join(("charter", *path.relative_to(SRC).with_suffix("").parts))


def test_every_package_has_a_layer() -> None:
    for path in SRC.iterdir():
        name = path.stem
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            assert name in LAYERS or name in UNCHECKED, f"charter.{name} has no layer"


def test_imports_point_down_the_layers() -> None:
    upward = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module(path)
        own = _part(module)
        if own in UNCHECKED:
            continue
        for imported, line in _imports(path):
            other = _part(imported)
            if other in UNCHECKED and other != "__init__":
                upward.append(f"{module}:{line} imports the shim {imported}; use its new path")
            elif other in LAYERS and LAYERS[other] > LAYERS[own]:
                if (module, imported) not in ALLOWED_UPWARD:
                    upward.append(f"{module}:{line} ({own}) imports {imported} ({other})")
            elif other == "__init__":
                upward.append(f"{module}:{line} imports the package root; import the module")
    assert upward == []


def test_allowed_upward_imports_still_exist() -> None:
    seen = {
        (_module(path), imported) for path in SRC.rglob("*.py") for imported, _ in _imports(path)
    }
    assert set(ALLOWED_UPWARD) <= seen
