"""/api/templates: the template library (``charter templates``), for the workflow builder
to start from."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from charter.api.auth import Principal
from charter.api.routing import api
from charter.errors import TemplateNotFoundError
from charter.library.templates import TEMPLATES, Template


def shown(template: Template) -> dict[str, Any]:
    return {
        "name": template.name,
        "title": template.name.replace("_", " ").capitalize(),
        "description": template.description,
        "entityType": template.contract.get("entityType"),
        "contract": template.contract,
        "orgDefinition": template.org,
    }


@api("GET", "/api/templates", "The template library: contracts with org definitions to "
     "start from", "templates", response=list[dict[str, Any]])  # fmt: skip
async def list_templates(request: Request, who: Principal, _: None) -> Any:
    return [shown(template) for template in TEMPLATES.values()]


@api("GET", "/api/templates/{name}", "One template of the library", "templates",
     response=dict[str, Any])  # fmt: skip
async def get_template(request: Request, who: Principal, _: None) -> Any:
    name = request.path_params["name"]
    if name not in TEMPLATES:
        raise TemplateNotFoundError(
            f"There is no template {name!r}; the templates are {', '.join(TEMPLATES)}."
        )
    return shown(TEMPLATES[name])
