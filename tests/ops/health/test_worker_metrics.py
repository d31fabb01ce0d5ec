"""`charter worker --metrics-port`: the worker's own Prometheus metrics, over real HTTP."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from tests.integration.helpers import charter_env
from tests.servers import Receiver, free_port


def test_a_worker_exposes_its_deliveries_and_is_up(acme, db_url):
    receiver = Receiver()
    port = free_port()
    worker = subprocess.Popen(
        [sys.executable, "-m", "charter", "worker", "--metrics-port", str(port),
         "--poll-interval", "0.05"],
        env=charter_env(CHARTER_DATABASE_URL=db_url, CHARTER_MODE="production"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        queued = acme.side_effects.webhook(receiver.url + "/m", {"n": 1})
        deadline = time.monotonic() + 30
        text = ""
        while 'channel="webhook",result="delivered"} 1.0' not in text:
            assert time.monotonic() < deadline, text[-2000:]
            time.sleep(0.2)
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
            except httpx.HTTPError:
                continue
        assert "charter_worker_up 1.0" in text
        assert 'charter_worker_side_effect_duration_seconds_count{channel="webhook"} 1.0' in text
        assert acme.side_effects.get(queued.id).status == "completed"
    finally:
        worker.terminate()
        worker.wait(30)
        receiver.close()
