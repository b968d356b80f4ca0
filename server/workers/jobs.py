"""The job system: a procrastinate application on the service's PostgreSQL database.

Each queued match has one job (deferred by the database trigger of
:mod:`server.workers.schema`) in its game's queue; a worker fetches jobs from the
queues of the games it takes.  procrastinate keeps the workers' heartbeats and finds the
jobs of workers that stopped beating (:meth:`JobSystem.stalled`).
"""

from __future__ import annotations

import datetime
import time
import weakref
from collections.abc import Sequence
from typing import Any

import psycopg
import psycopg_pool
import sqlalchemy.exc
from procrastinate import App, PsycopgConnector
from procrastinate.jobs import Job, Status
from procrastinate.retry import BaseRetryStrategy, RetryDecision

from .schema import RUN_MATCH_TASK


class PlayersBusy(Exception):
    """A player of the match has no free seat now; the job is tried again shortly."""


class DatabaseBusy(Exception):
    """The database could not be reached in time before the match was claimed (every
    pooled connection in use, a dropped connection); the job is tried again shortly,
    so that the queued match is never left without a job."""


TRANSIENT_DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.TimeoutError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    OSError,
)
"""Failures of the database's reach rather than of the request: worth trying again."""


class RetryWhileBusy(BaseRetryStrategy):
    """Try a match again after ``wait`` seconds for as long as a player is busy, or the
    database could not be reached before the claim."""

    def __init__(self, wait: float) -> None:
        self.wait = wait

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        if isinstance(exception, PlayersBusy | DatabaseBusy):
            later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=self.wait)
            return RetryDecision(retry_at=later)
        return None


def conninfo(url: str) -> str:
    """A libpq URL for psycopg from the URL a user gives (``postgresql+psycopg://`` too)."""
    scheme, separator, rest = url.partition("://")
    if not separator or not scheme.lower().startswith(("postgresql", "postgres")):
        raise ValueError("workers need a PostgreSQL database (postgresql://...)")
    return f"postgresql://{rest}"


IDLE_CHECK_SECONDS = 1.0
"""A pooled connection idle for longer is tested before use (a busy one is not)."""


def pool_checking_idle_connections(**options: Any) -> psycopg_pool.AsyncConnectionPool:
    """procrastinate's connection pool, testing a connection only after it sat idle, its
    connections in autocommit.

    procrastinate has the pool test every connection it hands out, a round trip for each
    query; a connection handed back a moment ago is alive, so only one idle for over
    :data:`IDLE_CHECK_SECONDS` is tested (and replaced when dead).  Every query
    procrastinate sends through the pool is one statement (a call of one of its
    functions), atomic on its own; outside autocommit the pool wrapped each in BEGIN and
    COMMIT, two more round trips a query.
    """
    handed_back: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Any], float] = (
        weakref.WeakKeyDictionary()
    )

    async def check(connection: psycopg.AsyncConnection[Any]) -> None:
        since = handed_back.get(connection)
        if since is None or time.monotonic() - since >= IDLE_CHECK_SECONDS:
            await psycopg_pool.AsyncConnectionPool.check_connection(connection)

    async def note_return(connection: psycopg.AsyncConnection[Any]) -> None:
        handed_back[connection] = time.monotonic()

    async def in_autocommit(connection: psycopg.AsyncConnection[Any]) -> None:
        # set on each new connection, not through the pool's ``kwargs``: procrastinate
        # opens its listening connection with those and ``autocommit`` of its own
        await connection.set_autocommit(True)

    options.update(check=check, reset=note_return, configure=in_autocommit)
    return psycopg_pool.AsyncConnectionPool(**options)


class JobSystem:
    """procrastinate's application, opened on one database."""

    def __init__(self, url: str, *, pool_size: int = 4) -> None:
        self.app = App(
            connector=PsycopgConnector(
                conninfo=conninfo(url),
                min_size=1,
                max_size=pool_size,
                pool_factory=pool_checking_idle_connections,
            )
        )

    async def open(self) -> None:
        await self.app.open_async()

    async def close(self) -> None:
        await self.app.close_async()

    async def stalled(self, lost_after: float) -> list[Job]:
        """Jobs of a running match whose worker has sent no heartbeat for ``lost_after`` s."""
        return list(
            await self.app.job_manager.get_stalled_jobs(
                task_name=RUN_MATCH_TASK, seconds_since_heartbeat=lost_after
            )
        )

    async def finish(self, job_id: int, *, succeeded: bool) -> None:
        """Close a job whose worker is gone."""
        status = Status.SUCCEEDED if succeeded else Status.FAILED
        await self.app.job_manager.finish_job_by_id_async(job_id, status, delete_job=False)

    async def retry_now(self, job_id: int) -> None:
        """Put a job whose worker is gone back in its queue."""
        await self.app.job_manager.retry_job_by_id_async(
            job_id, datetime.datetime.now(datetime.UTC)
        )

    async def request_abort(self, job_id: int) -> bool:
        """Ask the worker running a job to abort it (through procrastinate's own channel)."""
        return await self.app.job_manager.cancel_job_by_id_async(job_id, abort=True)

    async def queue_depths(self) -> dict[str, int]:
        """Jobs waiting, per queue (``ggp.game.<name>``)."""
        rows = await self.app.connector.execute_query_all_async(
            "SELECT queue_name, count(*) AS waiting FROM procrastinate_jobs "
            "WHERE status = 'todo' GROUP BY queue_name"
        )
        return {row["queue_name"]: int(row["waiting"]) for row in rows}

    async def count(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        """Rows of a read-only query on the job tables (for the metrics)."""
        return list(await self.app.connector.execute_query_all_async(sql, **params))


def queues_for(games: Sequence[str] | None) -> list[str] | None:
    """The job queues of a worker limited to ``games`` (``None``: every game)."""
    from .schema import game_queue

    return None if not games else [game_queue(name) for name in games]
