"""The document runtime's fixtures (org acme with every use case, local mail and SMS
servers, a worker running the documents engine), and the browser tests' headless Chromium and
served app, for the tests below."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from charter.api import create_app
from tests.runtime_fixtures import (  # noqa: F401 (fixtures)
    _mail_server,
    _sms_server,
    acme,
    engine,
    keys,
    mail,
    sms,
    sql,
)
from tests.servers import free_port


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture
def browser() -> Iterator[object]:
    found = _chromium()
    if found is None:
        message = (
            "no Chromium: install Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver) to run the browser tests"
        )
        if os.environ.get("CHARTER_REQUIRE_BROWSER"):  # CI: never pass by skipping
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,900"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


@pytest.fixture
def server(db_url, login) -> Iterator[str]:
    """The app served by uvicorn in a thread, as `charter serve` serves it."""
    port = free_port()
    config = uvicorn.Config(
        create_app(login("charter_app")), host="127.0.0.1", port=port, log_level="warning"
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(20)
