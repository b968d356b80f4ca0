"""Storage of player checks: each run of the checker, its report, and a player's history.

>>> check = await add_check(store, "mybot", trigger="registered", target="http://...")  # doctest: +SKIP
>>> await start_check(store, check.id, target="http://...")                           # doctest: +SKIP
>>> await finish_check(store, check.id, passed=True, items=[...], latency_ms=3)        # doctest: +SKIP
>>> (await list_checks(store, "mybot"))[0].passed                                      # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, insert, select, update

from .check_tables import player_checks
from .errors import NotFound
from .store import Store, now_ms

QUEUED, RUNNING, FINISHED, INTERRUPTED = "queued", "running", "finished", "interrupted"
"""A check's life: queued, running, then finished (with a report) or interrupted by a stop."""


class CheckRow(BaseModel):
    """One run of the checker against one player."""

    model_config = ConfigDict(frozen=True)

    id: int
    player: str
    trigger: str
    """Why it ran: ``registered``, ``url changed``, ``connected``, ``asked by admin``..."""
    target: str
    """What was checked: the player's URL, or ``outbound`` for a bot's socket."""
    status: str
    requested_at: int
    started_at: int | None
    finished_at: int | None
    passed: bool | None
    """``None`` until finished."""
    error: str | None
    """Why the check could not run (nobody listening, the bot not connected), if so."""
    latency_ms: int | None
    start_clock: int
    play_clock: int
    items: list[dict[str, Any]]
    """The report's items (``server.bots.report.CheckItem`` as JSON), in checking order."""


def _row(mapping: Any) -> CheckRow:
    return CheckRow.model_validate(dict(mapping))


async def add_check(
    store: Store, player: str, *, trigger: str, target: str, start_clock: int, play_clock: int
) -> CheckRow:
    """Queue a check of ``player`` (a new row of its history)."""
    async with store._writing() as connection:
        result = await connection.execute(
            insert(player_checks)
            .values(
                player=player,
                trigger=trigger,
                target=target,
                status=QUEUED,
                requested_at=now_ms(),
                start_clock=start_clock,
                play_clock=play_clock,
                items=[],
            )
            .returning(player_checks.c.id)
        )
        check_id = result.scalar_one()
    return await get_check(store, check_id)


async def get_check(store: Store, check_id: int) -> CheckRow:
    async with store._reading() as connection:
        row = (
            await connection.execute(select(player_checks).where(player_checks.c.id == check_id))
        ).first()
    if row is None:
        raise NotFound(f"no check {check_id}")
    return _row(row._mapping)


async def start_check(store: Store, check_id: int, *, target: str) -> None:
    """The check begins now, against ``target``."""
    async with store._writing() as connection:
        await connection.execute(
            update(player_checks)
            .where(player_checks.c.id == check_id)
            .values(status=RUNNING, started_at=now_ms(), target=target)
        )


async def finish_check(
    store: Store,
    check_id: int,
    *,
    passed: bool,
    items: Sequence[dict[str, Any]],
    latency_ms: int | None = None,
    error: str | None = None,
) -> None:
    """Keep the check's report (or why it could not run: ``error``, not passed)."""
    async with store._writing() as connection:
        await connection.execute(
            update(player_checks)
            .where(player_checks.c.id == check_id)
            .values(
                status=FINISHED,
                finished_at=now_ms(),
                passed=passed,
                items=list(items),
                latency_ms=latency_ms,
                error=error,
            )
        )


async def list_checks(store: Store, player: str, limit: int = 20) -> list[CheckRow]:
    """The player's checks, latest first."""
    async with store._reading() as connection:
        rows = await connection.execute(
            select(player_checks)
            .where(player_checks.c.player == player)
            .order_by(player_checks.c.id.desc())
            .limit(limit)
        )
        return [_row(row._mapping) for row in rows]


async def latest_checks(
    store: Store, status: str | None = FINISHED, players: Sequence[str] | None = None
) -> dict[str, CheckRow]:
    """Each player's latest check (of ``status``; ``None``: any), by player name; only of
    ``players`` when given."""
    latest = select(func.max(player_checks.c.id))
    if status is not None:
        latest = latest.where(player_checks.c.status == status)
    if players is not None:
        latest = latest.where(player_checks.c.player.in_(list(players)))
    latest = latest.group_by(player_checks.c.player)
    async with store._reading() as connection:
        rows = await connection.execute(
            select(player_checks).where(player_checks.c.id.in_(latest.scalar_subquery()))
        )
        return {row.player: _row(row._mapping) for row in rows}


async def interrupt_unfinished(store: Store) -> int:
    """Mark the checks a stop left queued or running as interrupted; how many there were."""
    async with store._writing() as connection:
        result = await connection.execute(
            update(player_checks)
            .where(player_checks.c.status.in_((QUEUED, RUNNING)))
            .values(status=INTERRUPTED, finished_at=now_ms(), error="the service stopped")
        )
    return int(result.rowcount or 0)
