"""Read-only queries for the web pages: match lists without their logs, and small aggregates.

The pages list many matches but never show a match's signed log or header, so these
queries leave those columns out (a log is kilobytes; a page of 10,000 matches must not
read them), and they compute per-game and per-player figures in one query each.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select

from .records import MatchRow, MatchStatus
from .store import Store
from .tables import match_players, match_steps, matches
from .tournament_tables import rating_history

CHUNK = 500
"""Match ids per query of :func:`step_errors`."""

SUMMARY_COLUMNS = tuple(
    matches.c[name]
    for name in MatchRow.model_fields
    if name in matches.c and name not in ("signed_record", "header")
)


async def match_summaries(
    store: Store,
    *,
    status: MatchStatus | None = None,
    game: str | None = None,
    player: str | None = None,
    tournament: str | None = None,
    limit: int = 25,
    offset: int = 0,
) -> list[MatchRow]:
    """Matches newest first (by queue time, then id, both descending, as the index
    ``ix_matches_queued_at`` reads them), filtered as :meth:`Store.list_matches`, without
    their logs."""
    query = select(*SUMMARY_COLUMNS)
    if status is not None:
        query = query.where(matches.c.status == status.value)
    if game is not None:
        query = query.where(matches.c.game_name == game)
    if tournament is not None:
        query = query.where(matches.c.tournament_id == tournament)
    if player is not None:
        seated = select(match_players.c.match_id).where(match_players.c.player == player)
        query = query.where(matches.c.id.in_(seated))
    query = query.order_by(matches.c.queued_at.desc(), matches.c.id.desc())
    query = query.limit(limit).offset(offset)
    async with store._reading() as connection:
        rows = await connection.execute(query)
        return [MatchRow.model_validate(dict(row._mapping)) for row in rows]


async def player_seats(store: Store, player: str) -> list[tuple[str, int, list[int]]]:
    """(game, seat, goals) of every finished match the player sat in."""
    query = (
        select(matches.c.game_name, match_players.c.seat, matches.c.goals)
        .join(matches, matches.c.id == match_players.c.match_id)
        .where(match_players.c.player == player, matches.c.status == MatchStatus.FINISHED.value)
    )
    async with store._reading() as connection:
        rows = await connection.execute(query)
        return [(row.game_name, row.seat, list(row.goals or [])) for row in rows]


async def step_errors(
    store: Store, match_ids: Sequence[str]
) -> list[tuple[str, int, list[str], list[int | None]]]:
    """(match id, step, errors, response times) of every step of the given matches."""
    found: list[tuple[str, int, list[str], list[int | None]]] = []
    for start in range(0, len(match_ids), CHUNK):
        found += await _step_errors(store, match_ids[start : start + CHUNK])
    return found


async def _step_errors(
    store: Store, match_ids: Sequence[str]
) -> list[tuple[str, int, list[str], list[int | None]]]:
    query = (
        select(
            match_steps.c.match_id,
            match_steps.c.step,
            match_steps.c.errors,
            match_steps.c.response_times,
        )
        .where(match_steps.c.match_id.in_(list(match_ids)))
        .order_by(match_steps.c.match_id, match_steps.c.step)
    )
    async with store._reading() as connection:
        rows = await connection.execute(query)
        return [
            (row.match_id, row.step, list(row.errors), list(row.response_times)) for row in rows
        ]


async def game_results(
    store: Store, game: str, limit: int = 1000
) -> list[tuple[list[int], int, int | None, int | None]]:
    """(goals, steps, started_at, finished_at) of the game's latest finished matches."""
    last_step = (
        select(func.max(match_steps.c.step))
        .where(match_steps.c.match_id == matches.c.id)
        .scalar_subquery()
    )
    query = (
        select(
            matches.c.goals, last_step.label("steps"), matches.c.started_at, matches.c.finished_at
        )
        .where(matches.c.game_name == game, matches.c.status == MatchStatus.FINISHED.value)
        .order_by(matches.c.queued_at.desc())
        .limit(limit)
    )
    async with store._reading() as connection:
        rows = await connection.execute(query)
        return [
            (list(row.goals or []), row.steps or 0, row.started_at, row.finished_at) for row in rows
        ]


async def match_counts(store: Store, column: str) -> dict[str, dict[str, int]]:
    """Matches per value of ``column`` (``game_name`` or ``tournament_id``) and status."""
    key = matches.c[column]
    query = (
        select(key, matches.c.status, func.count())
        .where(key.is_not(None))
        .group_by(key, matches.c.status)
    )
    counts: dict[str, dict[str, int]] = {}
    async with store._reading() as connection:
        for value, status, count in await connection.execute(query):
            counts.setdefault(value, {})[status] = count
    return counts


async def rating_line(store: Store, player: str, scope: str) -> list[float]:
    """The player's rating (mu - 3 sigma) after each rated match in ``scope``, in order."""
    query = (
        select(rating_history.c.mu, rating_history.c.sigma)
        .where(rating_history.c.player == player, rating_history.c.scope == scope)
        .order_by(rating_history.c.id)
    )
    async with store._reading() as connection:
        rows = await connection.execute(query)
        return [mu - 3 * sigma for mu, sigma in rows]
