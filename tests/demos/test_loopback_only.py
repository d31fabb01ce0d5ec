"""charter's demos, templates and use cases name no destination outside the machine: every
URL's host and every e-mail address's domain they ship is 127.0.0.1, ::1 or localhost, so
running a demo or deploying a template as it is contacts nothing elsewhere (docs may keep
illustrative addresses)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from charter.demos.use_cases import USE_CASES
from charter.library.templates import TEMPLATES

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [
    *sorted((ROOT / "src/charter/demos").glob("*.py")),
    *sorted((ROOT / "src/charter/library").rglob("*.py")),
    *sorted((ROOT / "src/charter/library").rglob("*.yaml")),
    *sorted((ROOT / "scripts").glob("*.py")),
]
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
# scheme://[userinfo@]host[:port]: the host as written (a {placeholder} included).
URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/\s'\"@?#]*@)?(\[[^\]]*\]|[^/\s'\":?#]*)")
EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@([A-Za-z0-9.-]+\.[A-Za-z]{2,}|localhost)\b")


def destinations(text: str) -> list[str]:
    """The hosts (and e-mail domains) ``text`` names that are not loopback."""
    hosts = [m.group(1) for m in URL.finditer(text)] + [m.group(1) for m in EMAIL.finditer(text)]
    return sorted({host for host in hosts if host.lower() not in LOOPBACK})


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in strings(key) + strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in strings(item)]
    return []


def test_the_scan_finds_what_leaves_the_machine():
    assert destinations("https://portal.example.com/x and http://127.0.0.1:8080/y") == [
        "portal.example.com"
    ]
    assert destinations("send to ann@example.com or bob@localhost") == ["example.com"]
    assert destinations('"url": "https://{entity.site}/hooks"') == ["{entity.site}"]
    assert destinations("smtp://u:p@mail.example.org:587?from=x@localhost") == ["mail.example.org"]
    assert destinations("http://[::1]:9/x http://localhost/x") == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_demos_and_templates_name_only_loopback(path):
    assert destinations(path.read_text()) == [], f"{path.relative_to(ROOT)} contacts elsewhere"


def test_every_template_and_use_case_sends_only_to_loopback():
    for name, template in TEMPLATES.items():
        found = destinations("\n".join(strings([template.contract, template.org])))
        assert found == [], f"template {name} names {found}"
    for case, (contract, org) in USE_CASES.items():
        found = destinations("\n".join(strings([contract, org])))
        assert found == [], f"use case {case} names {found}"
