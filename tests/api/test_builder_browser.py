"""The visual slot builder in a real browser against a real server (as tests/api/test_browser.py
runs the dashboard): an org admin builds seed 002's use case A in the invoice's review slot
from an empty slot, by clicks and typing only, sees the compiler's refusal on the node it
concerns, fixes it, publishes, and rolls back; invoices submitted in between follow each
published path, run by a real worker."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from charter import Client
from charter.db.store import perform
from charter.demos.use_cases import invoice_contract, invoice_org
from charter.ops.api_keys import create_api_key
from tests.api.test_browser import _present, _shows, _sign_in, _until

ORG = "initech"
# Use case A's threshold condition (demos/use_cases.py invoice_org), typed with a misspelt
# field first so that the compiler refuses it.
FAST_LANE = "entity.grand_total <= 500 && entity.vendor_id in org.trusted_vendors"
MISSPELT = FAST_LANE.replace("grand_total", "grand_totl")


@pytest.fixture
def initech(db_url, monkeypatch) -> Iterator[tuple[Client, str, str]]:
    """Org initech on the invoice contract with posting only: its review slot is empty, so a
    submitted invoice waits for a person's approve. Yields the client, the admin's key and
    that first version's id."""
    monkeypatch.setenv("CHARTER_MODE", "development")
    with Client(db_url, org_id=ORG) as client:
        client.definitions.publish(invoice_contract())
        posting_only = invoice_org()
        del posting_only["slots"]["slot:review"]
        first = client.definitions.publish(invoice_contract(), posting_only)
        client.directory.put_user("clerk", roles=["ap_clerk"])
        client.directory.put_user("admin", roles=["admin"])
        client.directory.put_org({"trusted_vendors": ["v-trusted"]})
        with psycopg.connect(db_url, autocommit=True) as owner:
            key = perform(owner, create_api_key(ORG, "admin", "tests", None))
        yield client, str(key.key), first.version_id


def _by_id(browser: Any, testid: str) -> Any:
    return _present(browser, f'[data-testid="{testid}"]')


def _type(browser: Any, testid: str, text: str) -> None:
    """Replaces the field's text as a person does: select all, type."""
    from selenium.webdriver.common.keys import Keys

    field = _by_id(browser, testid)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(text)


