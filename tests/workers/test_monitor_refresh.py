"""The scale-out gauges are replaced in one go: a scrape while the monitor reads the
database sees the values before, never empty gauges."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest

from server.workers import monitor
from server.workers.monitor import ScaleOutMetrics
from server.workers.schema import QUEUE_PREFIX


class SlowJobs:
    """Job system stand-in whose queue depths wait for ``release``."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.release = asyncio.Event()
        self.reading = asyncio.Event()

    async def queue_depths(self) -> dict[str, int]:
        self.reading.set()
        await self.release.wait()
        return {QUEUE_PREFIX + "nineBoardTicTacToe": self.depth}

    async def stalled(self, lost_after: float) -> list[object]:
        return []


class Sweeper:
    lost_after = 30.0
    lost_total = 0


async def test_a_scrape_during_a_refresh_sees_the_gauges_before_it(monkeypatch: Any) -> None:
    async def no_workers(store: object) -> list[dict[str, Any]]:
        return []

    monkeypatch.setattr(monitor, "workers_table", no_workers)
    registry = CollectorRegistry()
    metrics = ScaleOutMetrics(registry)
    first = SlowJobs(3)
    first.release.set()
    await metrics.refresh(None, first, Sweeper())  # type: ignore[arg-type]
    wanted = b'ggp_queue_depth{game="nineBoardTicTacToe"} 3.0'
    assert wanted in generate_latest(registry)

    second = SlowJobs(5)
    refreshing = asyncio.create_task(metrics.refresh(None, second, Sweeper()))  # type: ignore[arg-type]
    await second.reading.wait()
    assert wanted in generate_latest(registry)  # mid-refresh: the values before
    second.release.set()
    await refreshing
    assert b'ggp_queue_depth{game="nineBoardTicTacToe"} 5.0' in generate_latest(registry)
