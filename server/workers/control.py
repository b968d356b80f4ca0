"""The runner of a service that runs no matches itself (``ggp serve --no-runner``).

It has the runner's interface (:meth:`wake`, :meth:`abort`, :attr:`alive`), so the API
and the tournament driver need not know: matches are queued in the table (the database
gives each its job), aborted through the job system, and lost workers are swept here too.
"""

from __future__ import annotations

import asyncio
import logging

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.runner import QueueRunner, RunnerMetrics, RunnerSettings
from server.runner.queue import ChannelFor
from server.store import MatchRow, MatchStatus, Store

from .events import end_payload, notify
from .jobs import JobSystem
from .runner import abort_anywhere
from .sweeper import LostMatchSweeper

log = logging.getLogger(__name__)


class JobControl(QueueRunner):
    """Queue control without running matches: aborts by job, sweeps lost workers."""

    def __init__(
        self,
        store: Store,
        key: Ed25519PrivateKey,
        *,
        requeue_interrupted: bool = False,
        lost_after: float = 10.0,
        sweep_seconds: float = 2.0,
        metrics: RunnerMetrics | None = None,
        channel_for: ChannelFor | None = None,
    ) -> None:
        super().__init__(
            store,
            key,
            RunnerSettings(requeue_interrupted=requeue_interrupted),
            metrics=metrics,
            channel_for=channel_for,
        )
        self.jobs = JobSystem(store.url, pool_size=2)
        self.sweep_seconds = sweep_seconds
        self.sweeper = LostMatchSweeper(
            store,
            self.jobs,
            key,
            lost_after=lost_after,
            requeue=requeue_interrupted,
            send_abort=self._send_abort,
            on_lost=self._lost,
        )
        self._sweeping: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.jobs.open()
        self._sweeping = asyncio.create_task(self._sweep_loop(), name="lost-worker-sweep")

    @property
    def alive(self) -> bool:
        return self._sweeping is not None and not self._sweeping.done()

    def wake(self) -> None:
        """Nothing to do: the database gives a queued match its job."""

    async def recover_interrupted(self) -> list[str]:
        return []

    async def abort(self, match_id: str) -> MatchRow:
        return await abort_anywhere(self.store, self.jobs, match_id)

    async def close(self) -> None:
        if self._sweeping is not None:
            self._sweeping.cancel()
            await asyncio.gather(self._sweeping, return_exceptions=True)
        await self.jobs.close()

    async def _lost(self, match_id: str) -> None:
        self.metrics.finished.labels(MatchStatus.ABORTED.value).inc()
        await notify(self.store, end_payload(match_id))

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_seconds)
            try:
                await self.sweeper.sweep()
            except Exception as error:
                log.warning("looking for lost workers failed: %s", error)
