"""What a worker measures itself, for Prometheus (``charter worker --metrics-port``): its
step handlers (count and duration by flow, step and outcome), its side-effect deliveries
(by channel and result), and that it is up. The server's /metrics has the database's view
(queues, outboxes, dead letters); these are the worker's own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

BUCKETS = (0.005, 0.025, 0.1, 0.5, 2.0, 10.0, 60.0, 300.0)


class WorkerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.steps = Histogram(
            "charter_worker_step_duration_seconds", "Step handler durations",
            ["flow", "step", "outcome"], buckets=BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.deliveries = Counter(
            "charter_worker_side_effects", "Side effects and tasks answered",
            ["channel", "result"], registry=self.registry,
        )  # fmt: skip
        self.delivery_seconds = Histogram(
            "charter_worker_side_effect_duration_seconds", "Time to send a side effect",
            ["channel"], buckets=BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.up = Gauge("charter_worker_up", "1 while the worker serves", registry=self.registry)

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """Expose them at http://HOST:PORT/metrics (a thread of prometheus-client's)."""
        start_http_server(port, addr=host, registry=self.registry)


# The process's metrics: one worker per process in `charter worker`; in-process workers
# (tests, the demos) share it.
METRICS = WorkerMetrics()
