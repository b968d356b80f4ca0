"""PostgreSQL only: notices sent with the group commit, and idle pooled connections that
the server closed (a restart) replaced before anyone uses them."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any

import psycopg
import pytest
from pgcluster import create_database
from sqlalchemy import text
from store_rows import queue, step_row

from server.store import Store, StoreError
from server.store import store as store_module

_numbers = itertools.count()
CONNECTION_SETUP = ("select pg_catalog.version()", "select current_schema()", "show ")
"""What SQLAlchemy asks of each connection it opens."""


@pytest.fixture
def database_url(postgres_base_url: str) -> str:
    """PostgreSQL only (the shared ``store`` fixture opens it)."""
    return create_database(postgres_base_url, f"conn_{os.getpid()}_{next(_numbers)}")


async def _listen(url: str, channel: str) -> psycopg.AsyncConnection[object]:
    connection = await psycopg.AsyncConnection.connect(url, autocommit=True)
    await connection.execute(f"LISTEN {channel}")
    return connection


async def _received(connection: psycopg.AsyncConnection[object], count: int) -> list[str]:
    payloads: list[str] = []
    async with asyncio.timeout(10):
        async for notice in connection.notifies():
            payloads.append(notice.payload)
            if len(payloads) == count:
                break
    return payloads


async def test_notices_ride_on_the_group_commit_after_the_rows_before_them(
    store: Store, database_url: str
) -> None:
    match_id = "m1"
    await queue(store, match_id, ["a", "b"])
    listener = await _listen(database_url, "ggp_test")
    try:
        first_step = asyncio.ensure_future(store.add_step(match_id, step_row(0)))
        notices = [store.notify_later("ggp_test", json.dumps({"n": number})) for number in range(5)]
        await store.notify("ggp_other", "ignored here")
        await first_step
        await asyncio.gather(*notices)
        assert [json.loads(p)["n"] for p in await _received(listener, 5)] == [0, 1, 2, 3, 4]
        # the row was committed no later than the notices about it
        assert [row.step for row in await store.steps(match_id)] == [0]
    finally:
        await listener.close()


async def test_notices_need_postgresql(tmp_path: object) -> None:
    store = Store(f"sqlite:///{tmp_path}/ggp.db")
    await store.open(upgrade=True)
    try:
        with pytest.raises(StoreError, match="PostgreSQL"):
            await store.notify("ggp_test", "x")
    finally:
        await store.close()


async def test_an_idle_connection_the_server_closed_is_replaced_before_use(
    store: Store, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "IDLE_PING_SECONDS", 0.2)
    async with store.engine.connect() as connection:
        pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
        await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    await asyncio.sleep(0.3)
    # the pooled connection is dead; the store notices before the caller does
    async with store.engine.connect() as connection:
        new_pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
    assert new_pid != pid
    assert await store.ping()


async def test_a_connection_handed_back_a_moment_ago_is_used_without_a_ping(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings: list[str] = []
    for name, engine in (("write", store.engine), ("read", store.read_engine)):
        dialect = engine.sync_engine.dialect
        real_ping = dialect.do_ping

        def counted(connection: object, name: str = name, real_ping: Any = real_ping) -> bool:
            pings.append(name)
            return bool(real_ping(connection))

        monkeypatch.setattr(dialect, "do_ping", counted)
    monkeypatch.setattr(store_module, "IDLE_PING_SECONDS", 60.0)
    for _ in range(5):
        await store.list_players()
        await store.add_audit("admin", "test", "x")
    assert pings == []
    monkeypatch.setattr(store_module, "IDLE_PING_SECONDS", 0.0)
    await store.list_players()
    await store.add_audit("admin", "test", "x")
    assert pings == ["read", "write"]


async def test_reads_run_in_autocommit_on_connections_of_their_own(store: Store) -> None:
    """A read opens no transaction (no BEGIN, no ROLLBACK), and never switches a writer's
    connection into autocommit and back."""
    async with store.read_engine.connect() as connection:
        raw = await connection.get_raw_connection()
        assert raw.driver_connection.autocommit is True
    async with store.engine.connect() as connection:
        raw = await connection.get_raw_connection()
        assert raw.driver_connection.autocommit is False
    assert store.read_engine.pool is not store.engine.pool


async def test_a_notice_that_fails_never_costs_the_rows_written_with_it(store: Store) -> None:
    await queue(store, "m2", ["a", "b"])
    stored = asyncio.ensure_future(store.add_step("m2", step_row(0)))
    too_long = store.notify_later("ggp_test", "x" * 9000)  # PostgreSQL's limit is 8000
    with pytest.raises(Exception, match="payload string too long"):
        await too_long
    await stored
    assert [step.step for step in await store.steps("m2")] == [0]


async def test_queueing_a_match_and_a_group_commit_are_one_statement_each(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[str] = []
    execute = psycopg.AsyncCursor.execute

    async def count(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        # every statement psycopg sends, through SQLAlchemy or not, but for what SQLAlchemy
        # asks a connection it has just opened (strings; psycopg's type lookups are composed)
        if isinstance(query, str) and not query.startswith(CONNECTION_SETUP):
            statements.append(query)
        return await execute(cursor, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncCursor, "execute", count)
    await store.queue_match(
        "m3",
        game_name="g",
        game_version=1,
        players=["a", None],
        start_clock=1,
        play_clock=1,
        policy="random",
        config={},
        audit_actor="admin",
    )
    assert len(statements) == 1
    statements.clear()
    await asyncio.gather(
        store.save_header("m3", {"matchId": "m3"}),
        store.add_step("m3", step_row(0)),
        store.add_step("m3", step_row(1)),
        store.notify("ggp_test", "x"),
    )
    assert len(statements) == 1
    assert [step.step for step in await store.steps("m3")] == [0, 1]


async def test_a_group_commit_on_a_connection_the_server_killed_fails_and_the_next_one_succeeds(
    store: Store, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the group commit runs on the driver's connection: a dead one must leave the pool
    monkeypatch.setattr(store_module, "IDLE_PING_SECONDS", 3600.0)  # no ping to save it
    await queue(store, "m4", ["a", "b"])
    await store.add_step("m4", step_row(0))
    async with store.read_engine.connect() as connection:
        pids = {(await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()}
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
        for pid in pids:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    await asyncio.sleep(0.1)
    with pytest.raises(psycopg.OperationalError):
        await store.add_step("m4", step_row(1))
    await store.add_step("m4", step_row(2))
    assert [step.step for step in await store.steps("m4")] == [0, 2]
