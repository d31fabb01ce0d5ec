"""Finding the flows named on the command line: ``module`` or ``module:attribute``."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from charter.dsl.actions import registered_actions
from charter.dsl.flow import Flow
from charter.errors import CharterError, FlowLoadError


def load_flows(spec: str, *, allow_actions_only: bool = False) -> list[Flow]:
    """The flows of ``spec``: every module-level Flow of a module, or the Flow (or list of
    Flows) that ``module:attribute`` names. The current directory is importable, as with
    ``python -m``. With ``allow_actions_only`` (the worker), a module that registers
    ``@charter.action`` handlers may define no flow."""
    module_name, _, attribute = spec.partition(":")
    if not module_name:
        raise FlowLoadError(
            f"{spec!r} names no module; use MODULE or MODULE:ATTRIBUTE, e.g. myapp.flows:flow."
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = _import(module_name)
    if attribute:
        found = _attribute(module, module_name, attribute)
        flows = found if isinstance(found, list | tuple) else [found]
        bad = [f for f in flows if not isinstance(f, Flow)]
        if bad or not flows:
            raise FlowLoadError(
                f"{spec} is {type(found).__name__}, not a Flow (or a list of Flows). Point "
                "at the object made with Flow(...)."
            )
    else:
        flows = _module_flows(module)
        if not flows and allow_actions_only and registered_actions():
            return []
        if not flows:
            raise FlowLoadError(
                f"Module {module_name} defines no Flow at module level. Define one there "
                "(flow = Flow('name')) or name it: MODULE:ATTRIBUTE."
            )
    slugs = [flow.slug for flow in flows]
    duplicates = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicates:
        raise FlowLoadError(
            f"{spec} has several different flows called {', '.join(duplicates)}; flow slugs "
            "must be unique. Rename one of them."
        )
    return list(flows)


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except CharterError:
        raise  # e.g. a FlowDefinitionError: its message already names the step and rule
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise FlowLoadError(
                f"No module named {module_name} (looked in {os.getcwd()} and on sys.path). "
                "Run charter from your project's directory, or install your package."
            ) from None
        raise FlowLoadError(
            f"Importing {module_name} failed: {exc}. Install the missing package."
        ) from None
    except Exception as exc:
        raise FlowLoadError(
            f"Importing {module_name} failed with {type(exc).__name__}: {exc}. Fix the module "
            "(try `python -c 'import " + module_name + "'` to see the traceback)."
        ) from None


def _attribute(module: Any, module_name: str, attribute: str) -> Any:
    value = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            names = sorted(n for n, v in vars(module).items() if isinstance(v, Flow))
            hint = f" Flows there: {', '.join(names)}." if names else ""
            raise FlowLoadError(
                f"Module {module_name} has no attribute {attribute}.{hint}"
            ) from None
    return value


def _module_flows(module: Any) -> list[Flow]:
    flows: list[Flow] = []
    for value in vars(module).values():
        if isinstance(value, Flow) and all(value is not f for f in flows):
            flows.append(value)
    return sorted(flows, key=lambda f: f.slug)
