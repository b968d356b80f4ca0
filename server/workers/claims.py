"""Claiming a queued match for one worker, across every worker sharing the database.

A claim is one transaction: the match's players' rows are locked (in name order, so two
claims never wait on each other in a circle), their running matches are counted, and only
when every player has a free seat, and none is being checked (or waiting for its check), is
the match moved from ``queued`` to ``running`` by a conditional update that records the
worker and its job.  Two workers can therefore never
both claim a match, and a player's ``max_matches`` holds whichever workers run its matches.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, literal, select, union_all, update

from server.store import MatchRow, MatchStatus, PlayerRecord, Store, now_ms
from server.store.check_tables import player_checks
from server.store.player_checks import QUEUED as CHECK_QUEUED
from server.store.player_checks import RUNNING as CHECK_RUNNING
from server.store.tables import match_players, match_steps, match_workers, matches, players


@dataclass(frozen=True)
class Claimed:
    """The match is this worker's; its registered players, in seat order (seats without
    a player left out)."""

    players: list[PlayerRecord]


@dataclass(frozen=True)
class Busy:
    """A player has no free seat now; the match stays queued."""

    player: str


@dataclass(frozen=True)
class Missing:
    """A player of the match is not registered any more."""

    player: str


@dataclass(frozen=True)
class Taken:
    """The match is not queued any more (another worker claimed it, or it was aborted)."""

    status: MatchStatus


ClaimOutcome = Claimed | Busy | Missing | Taken


# The claim's statements, built once with bound parameters (SQLAlchemy then skips building
# them and their cache keys on every claim).
_LOCK_PLAYERS = (
    select(players)
    .where(players.c.name.in_(bindparam("names", expanding=True)))
    .order_by(players.c.name)
    # the lock serialises the claims of matches sharing a player
    .with_for_update()
)
_CHECKING = -1
"""The count a player being checked gets in :data:`_SEATS_TAKEN`: every seat taken."""
_SEATS_TAKEN = union_all(
    # the matches each player is running...
    select(match_players.c.player, func.count().label("taken"))
    .join(matches, matches.c.id == match_players.c.match_id)
    .where(
        match_players.c.player.in_(bindparam("names", expanding=True)),
        matches.c.status == MatchStatus.RUNNING.value,
    )
    .group_by(match_players.c.player),
    # ...and a player being checked (or about to be): the check takes its seats
    select(player_checks.c.player, literal(_CHECKING).label("taken"))
    .where(
        player_checks.c.player.in_(bindparam("names", expanding=True)),
        player_checks.c.status.in_((CHECK_QUEUED, CHECK_RUNNING)),
    )
    .distinct(),
)
_START = (
    update(matches)
    .where(matches.c.id == bindparam("match_id"), matches.c.status == MatchStatus.QUEUED.value)
    .values(
        status=MatchStatus.RUNNING.value,
        started_at=bindparam("new_started_at"),
        worker=bindparam("new_worker"),
        job_id=bindparam("new_job_id"),
    )
)
_STATUS = select(matches.c.status).where(matches.c.id == bindparam("match_id"))


async def claim_match(store: Store, match: MatchRow, *, worker: str, job_id: int) -> ClaimOutcome:
    """Move ``match`` from queued to running for ``worker`` when its players have seats."""
    names = sorted({name for name in match.players if name})
    async with store.engine.begin() as connection:
        registered: dict[str, PlayerRecord] = {}
        busy: dict[str, int] = {}
        if names:
            rows = (await connection.execute(_LOCK_PLAYERS, {"names": names})).all()
            registered = {row.name: PlayerRecord.model_validate(dict(row._mapping)) for row in rows}
            for name in names:
                if name not in registered:
                    return Missing(name)
            # counted after the lock (a statement of its own, so under READ COMMITTED it
            # sees every claim committed while this one waited for the lock)
            taken = await connection.execute(_SEATS_TAKEN, {"names": names})
            for row in taken:
                if int(row.taken) == _CHECKING:
                    return Busy(str(row.player))
                busy[str(row.player)] = int(row.taken)
        seats = Counter(name for name in match.players if name)
        for name, wanted in sorted(seats.items()):
            if busy.get(name, 0) + wanted > registered[name].max_matches:
                return Busy(name)
        result = await connection.execute(
            _START,
            {
                "match_id": match.id,
                "new_started_at": now_ms(),
                "new_worker": worker,
                "new_job_id": job_id,
            },
        )
        if result.rowcount != 1:
            status = await connection.scalar(_STATUS, {"match_id": match.id})
            return Taken(MatchStatus(str(status)))
    return Claimed([registered[name] for name in match.players if name])


async def end_lost_match(
    store: Store,
    match_id: str,
    *,
    job_id: int,
    reason: str,
    message: str,
    signed_record: str | None,
) -> bool:
    """Mark a running match aborted, only while the job that claimed it still holds it."""
    async with store._writing_one() as connection:
        result = await connection.execute(
            update(matches)
            .where(
                matches.c.id == match_id,
                matches.c.status == MatchStatus.RUNNING.value,
                matches.c.job_id == job_id,
            )
            .values(
                status=MatchStatus.ABORTED.value,
                finished_at=now_ms(),
                end_reason=reason,
                end_message=message,
                signed_record=signed_record,
            )
        )
    return result.rowcount == 1


async def still_running(store: Store, match_ids: list[str], *, worker: str) -> set[str]:
    """Which of ``match_ids`` are still running and held by ``worker``."""
    if not match_ids:
        return set()
    async with store.read_engine.connect() as connection:
        rows = await connection.execute(
            select(matches.c.id).where(
                matches.c.id.in_(match_ids),
                matches.c.status == MatchStatus.RUNNING.value,
                matches.c.worker == worker,
            )
        )
        return {row.id for row in rows}


async def job_of(store: Store, match_id: str) -> tuple[int | None, str | None]:
    """(the job that claimed a match, the worker running it)."""
    async with store.read_engine.connect() as connection:
        row = (
            await connection.execute(
                select(matches.c.job_id, matches.c.worker).where(matches.c.id == match_id)
            )
        ).first()
    return (None, None) if row is None else (row.job_id, row.worker)


async def one_step(store: Store, match_id: str, step: int) -> dict[str, Any] | None:
    """One stored step of a match, as a plain row, or ``None``."""
    async with store.read_engine.connect() as connection:
        row = (
            await connection.execute(
                select(match_steps).where(
                    match_steps.c.match_id == match_id, match_steps.c.step == step
                )
            )
        ).first()
    return None if row is None else dict(row._mapping)


async def beat(
    store: Store,
    *,
    name: str,
    host: str,
    games: list[str] | None,
    concurrency: int,
    running: int,
    started_at: int,
    stopped: bool = False,
) -> None:
    """Keep a worker's row in ``match_workers`` up to date (its load, its last heartbeat)."""
    now = now_ms()
    values = {
        "host": host,
        "games": games,
        "concurrency": concurrency,
        "running": running,
        "started_at": started_at,
        "heartbeat_at": now,
        "stopped_at": now if stopped else None,
    }
    async with store.engine.begin() as connection:
        result = await connection.execute(
            update(match_workers).where(match_workers.c.name == name).values(**values)
        )
        if result.rowcount == 0:
            await connection.execute(match_workers.insert().values(name=name, **values))


async def workers_table(store: Store) -> list[dict[str, Any]]:
    """Every worker that ever ran, with its load and last heartbeat."""
    async with store.read_engine.connect() as connection:
        rows = await connection.execute(select(match_workers).order_by(match_workers.c.name))
        return [dict(row._mapping) for row in rows]
