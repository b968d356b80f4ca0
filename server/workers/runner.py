"""A worker: runs the matches whose jobs it takes from the shared queue in PostgreSQL.

>>> runner = JobRunner(store, key, WorkerSettings(games=["tictactoex9"]))  # doctest: +SKIP
>>> await runner.start()      # registers with the job system and takes jobs
>>> await runner.close()      # aborts its running matches, then stops

It is the in-process queue runner (:class:`server.runner.QueueRunner`, the same match
loop, store observer, end and signing) with another way of taking matches: procrastinate
hands it one job per queued match of the games it takes, and it claims the match row
with :func:`server.workers.claims.claim_match`.  ``ggp worker`` runs one in a process of
its own; ``ggp serve`` on PostgreSQL runs one inside the service (unless ``--no-runner``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Iterable, Mapping, Sequence, Set

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from procrastinate.job_context import JobContext
from procrastinate.worker import Worker
from pydantic import BaseModel, Field

from server.match import MatchRunner
from server.match.events import Observer
from server.records import EndReason
from server.runner import PLAYER_UNAVAILABLE, QueueRunner, RunnerMetrics, RunnerSettings
from server.runner.queue import ChannelFor, PreMatchCheck
from server.store import MatchRow, MatchStatus, NotFound, Store, now_ms

from .claims import Busy, Claimed, Missing, beat, claim_match, still_running
from .events import UNKNOWN, StepNotifier, Unknown, end_payload, notify
from .heartbeat import HeartbeatThread
from .jobs import (
    TRANSIENT_DATABASE_ERRORS,
    DatabaseBusy,
    JobSystem,
    PlayersBusy,
    RetryWhileBusy,
    queues_for,
)
from .schema import RUN_MATCH_TASK
from .sweeper import LostMatchSweeper

log = logging.getLogger(__name__)


def default_worker_name() -> str:
    """``host-pid``: unique among the workers sharing a database."""
    return f"{socket.gethostname()}-{os.getpid()}"


class WorkerSettings(BaseModel):
    """How a worker takes and runs matches."""

    name: str = Field(default_factory=default_worker_name, min_length=1, max_length=200)
    games: list[str] | None = None
    """Only matches of these games (``None``: every game)."""
    concurrency: int = Field(default=16, ge=1, le=10_000)
    """The most matches this worker runs at once."""
    requeue_interrupted: bool = False
    """Queue a fresh copy of a match outside a tournament that a lost worker was running."""
    heartbeat_seconds: float = Field(default=2.0, gt=0)
    """How often the worker tells the database it is alive."""
    lost_after: float = Field(default=10.0, gt=0)
    """Seconds without a heartbeat after which a worker counts as lost."""
    sweep_seconds: float = Field(default=2.0, gt=0)
    """How often lost workers are looked for."""
    poll_seconds: float = Field(default=0.5, gt=0)
    """How often the queue is read when no notification arrives."""
    busy_retry_seconds: float = Field(default=0.5, gt=0)
    """How long a match whose player is busy waits before it is tried again."""

    @property
    def lost_within(self) -> float:
        """The bound on the time from a worker's death to its matches' ABORT (seconds)."""
        return self.lost_after + self.heartbeat_seconds + self.sweep_seconds + 2.0


class JobRunner(QueueRunner):
    """Takes matches from the job system instead of reading the table; same interface."""

    def __init__(
        self,
        store: Store,
        key: Ed25519PrivateKey,
        settings: WorkerSettings | None = None,
        *,
        metrics: RunnerMetrics | None = None,
        pre_match_check: PreMatchCheck | None = None,
        watchers: Sequence[Observer] = (),
        channel_for: ChannelFor | None = None,
        host: str | None = None,
    ) -> None:
        self.worker_settings = settings or WorkerSettings()
        super().__init__(
            store,
            key,
            RunnerSettings(
                concurrency=self.worker_settings.concurrency,
                requeue_interrupted=self.worker_settings.requeue_interrupted,
                poll_seconds=self.worker_settings.poll_seconds,
            ),
            metrics=metrics,
            pre_match_check=pre_match_check,
            watchers=[StepNotifier(store), *watchers],
            channel_for=channel_for,
        )
        self.name = self.worker_settings.name
        self.host = host or socket.gethostname()
        self.jobs = JobSystem(store.url, pool_size=4)
        self.jobs.app.task(
            name=RUN_MATCH_TASK,
            pass_context=True,
            retry=RetryWhileBusy(self.worker_settings.busy_retry_seconds),
        )(self._job)
        self.sweeper = LostMatchSweeper(
            store,
            self.jobs,
            key,
            lost_after=self.worker_settings.lost_after,
            requeue=self.worker_settings.requeue_interrupted,
            send_abort=self._send_abort,
            on_lost=self._lost,
        )
        self.claims = 0
        """Matches this worker claimed."""
        self.claim_seconds = 0.0
        """Wall time spent claiming (the transaction that moves a match to running)."""
        self.busy_retries = 0
        self.database_retries = 0
        """Jobs tried again because the database did not answer before the claim."""
        self._worker: Worker | None = None
        self._heartbeat: HeartbeatThread | None = None
        self._worker_task: asyncio.Task[None] | None = None
        self._side_tasks: list[asyncio.Task[None]] = []
        self._started_at = now_ms()

    # -- life cycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Open the job system, then take jobs, beat and sweep until :meth:`close`."""
        await self.jobs.open()
        settings = self.worker_settings
        self._worker = Worker(
            self.jobs.app,
            queues=queues_for(settings.games),
            name=self.name,
            concurrency=settings.concurrency,
            fetch_job_polling_interval=settings.poll_seconds,
            abort_job_polling_interval=max(settings.poll_seconds, 1.0),
            install_signal_handlers=False,
            update_heartbeat_interval=settings.heartbeat_seconds,
            stalled_worker_timeout=settings.lost_after,
            delete_jobs="successful",
        )
        await self._beat()
        self._worker_task = asyncio.create_task(self._worker.run(), name="job-worker")
        worker = self._worker
        self._heartbeat = HeartbeatThread(
            self.store.url, lambda: worker.worker_id, settings.heartbeat_seconds
        )
        self._heartbeat.start()
        self._side_tasks = [
            asyncio.create_task(self._beat_loop(), name="worker-beat"),
            asyncio.create_task(self._sweep_loop(), name="worker-sweep"),
        ]

    @property
    def alive(self) -> bool:
        return self._worker_task is not None and not self._worker_task.done()

    async def wait_stopped(self) -> None:
        """Return when the job worker has stopped (say, its database went away for good)."""
        if self._worker_task is not None:
            await asyncio.wait([self._worker_task])

    def wake(self) -> None:
        """Nothing to do: the job system notifies the workers of new jobs itself."""

    async def recover_interrupted(self) -> list[str]:
        """Nothing at start: a lost worker's matches are found by the sweeper instead."""
        return []

    async def close(self) -> None:
        """Abort the running matches (ABORT to their players, kept aborted), then stop."""
        self._closing = True
        for task in self._side_tasks:
            task.cancel()
        await asyncio.gather(*self._side_tasks, return_exceptions=True)
        for runner in list(self.running.values()):
            runner.abort()
        if self._worker is not None and self._worker_task is not None:
            self._worker.stop()
            try:
                await asyncio.wait_for(asyncio.shield(self._worker_task), 15)
            except TimeoutError:
                self._worker_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._worker_task
            except Exception:
                log.exception("the job worker failed")
        if self._heartbeat is not None:
            await asyncio.to_thread(self._heartbeat.stop)
        with contextlib.suppress(Exception):
            await self._beat(stopped=True)
        await self.jobs.close()

    async def _beat(self, *, stopped: bool = False) -> None:
        await beat(
            self.store,
            name=self.name,
            host=self.host,
            games=self.worker_settings.games,
            concurrency=self.worker_settings.concurrency,
            running=len(self._tasks),
            started_at=self._started_at,
            stopped=stopped,
        )

    # -- a job -----------------------------------------------------------------------

    async def _job(self, context: JobContext, match_id: str) -> str:
        job_id = context.job.id
        assert job_id is not None
        try:
            match = await self.store.get_match(match_id)
            if match.status is not MatchStatus.QUEUED:
                return f"the match is {match.status.value}"
            started = time.perf_counter()
            outcome = await claim_match(self.store, match, worker=self.name, job_id=job_id)
            self.claim_seconds += time.perf_counter() - started
        except NotFound:
            return "no such match"
        except TRANSIENT_DATABASE_ERRORS as error:
            # Nothing was claimed (the claim is one transaction): try the job again.
            self.database_retries += 1
            log.warning(
                "match %s: the database did not answer in time (%s); trying again",
                match_id,
                type(error).__name__,
            )
            raise DatabaseBusy(str(error)) from error
        if isinstance(outcome, Busy):
            self.busy_retries += 1
            raise PlayersBusy(f"{outcome.player} has no free seat")
        if isinstance(outcome, Missing):
            await self._end_unstarted(
                match, PLAYER_UNAVAILABLE, f"no player named {outcome.player!r}"
            )
            await self._notify_end(match.id, match.tournament_id)
            return "a player is missing"
        if not isinstance(outcome, Claimed):
            return f"the match is {outcome.status.value}"
        self.claims += 1
        self._seats.update(name for name in match.players if name)
        task = asyncio.create_task(self._run(match, outcome.players), name=f"match {match.id}")
        self._tasks[match.id] = task
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            # an abort asked through the job system, or a stop: end the match, keep its log
            await self._stop_match(match, task)
            raise
        finally:
            await self._notify_end(match.id, match.tournament_id)
        return "played"

    async def _stop_match(self, match: MatchRow, task: asyncio.Task[None]) -> None:
        runner = self.running.get(match.id)
        if runner is not None:
            runner.abort()
        else:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await self.store.end_match(
            match.id,
            status=MatchStatus.ABORTED,
            end_reason=EndReason.ABORTED.value,
            end_message="aborted before it started",
            only_if=(MatchStatus.RUNNING,),
        )

    async def abort(self, match_id: str) -> MatchRow:
        """Abort a match: here when this worker runs it, else through the job system."""
        if match_id in self.running or match_id in self._tasks:
            return await super().abort(match_id)
        return await abort_anywhere(self.store, self.jobs, match_id)

    async def _notify_end(
        self, match_id: str, tournament_id: str | None | Unknown = UNKNOWN
    ) -> None:
        try:
            await notify(self.store, end_payload(match_id, tournament_id))
        except Exception as error:
            log.warning("match %s: notifying its end failed: %s", match_id, error)

    async def _lost(self, match_id: str) -> None:
        self.metrics.finished.labels(MatchStatus.ABORTED.value).inc()
        await self._notify_end(match_id)

    # -- heartbeat and sweeping ------------------------------------------------------------

    async def _beat_loop(self) -> None:
        """Keep the worker's row fresh, and stop matches the database no longer gives it."""
        while True:
            await asyncio.sleep(self.worker_settings.heartbeat_seconds)
            try:
                await self._beat()
                mine = [match_id for match_id in self.running if match_id in self._tasks]
                held = await still_running(self.store, mine, worker=self.name)
                for match_id in taken_from_here(self.running, mine, held):
                    log.warning("match %s was taken from this worker; stopping it", match_id)
                    self.running[match_id].abort()
            except Exception as error:
                log.warning("worker heartbeat failed: %s", error)

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.worker_settings.sweep_seconds)
            try:
                await self.sweeper.sweep()
            except Exception as error:
                log.warning("looking for lost workers failed: %s", error)


