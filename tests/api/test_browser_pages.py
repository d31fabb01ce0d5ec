"""The run graph in a real browser: a run's page opens with its graph scrolled so that the
node the run failed at is in view, at desktop width."""

from __future__ import annotations

from tests.api.test_browser import _sign_in, _until


def test_a_failed_runs_graph_opens_at_the_failed_node(browser, server, keys, acme, engine):
    # Nobody is left to approve what the clerk submits: the instance fails at the approval.
    acme.directory.remove_user("reviewer")
    acme.directory.remove_user("clerk2")
    doc = acme.documents.create("ap_invoice", {"grand_total": 9000, "vendor_id": "v-1"},
                                actor="clerk")  # fmt: skip
    acme.documents.transition(doc.id, "submit", actor="clerk")
    workflow = _until(lambda: (w := acme.documents.get(doc.id).workflow) and w.status == "failed"
                      and w)  # fmt: skip
    _sign_in(browser, server, keys["ops"])
    browser.get(f"{server}/runs/{workflow.run_id}")
    assert browser.execute_script("return window.innerWidth") >= 1200
    failed = 'g.node[data-status="failed"]'
    seen = browser.execute_script(
        """
        const box = document.querySelector(".graph");
        const node = document.querySelector(arguments[0]);
        const b = box.getBoundingClientRect(), n = node.getBoundingClientRect();
        return {scrolled: box.scrollLeft, boxLeft: b.left, boxRight: b.right,
                nodeLeft: n.left, nodeRight: n.right, node: node.dataset.node,
                focus: node.id, wide: box.scrollWidth > box.clientWidth};
        """,
        failed,
    )
    assert seen["node"] == "usr:slot:review:review" and seen["focus"] == "graph-focus"
    assert seen["wide"] and seen["scrolled"] > 0  # the graph is wider than its box: it moved
    assert seen["boxLeft"] <= seen["nodeLeft"] and seen["nodeRight"] <= seen["boxRight"]
    summary = browser.find_element("id", "failure").text
    assert summary.startswith("Failed: APPROVERS_EMPTY")
