"""Write the sync client modules from their async sources.

Each ``src/charter/client/<name>_async.py`` is the source; ``<name>.py`` is generated from
it (psycopg's ``tools/async_to_sync.py`` does the same for its connection and cursors):

- ``async def`` becomes ``def``, ``await x`` becomes ``x``, ``async with`` / ``async for``
  become ``with`` / ``for``;
- names lose their ``Async`` prefix (``AsyncStore`` -> ``Store``, ``AsyncClient`` ->
  ``Client``), in code and in docstrings but the module's; ``NAMES`` maps the rest
  (``__aenter__`` -> ``__enter__``, ``asyncio.sleep`` -> ``time.sleep``), and imports of
  the ``*_async`` modules point at their sync twins;
- the generated module re-exports its source's async classes, so ``charter.client.<name>``
  names both faces;
- ruff sorts the imports and formats the result.

    python tools/async_to_sync.py           # write the sync modules
    python tools/async_to_sync.py --check   # exit 1 naming each module out of date

Comments in the source are dropped (the ast keeps none); keep them in docstrings.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "src" / "charter" / "client"
PACKAGE = "charter.client"

# Names the Async-prefix rule does not cover (dotted names match attribute access).
NAMES = {
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "asyncio": "time",
    "asyncio.sleep": "time.sleep",
}
# Phrases in docstrings and other strings.
PHRASES = {"``async with``": "``with``", "``async for``": "``for``"}
_ASYNC_NAME = re.compile(r"\bAsync(?=[A-Z])")


def rename(name: str) -> str:
    return NAMES.get(name) or _ASYNC_NAME.sub("", name)


def rename_text(text: str) -> str:
    for old, new in PHRASES.items():
        text = text.replace(old, new)
    return _ASYNC_NAME.sub("", text)


def sync_module(module: str) -> str:
    if module.startswith(PACKAGE + ".") and module.endswith("_async"):
        return module.removesuffix("_async")
    return NAMES.get(module, module)


class AsyncToSync(ast.NodeTransformer):
    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        fields = {field: getattr(node, field) for field in node._fields}
        fields["name"] = rename(node.name)
        return ast.copy_location(ast.FunctionDef(**fields), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.name = rename(node.name)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.name = rename(node.name)
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(ast.With(items=node.items, body=node.body), node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        self.generic_visit(node)
        new = ast.For(target=node.target, iter=node.iter, body=node.body, orelse=node.orelse)
        return ast.copy_location(new, node)

    def visit_Await(self, node: ast.Await) -> ast.AST:
        value: ast.AST = self.visit(node.value)
        return value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = rename(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and (
            dotted := NAMES.get(f"{node.value.id}.{node.attr}")
        ):
            owner, node.attr = dotted.rsplit(".", 1)
            node.value = ast.Name(id=owner, ctx=ast.Load())
            return node
        self.generic_visit(node)
        node.attr = rename(node.attr)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        self.generic_visit(node)
        node.arg = rename(node.arg)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            node.value = rename_text(node.value)
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            alias.name = sync_module(alias.name)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        node.module = sync_module(node.module or "")
        for alias in node.names:
            alias.name = rename(alias.name)
        return node


def _reexport(tree: ast.Module, source_module: str, async_classes: list[str]) -> None:
    """Import the source's async classes into the sync module, as explicit re-exports."""
    if not async_classes:
        return
    names = [ast.alias(name=name, asname=name) for name in async_classes]
    last_import = max(
        i for i, stmt in enumerate(tree.body) if isinstance(stmt, ast.Import | ast.ImportFrom)
    )
    tree.body.insert(last_import + 1, ast.ImportFrom(module=source_module, names=names, level=0))
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
            and isinstance(stmt.value, ast.List)
        ):
            exported = {str(e.value) for e in stmt.value.elts if isinstance(e, ast.Constant)}
            stmt.value.elts = [ast.Constant(n) for n in sorted(exported | set(async_classes))]


def _ruff(args: list[str], code: str, path: Path) -> str:
    config = ["--config", str(ROOT / "pyproject.toml")]
    command = [sys.executable, "-m", "ruff", *args, *config, "--stdin-filename", str(path), "-"]
    done = subprocess.run(command, input=code, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"ruff {' '.join(args)} failed on {path}:\n{done.stderr}{done.stdout}")
    return done.stdout


def generate(source: Path) -> str:
    """The sync module's text for the async source ``source``."""
    tree = ast.parse(source.read_text())
    async_classes = [
        stmt.name
        for stmt in tree.body
        if isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Async")
    ]
    docstring = ast.get_docstring(tree, clean=False)
    tree = ast.fix_missing_locations(AsyncToSync().visit(tree))
    if docstring is not None:  # the module's docstring speaks of both faces: kept as it is
        tree.body[0] = ast.Expr(ast.Constant(docstring))
    _reexport(tree, f"{PACKAGE}.{source.stem}", async_classes)
    header = (
        f"# Generated from {source.name} by tools/async_to_sync.py; do not edit.\n"
        f"# Edit {source.name} and run: python tools/async_to_sync.py\n"
    )
    target = source.with_name(source.name.removesuffix("_async.py") + ".py")
    code = header + ast.unparse(tree) + "\n"
    code = _ruff(["check", "--fix", "--select", "I", "--quiet"], code, target)
    return _ruff(["format", "--quiet"], code, target)


def pairs(folder: Path = CLIENT) -> list[tuple[Path, Path]]:
    """Each async source in ``folder`` with the sync module generated from it."""
    return [
        (source, source.with_name(source.name.removesuffix("_async.py") + ".py"))
        for source in sorted(folder.glob("*_async.py"))
    ]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a module is out of date"
    )
    parser.add_argument(
        "--dir", type=Path, default=CLIENT, help="the folder of async sources (src/charter/client)"
    )
    options = parser.parse_args(argv)
    stale = []
    for source, target in pairs(options.dir):
        code = generate(source)
        if target.exists() and target.read_text() == code:
            continue
        if options.check:
            stale.append(target)
        else:
            target.write_text(code)
            print(f"wrote {_shown(target)}")
    for target in stale:
        print(f"{_shown(target)} is out of date with {target.stem}_async.py", file=sys.stderr)
    if stale:
        print("run: python tools/async_to_sync.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
