"""Screenshots of the dashboard for docs/screenshots/: the app on a loopback port over a
fresh demo database (on CHARTER_TEST_DSN's server, else the embedded one), filled with a
few invoices (one waiting in the inbox, one rejected and approved, one failed) and a
webhook that dead-letters, and photographed by headless Chromium at desktop (1280 wide)
and phone (390 wide) width: health, runs, a run, documents, a document, the inbox, dead
letters, and the slot builder where this version has one.

    python tools/screenshots.py [--out docs/screenshots]

Needs Debian's chromium and chromium-driver. The database it makes is dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import uvicorn
from psycopg import conninfo, sql

from charter import Client
from charter.api import create_app
from charter.db.connection import DatabaseTarget
from charter.db.migrate import migrate
from charter.db.store import perform
from charter.demos.use_cases import invoice_contract, invoice_org
from charter.ops.api_keys import create_api_key
from charter.worker.runner import Worker, WorkerSettings

WIDTHS = {"": (1280, 900), "-phone": (390, 844)}
ORG = "acme"


def _server_url() -> str:
    """A superuser's URL on the server to make the demo database on."""
    if os.environ.get("CHARTER_TEST_DSN"):
        return os.environ["CHARTER_TEST_DSN"]
    from charter.db import embedded

    return embedded.ensure_running().url()


@contextmanager
def _demo_database() -> Iterator[str]:
    admin = _server_url()
    name = f"charter_screens_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    params = conninfo.conninfo_to_dict(admin)
    params["dbname"] = name
    try:
        yield conninfo.make_conninfo("", **params)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def _in_thread(
    start: Callable[[], Any], ready: Callable[[], bool], stop: Callable[[], Any]
) -> Iterator[None]:
    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not ready():
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("a background server did not start")
        time.sleep(0.05)
    try:
        yield
    finally:
        stop()
        thread.join(30)


@contextmanager
def _engine(url: str) -> Iterator[None]:
    """The documents engine (a worker serving no flows) in a thread."""
    worker = Worker([], DatabaseTarget(url, "screenshots"), WorkerSettings(poll_interval=0.05))
    loop = asyncio.new_event_loop()

    def stop() -> None:
        loop.call_soon_threadsafe(worker.stop)

    with _in_thread(lambda: loop.run_until_complete(worker.serve()), worker.ready.is_set, stop):
        yield
    loop.close()


BUILDER = "/definitions/{entity_type}/builder"


def _paths(routes: list[Any]) -> Iterator[str]:
    for route in routes:
        yield getattr(route, "path", "")
        for inner in _paths(getattr(route, "routes", []) or []):
            yield getattr(route, "path", "") + inner


