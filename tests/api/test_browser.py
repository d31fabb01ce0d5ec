"""The dashboard in a real browser against a real server: the app under uvicorn on a free
port, as `charter serve` runs it, driven by headless Chromium (selenium with Debian's
chromedriver). Without a browser these tests skip and say how to install one; CI installs
it (.ci/run): sign in with a key, walk an invoice through the inbox to approval, re-drive a
dead letter, open a run's graph."""

from __future__ import annotations

import time
from typing import Any

from tests.servers import Receiver


def _sign_in(browser: Any, server: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server + "/")
    assert "/sign-in" in browser.current_url  # nothing without a key
    browser.find_element(By.NAME, "key").send_keys(key)
    browser.find_element(By.ID, "sign-in").click()
    _shows(browser, "h1", "Health of")


def _present(browser: Any, selector: str) -> Any:
    """The element, once the page that has it has loaded (never one of the page before)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 10, ignored_exceptions=[WebDriverException]).until(
        expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, selector))
    )


def _shows(browser: Any, selector: str, text: str) -> None:
    """Waits until the page's first ``selector`` element contains ``text``."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    # While the page is being replaced, Chromium may answer for an element of the old
    # document ("Node with given id does not belong to the document"): look again.
    WebDriverWait(browser, 10, ignored_exceptions=[WebDriverException]).until(
        expected_conditions.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text)
    )


def _until(check: Any, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
    return value


def test_an_invoice_is_approved_in_the_inbox_and_becomes_active(
    browser, server, keys, acme, engine
):
    from selenium.webdriver.common.by import By

    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    _until(lambda: acme.approvals.inbox("clerk2"))
    _sign_in(browser, server, keys["clerk2"])
    browser.get(server + "/inbox")
    section = _present(browser, "section.request")
    assert "9000" in section.text  # the document as it was at the pinned version
    section.find_element(By.LINK_TEXT, "Review and decide").click()
    _present(browser, "form.decide textarea").send_keys("checked")
    browser.find_element(By.CSS_SELECTOR, "button.approve").click()
    _shows(browser, "main", "Nothing waits for your decision")
    _until(lambda: acme.documents.get(doc.id).state == "active")
    browser.get(f"{server}/documents/{doc.id}")
    assert browser.find_element(By.ID, "doc-state").text == "active"


def test_a_dead_letter_is_redriven_from_the_dashboard(browser, server, keys, acme, engine):

    receiver = Receiver()
    try:
        receiver.script["/hook"] = [(400, {}), (200, {})]
        queued = acme.side_effects.webhook(receiver.url + "/hook", {"n": 1})
        _until(lambda: acme.dead_letters.list())
        _sign_in(browser, server, keys["ops"])
        browser.get(server + "/dead-letters")
        _present(browser, f'input[value="{queued.id}"]').click()
        _present(browser, "#redrive").click()
        _shows(browser, "main table", "none")
        _until(lambda: acme.side_effects.get(queued.id).status == "completed")
        assert len(receiver.to("/hook")) == 2
    finally:
        receiver.close()


def test_a_runs_graph_is_drawn_with_its_nodes_states(browser, server, keys, acme, engine):
    from selenium.webdriver.common.by import By

    doc = acme.documents.create("ap_invoice", {"grand_total": 120, "vendor_id": "v-trusted"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    run_id = _until(lambda: acme.documents.wait(doc.id, timeout=20).workflow).run_id
    _sign_in(browser, server, keys["ops"])
    browser.get(f"{server}/runs/{run_id}")
    nodes = browser.find_elements(By.CSS_SELECTOR, "svg.dag g.node")
    assert len(nodes) > 5
    states = {n.get_attribute("data-node"): n.get_attribute("data-status") for n in nodes}
    assert states["sys:start"] == "completed"
    assert browser.find_element(By.ID, "run-status").text in ("running", "completed")
