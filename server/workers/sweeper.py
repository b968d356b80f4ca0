"""Matches of lost workers: found by procrastinate's stalled jobs, aborted as `worker_lost`.

A worker that stops beating (SIGKILL, a machine gone, a network cut) leaves its jobs in
``doing``.  Once its heartbeat is ``lost_after`` seconds old, any sweeper (every worker
and the service run one) takes each such job: a match still running under that job gets
ABORT sent to its players and is kept aborted with the reason ``worker_lost`` and its log
so far, signed; a tournament plays it again (``key#2``) by its own rule, and a match
outside a tournament is queued again as a fresh copy when ``requeue`` is set.  A match
not claimed yet goes back to the queue.  Every write is conditional, so sweepers running
at once record a loss once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.records import EndReason
from server.runner import queue_again, rebuild_record, signed_text
from server.store import MatchRow, MatchStatus, NotFound, Store

from .claims import end_lost_match, job_of
from .jobs import JobSystem

log = logging.getLogger(__name__)

WORKER_LOST = "worker_lost"
"""The end reason of a match whose worker stopped beating while it ran."""

SendAbort = Callable[[MatchRow], Awaitable[None]]


class LostMatchSweeper:
    """Finds the stalled jobs and settles their matches; :meth:`sweep` is one pass."""

    def __init__(
        self,
        store: Store,
        jobs: JobSystem,
        key: Ed25519PrivateKey,
        *,
        lost_after: float,
        requeue: bool,
        send_abort: SendAbort,
        on_lost: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.key = key
        self.lost_after = lost_after
        self.requeue = requeue
        self.send_abort = send_abort
        self.on_lost = on_lost
        self.lost_total = 0
        self.stalled_now = 0

    async def sweep(self) -> list[str]:
        """One pass; returns the ids of the matches this pass recorded as lost."""
        stalled = await self.jobs.stalled(self.lost_after)
        self.stalled_now = len(stalled)
        lost = []
        for job in stalled:
            assert job.id is not None
            match_id = str(job.task_kwargs.get("match_id", ""))
            try:
                match = await self.store.get_match(match_id)
            except NotFound:
                await self.jobs.finish(job.id, succeeded=False)
                continue
            if match.status is MatchStatus.QUEUED:
                await self.jobs.retry_now(job.id)  # died before claiming it: queue it again
                continue
            if match.status is MatchStatus.RUNNING and await self._abort_lost(match, job.id):
                lost.append(match.id)
            await self.jobs.finish(job.id, succeeded=match.status is MatchStatus.FINISHED)
        return lost

    async def _abort_lost(self, match: MatchRow, job_id: int) -> bool:
        claimed_by, worker = await job_of(self.store, match.id)
        if claimed_by != job_id:
            return False
        message = f"the worker {worker} running the match stopped answering"
        header = await self.store.header(match.id)
        signed = None
        if header is not None:
            record = rebuild_record(header, await self.store.steps(match.id))
            record.update(
                isAborted=True,
                isCompleted=False,
                endReason=EndReason.ABORTED.value,
                endMessage=f"{WORKER_LOST}: {message}",
            )
            signed = signed_text(record, self.key)
        if not await end_lost_match(
            self.store,
            match.id,
            job_id=job_id,
            reason=WORKER_LOST,
            message=message,
            signed_record=signed,
        ):
            return False
        self.lost_total += 1
        log.warning("match %s: %s; aborted (%s)", match.id, message, WORKER_LOST)
        try:
            await self.send_abort(match)
        except Exception as error:
            log.warning("match %s: ABORT to its players failed: %s", match.id, error)
        if self.requeue and match.schedule_key is None:
            copy = await queue_again(self.store, match)
            log.warning("match %s queued again as %s", match.id, copy.id)
        if self.on_lost is not None:
            await self.on_lost(match.id)
        return True