def taken_from_here(
    running: Mapping[str, MatchRunner], mine: Iterable[str], held: Set[str]
) -> list[str]:
    """Which of the matches ``mine`` this worker still plays although the database no
    longer gives them to it (``held``: those it does).

    A match whose end is stored while its runner still sends STOP is not one: it left
    ``running`` state in the database by ending, not by being taken.
    """
    return [
        match_id
        for match_id in mine
        if match_id not in held
        and (runner := running.get(match_id)) is not None
        and not runner.is_ended
    ]


async def abort_anywhere(store: Store, jobs: JobSystem, match_id: str) -> MatchRow:
    """Abort a queued match here, or ask the worker running it; the match as it ends."""
    from .claims import job_of

    match = await store.get_match(match_id)
    if match.status is MatchStatus.QUEUED:
        await store.end_match(
            match_id,
            status=MatchStatus.ABORTED,
            end_reason=EndReason.ABORTED.value,
            end_message="aborted while queued",
            only_if=(MatchStatus.QUEUED,),
        )
        await notify(store, end_payload(match_id, match.tournament_id))
    elif match.status is MatchStatus.RUNNING:
        job_id, _ = await job_of(store, match_id)
        if job_id is not None:
            await jobs.request_abort(job_id)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                match = await store.get_match(match_id)
                if match.status is not MatchStatus.RUNNING:
                    break
                await asyncio.sleep(0.1)
    return await store.get_match(match_id)
