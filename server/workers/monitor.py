"""What to watch when matches run on many workers, as Prometheus gauges in ``/metrics``.

``ggp_queue_depth{game}``: jobs waiting per game; ``ggp_matches_stalled``: running matches
whose worker stopped beating (not settled yet); ``ggp_matches_lost``: matches recorded
``worker_lost`` by this process; per worker (``ggp_worker_running``,
``ggp_worker_capacity``, ``ggp_worker_heartbeat_age_seconds``): its load and how long ago
it was last heard of.  The service refreshes them every few seconds.
"""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import CollectorRegistry, Gauge

from server.store import Store, now_ms

from .claims import workers_table
from .jobs import JobSystem
from .schema import QUEUE_PREFIX
from .sweeper import LostMatchSweeper

log = logging.getLogger(__name__)


class ScaleOutMetrics:
    """The gauges, registered in the service's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.queue_depth = Gauge(
            "ggp_queue_depth", "Matches waiting for a worker, per game", ["game"], registry=registry
        )
        self.stalled = Gauge(
            "ggp_matches_stalled",
            "Running matches whose worker stopped beating, not settled yet",
            registry=registry,
        )
        self.lost = Gauge(
            "ggp_matches_lost", "Matches recorded worker_lost by this process", registry=registry
        )
        self.worker_running = Gauge(
            "ggp_worker_running", "Matches a worker runs now", ["worker"], registry=registry
        )
        self.worker_capacity = Gauge(
            "ggp_worker_capacity", "Matches a worker may run at once", ["worker"], registry=registry
        )
        self.worker_age = Gauge(
            "ggp_worker_heartbeat_age_seconds",
            "Seconds since a worker was last heard of",
            ["worker"],
            registry=registry,
        )

    async def refresh(self, store: Store, jobs: JobSystem, sweeper: LostMatchSweeper) -> None:
        """Read everything first, then replace the gauges' values without awaiting in
        between: a scrape during the reads sees the values before, never empty gauges."""
        depths = await jobs.queue_depths()
        stalled = await jobs.stalled(sweeper.lost_after)
        workers = await workers_table(store)
        self.queue_depth.clear()
        for queue, waiting in depths.items():
            self.queue_depth.labels(queue.removeprefix(QUEUE_PREFIX)).set(waiting)
        self.stalled.set(len(stalled))
        self.lost.set(sweeper.lost_total)
        now = now_ms()
        for gauge in (self.worker_running, self.worker_capacity, self.worker_age):
            gauge.clear()
        for worker in workers:
            if worker["stopped_at"] is not None:
                continue
            self.worker_running.labels(worker["name"]).set(worker["running"])
            self.worker_capacity.labels(worker["name"]).set(worker["concurrency"])
            self.worker_age.labels(worker["name"]).set((now - worker["heartbeat_at"]) / 1000)

    async def keep_fresh(
        self, store: Store, jobs: JobSystem, sweeper: LostMatchSweeper, seconds: float = 2.0
    ) -> None:
        """Refresh every ``seconds`` until cancelled."""
        while True:
            try:
                await self.refresh(store, jobs, sweeper)
            except Exception as error:
                log.warning("refreshing the scale-out metrics failed: %s", error)
            await asyncio.sleep(seconds)
