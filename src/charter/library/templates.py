"""The template library of seed 002 (UX Guardrails): ready contracts and org definitions.

Each template is a YAML file in ``library/templates/`` (name, description, contract, org).
``TEMPLATES[name]`` is a :class:`Template` with its entity contract and org definition as
JSON data, in name order; every one compiles (a test keeps it so). ``charter templates
NAME`` prints one.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    contract: dict[str, Any]
    org: dict[str, Any]


def load_templates() -> dict[str, Template]:
    """Every template of ``library/templates/``, by name."""
    folder = resources.files("charter.library").joinpath("templates")
    found: dict[str, Template] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            data = yaml.safe_load(entry.read_text(encoding="utf-8"))
            found[data["name"]] = Template(
                data["name"], data["description"], data["contract"], data["org"]
            )
    return found


TEMPLATES: dict[str, Template] = load_templates()
