"""The approver's view in a real browser at phone width (375 by 800, Chromium's mobile
emulation): ten waiting requests keep the inbox short, a request's field table fits the
screen with its changed rows marked and its raw JSON folded away, and a decision with a
comment goes through, all without JavaScript."""

from __future__ import annotations

from typing import Any

from tests.api.test_browser import _present, _shows, _sign_in, _until

PHONE = {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": True}
# Ten requests at phone width: a card is the title (up to two lines), one line of who asked,
# the four summary fields in two columns, a folded field table and a button, about 250 px;
# 300 px a card and 600 px for the header, the heading and the decided list make 3,600 px.
# The inbox that showed every request's JSON was past 5,000 px with fewer requests.
MOST_PX_FOR_TEN = 10 * 300 + 600


def _phone(browser: Any) -> None:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})


def _size(browser: Any, what: str) -> int:
    # Script is disabled for the page itself; the driver's own calls still run.
    return int(browser.execute_script(f"return document.documentElement.{what}"))


def test_ten_waiting_requests_keep_the_phone_inbox_short(browser, server, keys, acme, engine):
    from selenium.webdriver.common.by import By

    for n in range(10):
        doc = acme.documents.create(
            "ap_invoice",
            {"invoice_no": f"INV-2024-{n:04}", "vendor": "Northwind Traders Ltd",
             "grand_total": 12000 + n, "cost_center": "CC-4410", "vendor_id": "v-9"},
            actor="clerk",
        )  # fmt: skip
        acme.documents.transition(doc.id, "submit", actor="clerk")
    _until(lambda: len(acme.approvals.inbox("clerk2")) == 10)
    _phone(browser)
    _sign_in(browser, server, keys["clerk2"])
    browser.get(server + "/inbox")
    _shows(browser, "h1", "(10)")
    cards = browser.find_elements(By.CSS_SELECTOR, "section.request")
    assert len(cards) == 10
    assert "— Northwind Traders Ltd" in cards[0].text and "GRAND TOTAL" in cards[0].text
    assert not cards[0].find_element(By.CSS_SELECTOR, "table.fields").is_displayed()
    height = _size(browser, "scrollHeight")
    assert height <= MOST_PX_FOR_TEN, f"the phone inbox is {height} px"
    assert _size(browser, "scrollWidth") <= PHONE["width"]  # nothing wider than the phone


def test_a_request_on_a_phone_shows_what_changed_and_takes_a_comment(
    browser, server, keys, acme, engine
):
    from selenium.webdriver.common.by import By

    data = {"invoice_no": "INV-7", "vendor": "Contoso", "grand_total": 500, "vendor_id": "v-2",
            "cost_center": "CC-1"}  # fmt: skip
    doc = acme.documents.create("ap_invoice", data, actor="clerk")
    acme.documents.update(doc.id, {"grand_total": 650, "cost_center": "CC-2"}, actor="clerk")
    acme.documents.transition(doc.id, "submit", actor="clerk")
    [request] = _until(lambda: acme.approvals.inbox("clerk2"))
    _phone(browser)
    _sign_in(browser, server, keys["clerk2"])
    browser.get(f"{server}/inbox/{request.id}")
    _shows(browser, "h1", "Invoice INV-7 — Contoso")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.fields tr.changed")
    changed = [row.get_attribute("data-field") for row in rows]
    assert changed == ["grand_total", "cost_center"]
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-field="grand_total"]')
    plain = browser.find_element(By.CSS_SELECTOR, 'tr[data-field="invoice_no"]')
    assert row.value_of_css_property("background-color") != plain.value_of_css_property(
        "background-color"
    )
    assert row.text.split() == ["grand", "total", "changed", "500", "650"]
    raw = browser.find_element(By.CSS_SELECTOR, "details.raw pre")
    assert not raw.is_displayed()  # the JSON stays behind "details"
    browser.find_element(By.CSS_SELECTOR, "details.raw > summary").click()
    assert raw.is_displayed() and '"vendor_id": "v-2"' in raw.text
    assert _size(browser, "scrollWidth") <= PHONE["width"]
    _present(browser, "form.decide textarea").send_keys("Cost centre moved with the budget.")
    browser.find_element(By.CSS_SELECTOR, "button.approve").click()
    _shows(browser, "main", "Nothing waits for your decision")
    [decision] = acme.approvals.get(request.id).decisions
    assert decision.decision == "approved"
    assert decision.comment == "Cost centre moved with the budget."
    closed = browser.find_element(By.ID, "closed").text
    assert "Invoice INV-7 — Contoso" in closed and "Cost centre moved" in closed
