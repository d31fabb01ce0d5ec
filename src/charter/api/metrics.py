"""``/metrics`` for Prometheus (prometheus-client): the figures of the key's org, read from
PostgreSQL at scrape time, so every server and worker agrees and nothing is lost on a
restart. Step durations are a histogram of the last hour's executions by flow and node type,
without the nodes that wait for a person, an event, a timer or a receiver: their p95 is
``charter_wait_p95_seconds`` by kind."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from charter.api.auth import Principal
from charter.db.store import Call, first_json
from charter.ops.health import STUCK_REASONS, WAIT_KINDS

BUCKETS = ("0.005", "0.025", "0.1", "0.5", "2", "10", "60")


class _Snapshot(Collector):
    def __init__(self, health: dict[str, Any], counts: dict[str, Any]) -> None:
        self.health, self.counts = health, counts

    def collect(self) -> Any:
        h, c = self.health, self.counts
        yield GaugeMetricFamily("charter_workers_alive", "Workers with a live heartbeat",
                                value=h["workersAlive"])  # fmt: skip
        flow = ["flow"]
        ready = GaugeMetricFamily("charter_queue_ready", "Flow tasks ready to run", labels=flow)
        running = GaugeMetricFamily("charter_queue_running", "Flow tasks running", labels=flow)
        oldest = GaugeMetricFamily(
            "charter_queue_oldest_ready_seconds", "Age of the oldest ready flow task", labels=flow
        )
        for q in h["flowQueues"]:
            ready.add_metric([q["flow"]], q["ready"])
            running.add_metric([q["flow"]], q["running"])
            oldest.add_metric([q["flow"]], q.get("oldestReadySeconds") or 0)
        yield from (ready, running, oldest)
        for name, box in (
            ("document_events", h["documentEvents"]),
            ("side_effects", h["sideEffects"]),
        ):
            what = name.replace("_", " ")
            yield GaugeMetricFamily(f"charter_{name}_pending", f"{what} waiting to be handled",
                                    value=box["pending"])  # fmt: skip
            yield GaugeMetricFamily(f"charter_{name}_processing", f"{what} being handled",
                                    value=box["processing"])  # fmt: skip
            yield GaugeMetricFamily(f"charter_{name}_dead_letters", f"{what} out of attempts",
                                    value=box["deadLetters"])  # fmt: skip
            yield GaugeMetricFamily(f"charter_{name}_oldest_pending_seconds",
                                    f"Age of the oldest pending {what}",
                                    value=box.get("oldestPendingSeconds") or 0)  # fmt: skip
        instances = GaugeMetricFamily("charter_instances", "Document workflow instances",
                                      labels=["status"])  # fmt: skip
        for status, n in h["instances"].items():
            instances.add_metric([status], n)
        yield instances
        yield GaugeMetricFamily(
            "charter_stuck_instances",
            "Instances and flow runs that should be moving and are not (the stuck detector)",
            value=len(h["stuck"]),
        )
        reasons = GaugeMetricFamily(
            "charter_stuck_by_reason", "Stuck instances and flow runs by their first reason",
            labels=["reason"],
        )  # fmt: skip
        for reason in STUCK_REASONS:
            reasons.add_metric([reason], sum(1 for s in h["stuck"] if s.get("reason") == reason))
        yield reasons
        waiting = h.get("waiting") or {}
        yield GaugeMetricFamily(
            "charter_waiting_instances_all",
            "Instances waiting, not stuck (for a person, an event, a timer not yet due...)",
            value=waiting.get("instances", 0),
        )
        by_kind = GaugeMetricFamily(
            "charter_waiting_instances",
            "Instances waiting (not stuck) by what they wait for (one may wait for several)",
            labels=["kind"],
        )
        for kind in WAIT_KINDS:
            by_kind.add_metric([kind], (waiting.get("byKind") or {}).get(kind, 0))
        yield by_kind
        yield GaugeMetricFamily(
            "charter_dead_letters",
            "Dead letters of both outboxes (document events and side effects)",
            value=h.get("deadLetters", 0),
        )
        p95 = h.get("stepLatencyP95Ms")
        yield GaugeMetricFamily(
            "charter_step_latency_p95_seconds",
            "95th percentile of completed steps and nodes, last hour; waits are left out",
            value=(p95 or 0.0) / 1000,
        )
        waits = GaugeMetricFamily(
            "charter_wait_p95_seconds",
            "95th percentile of waits that ended in the last hour, by what they waited for",
            labels=["kind"],
        )
        for kind, ms in sorted((h.get("waitLatencyP95Ms") or {}).items()):
            waits.add_metric([kind], ms / 1000)
        yield waits
        runs = CounterMetricFamily(
            "charter_runs", "Runs by flow and status", labels=["flow", "status"]
        )
        for r in c["runs"]:
            runs.add_metric([r["flow"], r["status"]], r["count"])
        yield runs
        retries = GaugeMetricFamily(
            "charter_retries_last_hour",
            "Attempts that failed and were tried again, last hour",
            labels=["kind"],
        )
        retries.add_metric(["step"], c["retries"]["steps"])
        retries.add_metric(["side_effect"], c["retries"]["sideEffects"])
        yield retries
        docs = GaugeMetricFamily("charter_documents", "Documents by type and state",
                                 labels=["entity_type", "state"])  # fmt: skip
        for d in c["documents"]:
            docs.add_metric([d["entityType"], d["state"]], d["count"])
        yield docs
        durations = HistogramMetricFamily(
            "charter_step_duration_seconds",
            "Step and node durations, the last hour, by flow and node type",
            labels=["flow", "node_type"],
        )
        for s in c["stepDurations"]:
            buckets = [(b, n) for b, n in zip(BUCKETS, s["buckets"], strict=True)]
            buckets.append(("+Inf", s["count"]))
            durations.add_metric([s["flow"], s["nodeType"]], buckets, s["sum"] or 0.0)
        yield durations


async def metrics_text(who: Principal) -> bytes:
    report = await who.client.health.report()
    counts = await who.client.store.execute(
        Call("metrics_counts", {"org_id": who.org_id}, first_json)
    )
    registry = CollectorRegistry()
    registry.register(_Snapshot(report.raw, counts))
    return generate_latest(registry)
