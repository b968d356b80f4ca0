"""The job system's connection pool tests a connection before use only when it sat idle,
and replaces one the server closed meanwhile."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import psycopg_pool
import pytest

from server.workers import jobs
from server.workers.jobs import conninfo, pool_checking_idle_connections

from .harness import prepared_database


async def _backend_pid(pool: psycopg_pool.AsyncConnectionPool) -> int:
    async with pool.connection() as connection:
        row = await (await connection.execute("SELECT pg_backend_pid()")).fetchone()
    assert row is not None
    return int(row[0])


async def test_a_connection_handed_back_a_moment_ago_is_not_tested_again(
    postgres_base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = conninfo(await prepared_database(postgres_base_url))
    checks: list[Any] = []
    real_check = psycopg_pool.AsyncConnectionPool.check_connection

    async def counted(connection: Any) -> None:
        checks.append(connection)
        await real_check(connection)

    monkeypatch.setattr(psycopg_pool.AsyncConnectionPool, "check_connection", counted)
    monkeypatch.setattr(jobs, "IDLE_CHECK_SECONDS", 60.0)
    pool = pool_checking_idle_connections(conninfo=url, min_size=1, max_size=1, open=False)
    await pool.open(wait=True)
    try:
        pids = {await _backend_pid(pool) for _ in range(5)}
        assert len(pids) == 1
        assert len(checks) == 1  # a fresh connection is tested once, then trusted while busy
        monkeypatch.setattr(jobs, "IDLE_CHECK_SECONDS", 0.0)
        await _backend_pid(pool)
        assert len(checks) == 2
    finally:
        await pool.close()


async def test_an_idle_connection_the_server_closed_is_replaced_before_use(
    postgres_base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = conninfo(await prepared_database(postgres_base_url))
    monkeypatch.setattr(jobs, "IDLE_CHECK_SECONDS", 0.2)
    pool = pool_checking_idle_connections(conninfo=url, min_size=1, max_size=1, open=False)
    await pool.open(wait=True)
    try:
        pid = await _backend_pid(pool)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        await asyncio.sleep(0.3)
        assert await _backend_pid(pool) != pid
    finally:
        await pool.close()


async def test_the_job_systems_queries_run_without_begin_and_commit(
    postgres_base_url: str,
) -> None:
    """Each query procrastinate sends is one statement; in autocommit it costs one round
    trip, not three."""
    url = conninfo(await prepared_database(postgres_base_url))
    pool = pool_checking_idle_connections(conninfo=url, min_size=1, max_size=1, open=False)
    await pool.open(wait=True)
    try:
        async with pool.connection() as connection:
            assert connection.autocommit
            await connection.execute("SELECT 1")
            assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    finally:
        await pool.close()
