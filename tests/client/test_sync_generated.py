"""The sync client is generated from the async one (tools/async_to_sync.py), and the two
faces agree: the same public methods, signatures and docstrings, one blocking, one
awaitable."""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "async_to_sync.py"
CLIENT = ROOT / "src" / "charter" / "client"
SOURCES = sorted(p.stem for p in CLIENT.glob("*_async.py"))
_ASYNC = re.compile(r"\bAsync(?=[A-Z])")
_SYNC_NAMES = {"__aenter__": "__enter__", "__aexit__": "__exit__"}


def _generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, cwd=ROOT
    )


def test_the_generated_sync_modules_are_up_to_date():
    done = _generator("--check")
    assert done.returncode == 0, done.stderr


def test_the_check_names_a_sync_module_edited_by_hand(tmp_path):
    for path in CLIENT.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    edited = tmp_path / "events.py"
    edited.write_text(edited.read_text().replace("SentEvent:", "SentEvent | None:"))
    done = _generator("--check", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert "events.py is out of date with events_async.py" in done.stderr
    assert "documents.py" not in done.stderr  # only the edited module is named
    assert _generator("--dir", str(tmp_path)).returncode == 0  # regenerating repairs it
    assert edited.read_text() == (CLIENT / "events.py").read_text()


def test_every_client_module_but_the_package_has_an_async_source():
    generated = {p.stem for p in CLIENT.glob("*.py")} - {"__init__", *SOURCES}
    assert generated == {name.removesuffix("_async") for name in SOURCES}
    for name in generated:
        head = (CLIENT / f"{name}.py").read_text().splitlines()[0]
        assert head.startswith(f"# Generated from {name}_async.py by tools/async_to_sync.py")


def _pairs() -> list[tuple[type, type]]:
    pairs = []
    for source in SOURCES:
        async_module: ModuleType = importlib.import_module(f"charter.client.{source}")
        sync_module = importlib.import_module(f"charter.client.{source.removesuffix('_async')}")
        for name, cls in vars(async_module).items():
            if inspect.isclass(cls) and cls.__module__ == async_module.__name__:
                assert name.startswith("Async"), f"{source}.{name}: async classes say Async"
                pairs.append((getattr(sync_module, name.removeprefix("Async")), cls))
                assert getattr(sync_module, name) is cls  # both faces importable from one path
    return pairs


PAIRS = _pairs()


def _public(cls: type) -> dict[str, object]:
    return {
        _SYNC_NAMES.get(name, name): member
        for name, member in vars(cls).items()
        if not name.startswith("_") or name in {"__init__", *_SYNC_NAMES, *_SYNC_NAMES.values()}
    }


@pytest.mark.parametrize(("sync", "async_"), PAIRS, ids=[s.__name__ for s, _ in PAIRS])
def test_the_two_faces_have_the_same_methods_signatures_and_docstrings(sync, async_):
    sync_members, async_members = _public(sync), _public(async_)
    assert sorted(sync_members) == sorted(async_members)
    for name, member in async_members.items():
        twin = sync_members[name]
        if isinstance(member, property):
            assert isinstance(twin, property), name
            assert member.fget is not None and twin.fget is not None
            assert _ASYNC.sub("", str(inspect.signature(member.fget))) == str(
                inspect.signature(twin.fget)
            ), name
            assert _ASYNC.sub("", inspect.getdoc(member) or "") == (inspect.getdoc(twin) or "")
            continue
        if not callable(member):
            assert member == twin, name
            continue
        assert _ASYNC.sub("", str(inspect.signature(member))) == str(inspect.signature(twin)), (
            f"{sync.__name__}.{name}"
        )
        assert _ASYNC.sub("", inspect.getdoc(member) or "") == (inspect.getdoc(twin) or ""), name
        assert not inspect.iscoroutinefunction(twin), f"{sync.__name__}.{name} blocks"
        if name not in {"__init__", "for_org"}:
            assert inspect.iscoroutinefunction(member), f"{async_.__name__}.{name} is awaitable"


def test_the_generator_turns_async_code_into_its_blocking_twin(tmp_path):
    (tmp_path / "poller_async.py").write_text(
        '"""A poller (the async face)."""\n\n'
        "import asyncio\n\n"
        "from charter.db.store import AsyncStore\n\n\n"
        "class AsyncPoller:\n"
        '    """Polls an :class:`AsyncStore`; use it in ``async with``."""\n\n'
        "    def __init__(self, store: AsyncStore) -> None:\n"
        "        self.store = store\n\n"
        "    async def __aenter__(self) -> AsyncPoller:\n"
        "        return self\n\n"
        "    async def poll(self, rounds: list[int]) -> int:\n"
        "        total = 0\n"
        "        async with self.store.lock() as held:\n"
        "            async for n in held.rows(rounds):\n"
        "                await asyncio.sleep(n)\n"
        "                total += (await self.store.count())[0]\n"
        "        return total\n"
    )
    assert _generator("--dir", str(tmp_path)).returncode == 0
    assert (tmp_path / "poller.py").read_text() == (
        "# Generated from poller_async.py by tools/async_to_sync.py; do not edit.\n"
        "# Edit poller_async.py and run: python tools/async_to_sync.py\n"
        '"""A poller (the async face)."""\n\n'
        "import time\n\n"
        # poller_async is outside the package here, so isort files it with third parties
        "from charter.client.poller_async import AsyncPoller as AsyncPoller\n\n"
        "from charter.db.store import Store\n\n\n"
        "class Poller:\n"
        '    """Polls an :class:`Store`; use it in ``with``."""\n\n'
        "    def __init__(self, store: Store) -> None:\n"
        "        self.store = store\n\n"
        "    def __enter__(self) -> Poller:\n"
        "        return self\n\n"
        "    def poll(self, rounds: list[int]) -> int:\n"
        "        total = 0\n"
        "        with self.store.lock() as held:\n"
        "            for n in held.rows(rounds):\n"
        "                time.sleep(n)\n"
        "                total += self.store.count()[0]\n"
        "        return total\n"
    )