def _choose(browser: Any, testid: str, text: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(_by_id(browser, testid)).select_by_visible_text(text)


def _status(browser: Any, text: str) -> None:
    _shows(browser, '[data-testid="compile-status"]', text)


def _add(browser: Any, node_type: str, local_id: str) -> None:
    _by_id(browser, f"palette-{node_type}").click()
    _type(browser, "field-id", local_id)
    _by_id(browser, f"node-{local_id}")  # renamed on the canvas


def _select(browser: Any, local_id: str) -> None:
    """Clicks the node on the canvas until its form is the one shown (a click while the
    layout moves the nodes may land beside it)."""
    from selenium.common.exceptions import WebDriverException

    def clicked() -> bool:
        try:
            _by_id(browser, f"node-{local_id}").click()
            return _by_id(browser, "field-id").get_attribute("value") == local_id
        except WebDriverException:
            return False

    _until(clicked)


def _connect(browser: Any, source: str, target: str, label: str) -> None:
    _select(browser, source)
    _choose(browser, "connect-target", target)
    _choose(browser, "connect-label", label)
    _by_id(browser, "connect").click()


def _problems(browser: Any) -> list[str]:
    """The problems listed, each as the first of the builder's ids or fields it names."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    try:
        texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, '[data-testid="problem"]')]
    except WebDriverException:  # re-rendered while read
        return ["?"]
    return ["grand_totl" if "grand_totl" in t else t for t in texts]


def _submitted(client: Client, total: int) -> Any:
    doc = client.documents.create(
        "ap_invoice", {"grand_total": total, "vendor_id": "v-trusted"}, actor="clerk"
    )
    client.documents.transition(doc.id, "submit", actor="clerk")
    return _until(lambda: _settled(client, doc.id))


def _settled(client: Client, doc_id: str) -> Any:
    doc = client.documents.wait(doc_id, timeout=20)
    return doc if doc.workflow and doc.workflow.settled else None


def test_an_admin_builds_the_fast_lane_publishes_it_and_rolls_it_back(
    browser, server, initech, engine
):
    from selenium.webdriver.common.by import By

    client, admin_key, first_version = initech
    before = _submitted(client, 120)
    assert before.state == "submitted"  # the old path: a person approves
    assert [w.kind for w in before.workflow.waiting_for] == ["transition"]

    _sign_in(browser, server, admin_key)
    browser.get(f"{server}/definitions/ap_invoice/builder")
    _status(browser, "ok")
    _by_id(browser, "slot-slot:review").click()
    assert "empty" in _by_id(browser, "slot-slot:review").text

    _add(browser, "condition", "fast_lane")
    _type(browser, "field-expression", MISSPELT)
    _add(browser, "script", "auto_approved")
    _type(browser, "field-expression", "true")
    _type(browser, "field-assignTo", "context.auto_approved")
    _add(browser, "approval", "review")
    _by_id(browser, "field-approvers-add").click()
    _type(browser, "field-approvers-0-value", "ap_clerk")
    _connect(browser, "fast_lane", "auto_approved", "true")
    _connect(browser, "fast_lane", "review", "false")

    # (1) The compiler refuses the misspelt field, on the condition node it concerns.
    _until(lambda: _problems(browser) == ["grand_totl"])
    _status(browser, "1 problem")
    node = _by_id(browser, "node-fast_lane")
    assert node.get_attribute("data-problem") == "true"
    assert "NODE_CONFIG_INVALID" in node.text
    for other in ("auto_approved", "review"):
        assert _by_id(browser, f"node-{other}").get_attribute("data-problem") == "false"
    assert not browser.find_element(By.CSS_SELECTOR, '[data-testid="publish"]').is_enabled()
    _by_id(browser, "problem").click()  # selects the node: its form is shown
    _shows(browser, '[data-testid="field-expression-error"]', "grand_totl")
    _type(browser, "field-expression", FAST_LANE)
    _status(browser, "ok")
    assert _by_id(browser, "node-fast_lane").get_attribute("data-problem") == "false"
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="problem"]')

    # (2) Publish.
    _by_id(browser, "publish").click()
    _shows(browser, '[data-testid="message"]', "Published")
    published = client.definitions.current("ap_invoice")
    assert published.version_id != first_version

    # (3) The next invoice follows the new path: the fast lane approves and posts it.
    fast = _submitted(client, 120)
    assert fast.state == "active"
    assert fast.data["gl_batch"] == "GL-AUTO"
    assert fast.workflow.version_id == published.version_id
    assert fast.workflow.context["auto_approved"] is True

    # (4) Roll back to the first version: the next invoice waits for a person again.
    _by_id(browser, f"rollback-{first_version}").click()
    _shows(browser, '[data-testid="message"]', "Rolled back")
    _status(browser, "ok")
    assert "empty" in _by_id(browser, "slot-slot:review").text
    after = _submitted(client, 120)
    assert after.state == "submitted"
    assert [w.kind for w in after.workflow.waiting_for] == ["transition"]
    assert after.workflow.version_id == client.definitions.current("ap_invoice").version_id
    assert after.workflow.version_id != published.version_id


def _box(browser: Any, testid: str) -> dict[str, float]:
    """The element's box on the page (not the viewport), in CSS pixels."""
    return browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return {left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY};",
        _by_id(browser, testid),
    )


def _fits_the_width(browser: Any) -> bool:
    return bool(
        browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    )


def test_on_a_phone_the_builder_stacks_and_a_palette_click_adds_a_node(browser, server, initech):
    _, admin_key, _ = initech
    # A window is never narrower than about 500 px: a phone is emulated instead.
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 800, "deviceScaleFactor": 2, "mobile": True},
    )
    _sign_in(browser, server, admin_key)
    browser.get(f"{server}/definitions/ap_invoice/builder")
    _status(browser, "ok")
    assert browser.execute_script("return window.innerWidth") == 390
    _by_id(browser, "slot-slot:review").click()
    assert _fits_the_width(browser)

    # One column: the canvas spans the page's width, the palette comes below it.
    canvas, palette = _box(browser, "canvas"), _box(browser, "palette-condition")
    assert canvas["right"] - canvas["left"] > 300
    assert palette["top"] >= canvas["bottom"]

    _by_id(browser, "palette-condition").click()

    def on_the_canvas() -> bool:  # once the layout has placed it and the view has followed
        from selenium.common.exceptions import WebDriverException

        try:
            node = _box(browser, "node-condition_1")
        except WebDriverException:  # re-rendered while measured
            return False
        inside = canvas["left"] <= node["left"] and node["right"] <= canvas["right"]
        return inside and canvas["top"] <= node["top"] and node["bottom"] <= canvas["bottom"]

    _until(on_the_canvas)
    assert _by_id(browser, "field-id").get_attribute("value") == "condition_1"
    assert _fits_the_width(browser)  # with the node's form open too