@contextmanager
def _app(app: Any, port: int) -> Iterator[str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    def stop() -> None:
        server.should_exit = True

    with _in_thread(server.run, lambda: server.started, stop):
        yield f"http://127.0.0.1:{port}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _until(check: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise RuntimeError("the demo data did not settle")
        time.sleep(0.1)
    return value


def _invoice(number: str, vendor: str, total: int, **more: str) -> dict[str, Any]:
    return {"invoice_no": number, "vendor": vendor, "grand_total": total,
            "vendor_id": "v-" + vendor.split()[0].lower(), **more}  # fmt: skip


def _fill(client: Client) -> dict[str, str]:
    """A few invoices: one waiting for approval, one rejected then approved (posted), one
    failed for want of an approver. Returns the ids the pages show."""
    client.definitions.publish(invoice_contract())
    client.definitions.publish(invoice_contract(), invoice_org())
    for user in ("mary", "mike", "clerk"):
        client.directory.put_user(user, roles=["ap_clerk"], email=f"{user}@example.com")
    client.directory.put_user("admin", roles=["admin"], email="admin@example.com")
    client.directory.put_org({"trusted_vendors": ["v-trusted"]})
    docs = client.documents
    done = docs.create("ap_invoice", _invoice("INV-1041", "Paper & Co", 1250, cost_center="CC-7"),
                       actor="clerk")  # fmt: skip
    docs.transition(done.id, "submit", actor="clerk")
    [request] = _until(lambda: client.approvals.inbox("mike"))
    client.approvals.decide(request.id, "rejected", actor="mike",
                            entity_version=request.entity_version,
                            comment="cost center missing on page 2")  # fmt: skip
    _until(lambda: docs.get(done.id).state == "draft")
    docs.update(done.id, {"cost_center": "CC-12"}, actor="clerk", reason="cost center fixed")
    docs.transition(done.id, "submit", actor="clerk")
    [request] = _until(lambda: client.approvals.inbox("mary"))
    client.approvals.decide(request.id, "approved", actor="mary",
                            entity_version=request.entity_version, comment="ok")  # fmt: skip
    _until(lambda: docs.get(done.id).state == "active")
    waiting = docs.create("ap_invoice", _invoice("INV-1042", "Steel AG", 9000), actor="clerk")
    docs.transition(waiting.id, "submit", actor="clerk")
    _until(lambda: client.approvals.inbox("mary"))
    docs.create("ap_invoice", _invoice("INV-1043", "Trusted Inc", 120, vendor_id="v-trusted"),
                actor="clerk")  # fmt: skip
    # Nobody left to approve what the clerk submits next: that instance fails.
    client.directory.remove_user("mike")
    client.directory.put_user("mary", roles=[], email="mary@example.com")
    failed = docs.create("ap_invoice", _invoice("INV-1044", "Ink Ltd", 7300), actor="clerk")
    docs.transition(failed.id, "submit", actor="clerk")
    run = _until(lambda: (w := docs.get(failed.id).workflow) and w.status == "failed" and w)
    client.directory.put_user("mary", roles=["ap_clerk"], email="mary@example.com")
    letter = client.side_effects.webhook("http://127.0.0.1:9/ledger", {"invoice": "INV-7"},
                                         max_attempts=1)  # fmt: skip
    _until(lambda: any(d.id == letter.id for d in client.dead_letters.list()))
    return {"document": done.id, "waiting": waiting.id, "run": str(run.run_id)}


def _browser(size: tuple[int, int]) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        sys.exit("needs chromium and chromedriver: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={size[0]},{size[1]}", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    # A window is never narrower than about 500 px: a phone's width is emulated instead.
    metrics = {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    return browser


def _sign_in(browser: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(base + "/sign-in")
    browser.find_element(By.NAME, "key").send_keys(key)
    browser.find_element(By.ID, "sign-in").click()
    _until(lambda: "/sign-in" not in browser.current_url)


def _builder_drawn(browser: Any) -> bool:
    """Whether the builder has laid out its slot (its nodes are on the canvas)."""
    from selenium.webdriver.common.by import By

    return bool(browser.find_elements(By.CSS_SELECTOR, ".react-flow__node .step"))


def _shoot(base: str, keys: tuple[str, str], pages: dict[str, str], out: Path) -> list[Path]:
    """Each page at each width, signed in with the first key; the builder with the second (an
    admin's: the palette and forms are for those who may edit)."""
    user, admin = keys
    saved = []
    for suffix, size in WIDTHS.items():
        browser = _browser(size)
        try:
            _sign_in(browser, base, user)
            for name, path in pages.items():
                if name == "builder":
                    _sign_in(browser, base, admin)
                browser.get(base + path)
                if name == "builder":
                    _until(lambda: _builder_drawn(browser))  # noqa: B023 (used at once)
                    if suffix:  # on a phone the panels stack: start at the slot's canvas
                        browser.execute_script(
                            "document.querySelector('.centre .toolbar').scrollIntoView()"
                        )
                    time.sleep(3)  # it lays the slot out and compiles it
                    # Whole in view: the canvas's own fit can run before its final size.
                    browser.execute_script(
                        "document.querySelector('.react-flow__controls-fitview').click()"
                    )
                    time.sleep(0.5)
                else:
                    time.sleep(0.3)  # the graph's scroll runs once the page has loaded
                target = out / f"{name}{suffix}.png"
                browser.save_screenshot(str(target))
                saved.append(target)
        finally:
            browser.quit()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--port", type=int, default=0, help="default: a free one")
    arguments = parser.parse_args()
    out, port = arguments.out, arguments.port or _free_port()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["CHARTER_MODE"] = "development"
    with _demo_database() as url:
        with psycopg.connect(url, autocommit=True) as owner:
            migrate(owner)
        with Client(url, org_id=ORG) as client, _engine(url):
            ids = _fill(client)
        with psycopg.connect(url, autocommit=True) as owner:
            key = str(perform(owner, create_api_key(ORG, "mary", "screenshots", None)).key)
            admin = str(perform(owner, create_api_key(ORG, "admin", "screenshots", None)).key)
        app = create_app(url)
        with _app(app, port) as base:
            pages = {
                "health": "/",
                "runs": "/runs",
                "dead-letters": "/dead-letters",
                "inbox": "/inbox",
                "documents": "/documents",
                "document": f"/documents/{ids['document']}",
                "run": f"/runs/{ids['run']}",
            }
            if BUILDER in set(_paths(app.routes)):  # the slot builder, where this version has it
                pages["builder"] = BUILDER.format(entity_type="ap_invoice")
            for path in _shoot(base, (key, admin), pages, out):
                print(path)


if __name__ == "__main__":
    main()
