"""Every import the README and docs show works, and the paths kept after the package split
(one-line shims) give the same objects as the new ones."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FROM_IMPORT = re.compile(r"^\s*from (charter[\w.]*) import ([\w, ]+)$", re.MULTILINE)
IMPORT = re.compile(r"^\s*import (charter[\w.]*)\s*$", re.MULTILINE)


def _documented() -> list[tuple[str, str | None]]:
    found: set[tuple[str, str | None]] = set()
    for path in DOCUMENTS:
        text = path.read_text()
        for module, names in FROM_IMPORT.findall(text):
            found |= {(module, name.strip()) for name in names.split(",") if name.strip()}
        found |= {(module, None) for module in IMPORT.findall(text)}
    return sorted(found, key=str)


def test_the_documents_show_imports() -> None:
    documented = _documented()
    assert ("charter.usecases", "USE_CASES") in documented
    assert ("charter.templates", "TEMPLATES") in documented


@pytest.mark.parametrize(("module", "name"), _documented())
def test_documented_import_works(module: str, name: str | None) -> None:
    imported = importlib.import_module(module)
    if name is not None:
        assert getattr(imported, name) is not None


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("charter.usecases", "charter.demos.use_cases", ["USE_CASES", "invoice_contract"]),
        ("charter.templates", "charter.library.templates", ["TEMPLATES"]),
        ("charter.side_effects", "charter.ops.side_effects", ["event_signature"]),
        ("charter.api", "charter.api.app", ["create_app"]),
        ("charter.worker.channels", "charter.worker.channels.sms", []),  # SmsProvider lives here
    ],
)
def test_kept_paths_give_the_moved_objects(old: str, new: str, names: list[str]) -> None:
    importlib.import_module(old)
    importlib.import_module(new)
    for name in names:
        assert getattr(importlib.import_module(old), name) is getattr(
            importlib.import_module(new), name
        )
