"""Screenshots of the dashboard's main pages, written to docs/screenshots/.

    .venv/bin/python scripts/screenshots.py

Uses CHARTER_DATABASE_URL's server, else charter's embedded PostgreSQL, and a scratch
database `charter_screenshots` (dropped and made again): seed 002's use cases for org acme,
a few invoices (one small one through the fast lane, large ones waiting for approval), a
webhook that dead-letters; two workers run them; then the app is served by uvicorn and
headless Chromium (Debian's chromium and chromium-driver) photographs each page.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
import time
from pathlib import Path

import psycopg
import uvicorn
from psycopg import conninfo
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from charter import Client, migrate
from charter.api import create_app
from charter.db import connection, embedded
from charter.db.store import perform
from charter.demos.use_cases import USE_CASES
from charter.ops.api_keys import create_api_key
from charter.worker.runner import Worker, WorkerSettings

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"


def main() -> int:
    url = _fresh()
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
    with Client(url, org_id="acme") as client:
        for contract, definition in USE_CASES.values():
            client.definitions.publish(contract)
            client.definitions.publish(contract, definition)
        client.directory.put_user("clerk", roles=["ap_clerk"], email="clerk@localhost")
        client.directory.put_user("clerk2", roles=["ap_clerk"], email="clerk2@localhost")
        client.directory.put_user("admin", roles=["admin"], email="admin@localhost")
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        with psycopg.connect(url, autocommit=True) as conn:
            key = perform(conn, create_api_key("acme", "clerk2", "screenshots", "script")).key
            ops = perform(conn, create_api_key("acme", "service:ops", "screenshots", "script"))
            admin = perform(conn, create_api_key("acme", "admin", "screenshots", "script"))
        ops_key = ops.key
        for total, vendor in ((120, "v-trusted"), (9400, "v-1"), (12800, "v-2")):
            doc = client.documents.create("ap_invoice", {"grand_total": total, "vendor_id": vendor},
                                          actor="clerk")  # fmt: skip
            client.documents.transition(doc.id, "submit", actor="clerk")
        client.side_effects.webhook(
            "http://127.0.0.1:9/ledger", {"invoice": "INV-7"}, max_attempts=1
        )
        _work(url, seconds=4)
        small = client.documents.list(entity_type="ap_invoice", state="active")[0]
        run_id = client.documents.get(small.id).workflow.run_id
        document_id = client.documents.list(entity_type="ap_invoice", state="submitted")[0].id
    shots = {
        "health": "/", "runs": "/runs", "run": f"/runs/{run_id}", "documents": "/documents",
        "document": f"/documents/{document_id}", "inbox": "/inbox", "dead-letters": "/dead-letters",
        "builder": "/definitions/ap_invoice/builder",
    }  # fmt: skip
    server, base = _serve(url)
    try:
        for width, suffix in ((1280, ""), (390, "-phone")):
            browser = _browser(width)
            try:
                for name, path in shots.items():
                    signed_in = ops_key if name in ("dead-letters", "run", "runs") else key
                    if name == "builder":
                        signed_in = admin.key
                    _sign_in(browser, base, str(signed_in))
                    browser.get(base + path)
                    time.sleep(4 if name == "builder" else 0.3)  # the builder lays out and compiles
                    browser.save_screenshot(str(OUT / f"{name}{suffix}.png"))
                    if suffix:
                        break  # one phone-width page is enough to show it works there
            finally:
                browser.quit()
    finally:
        server.should_exit = True
    print(f"screenshots in {OUT}")
    return 0


def _fresh() -> str:
    admin = connection.resolve(None)
    assert admin is not None
    base = admin.url if admin.embedded is None else embedded.ensure_running().url("postgres")
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS charter_screenshots WITH (FORCE)")
        conn.execute("CREATE DATABASE charter_screenshots")
    params = conninfo.conninfo_to_dict(base)
    params["dbname"] = "charter_screenshots"
    return conninfo.make_conninfo("", **params)


def _work(url: str, seconds: float) -> None:
    async def run() -> None:
        target = connection.DatabaseTarget(url, "screenshots")
        workers = [Worker([], target, WorkerSettings(poll_interval=0.05)) for _ in range(2)]
        serving = [asyncio.create_task(w.serve()) for w in workers]
        await asyncio.sleep(seconds)
        for worker in workers:
            worker.stop()
        await asyncio.gather(*serving)

    asyncio.run(run())


def _serve(url: str) -> tuple[uvicorn.Server, str]:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(url), host="127.0.0.1", port=port,
                                           log_level="warning"))  # fmt: skip
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def _browser(width: int) -> webdriver.Chrome:
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        sys.exit("install Debian's chromium and chromium-driver first")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},900", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    browser.implicitly_wait(5)
    return browser


def _sign_in(browser: webdriver.Chrome, base: str, key: str) -> None:
    browser.delete_all_cookies()
    browser.get(base + "/sign-in")
    browser.find_element(By.NAME, "key").send_keys(key)
    browser.find_element(By.ID, "sign-in").click()
    time.sleep(0.2)


if __name__ == "__main__":
    raise SystemExit(main())
