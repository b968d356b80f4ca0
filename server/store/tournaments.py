"""Storage of tournaments, their awards (byes, forfeits) and the players' ratings.

>>> tournaments = TournamentStore(store)        # doctest: +SKIP
>>> await tournaments.create("cup-1a2b", spec, created_by="admin")  # doctest: +SKIP

A companion of :class:`~server.store.Store` on the same engine and write lock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Select, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from .errors import Conflict, NotFound
from .records import MatchRow, MatchStatus
from .store import Store, now_ms
from .tables import match_players, match_steps, matches
from .tournament_tables import (
    rated_matches,
    rating_history,
    ratings,
    tournament_awards,
    tournaments,
)


class TournamentRow(BaseModel):
    """A tournament as kept: its spec (plain data) and where it is in its life."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    game: str
    format: str
    spec: dict[str, Any]
    status: str
    """``created``, ``running``, ``paused``, ``finished`` or ``cancelled``."""
    pause_reason: str | None
    cleared: list[str]
    """Players an operator cleared after a failure."""
    created_by: str
    created_at: int
    started_at: int | None
    finished_at: int | None


class RatingRow(BaseModel):
    """A player's current rating in one scope (``*`` or a game)."""

    model_config = ConfigDict(frozen=True)

    scope: str
    player: str
    mu: float
    sigma: float
    matches: int


class RatingHistoryRow(BaseModel):
    """A player's rating just after one match."""

    model_config = ConfigDict(frozen=True)

    scope: str
    player: str
    match_id: str
    finished_at: int | None
    mu: float
    sigma: float


_NOT_STARTED: dict[str, Any] = {
    "started_at": None,
    "finished_at": None,
    "end_reason": None,
    "end_message": None,
    "goals": None,
    "requeued_from": None,
}


class StepErrors(BaseModel):
    """What a tournament reads of one step: each role's error code and response time."""

    model_config = ConfigDict(frozen=True)

    errors: list[str]
    response_times: list[int | None]


_DELETE_RATINGS = delete(ratings).where(
    ratings.c.scope == bindparam("scope"),
    ratings.c.player.in_(bindparam("players", expanding=True)),
)
"""The current ratings of some players of one scope, about to be written again."""
_LAST_RATED = (
    select(rated_matches.c.finished_at, rated_matches.c.match_id)
    .order_by(rated_matches.c.finished_at.desc(), rated_matches.c.match_id.desc())
    .limit(1)
)
"""The latest match taken into the ratings (by when it finished, then by id)."""


def unrated_query(since: int | None = None) -> Select[Any]:
    """The finished matches not rated yet (finished at ``since`` ms or later), in order."""
    taken = select(rated_matches.c.match_id).where(rated_matches.c.match_id == matches.c.id)
    query = (
        select(matches)
        .where(matches.c.status == MatchStatus.FINISHED.value, ~taken.exists())
        .order_by(matches.c.finished_at, matches.c.id)
    )
    return query if since is None else query.where(matches.c.finished_at >= since)


class TournamentStore:
    """Tournaments and ratings, on the tables of ``tournament_tables``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- tournaments -------------------------------------------------------------------

    async def create(
        self, tournament_id: str, spec: Mapping[str, Any], *, status: str, created_by: str
    ) -> TournamentRow:
        at = now_ms()
        try:
            async with self.store._writing() as connection:
                await connection.execute(
                    insert(tournaments).values(
                        id=tournament_id,
                        name=spec["name"],
                        game=spec["game"],
                        format=spec["format"],
                        spec=dict(spec),
                        status=status,
                        cleared=[],
                        created_by=created_by,
                        created_at=at,
                        started_at=at if status == "running" else None,
                    )
                )
        except IntegrityError as error:
            raise Conflict(f"a tournament with the id {tournament_id!r} exists already") from error
        return await self.get(tournament_id)

    async def get(self, tournament_id: str) -> TournamentRow:
        async with self.store._reading() as connection:
            row = (
                await connection.execute(
                    select(tournaments).where(tournaments.c.id == tournament_id)
                )
            ).first()
        if row is None:
            raise NotFound(f"no tournament with the id {tournament_id!r}")
        return TournamentRow.model_validate(dict(row._mapping))

    async def find(self, *, status: Sequence[str] | None = None) -> list[TournamentRow]:
        """Tournaments, newest first, optionally only those in some statuses."""
        query = select(tournaments).order_by(tournaments.c.created_at.desc(), tournaments.c.id)
        if status is not None:
            query = query.where(tournaments.c.status.in_(list(status)))
        async with self.store._reading() as connection:
            rows = await connection.execute(query)
            return [TournamentRow.model_validate(dict(row._mapping)) for row in rows]

    async def change(
        self,
        tournament_id: str,
        *,
        only_if: Sequence[str] | None = None,
        **values: Any,
    ) -> bool:
        """Change some columns (status, pause_reason, spec, cleared, times); false if the
        tournament was not in one of ``only_if``."""
        query = update(tournaments).where(tournaments.c.id == tournament_id)
        if only_if is not None:
            query = query.where(tournaments.c.status.in_(list(only_if)))
        async with self.store._writing() as connection:
            result = await connection.execute(query.values(**values))
        return result.rowcount == 1

    async def matches(self, tournament_id: str) -> list[MatchRow]:
        """Every match of the tournament, oldest first."""
        query = (
            select(matches)
            .where(matches.c.tournament_id == tournament_id)
            .order_by(matches.c.queued_at, matches.c.id)
        )
        async with self.store._reading() as connection:
            rows = await connection.execute(query)
            return [MatchRow.model_validate(dict(row._mapping)) for row in rows]

    async def matches_by_id(self, ids: Sequence[str]) -> list[MatchRow]:
        """These matches (those that exist), in one query."""
        if not ids:
            return []
        async with self.store._reading() as connection:
            rows = await connection.execute(select(matches).where(matches.c.id.in_(list(ids))))
            return [MatchRow.model_validate(dict(row._mapping)) for row in rows]

    async def queue_matches(self, queued: Sequence[Mapping[str, Any]]) -> list[MatchRow]:
        """Queue several matches in one transaction; each mapping gives the columns of
        ``Store.queue_match`` (``id``, ``game_name``, ``game_version``, ``players``, clocks,
        ``policy``, ``config``, ``tournament_id``, ``schedule_key``).

        A mapping may give ``status`` ``running`` and ``started_at``: the match is claimed
        as it is queued. All or none: :class:`Conflict` when an id or a schedule key is
        taken.
        """
        if not queued:
            return []
        at = now_ms()
        rows = [
            {"status": MatchStatus.QUEUED.value, "queued_at": at, "started_at": None, **values}
            for values in queued
        ]
        seats = [
            {"match_id": values["id"], "seat": seat, "player": player}
            for values in queued
            for seat, player in enumerate(values["players"])
        ]
        try:
            async with self.store._writing() as connection:
                await connection.execute(insert(matches), rows)
                await connection.execute(insert(match_players), seats)
        except IntegrityError as error:
            raise Conflict("a match id or schedule key is taken") from error
        return [MatchRow.model_validate({**_NOT_STARTED, **row}) for row in rows]

    async def ended_matches(self, ids: Sequence[str]) -> list[tuple[MatchRow, list[StepErrors]]]:
        """These matches, each with its steps' errors and response times (one read)."""
        if not ids:
            return []
        async with self.store._reading() as connection:
            rows = await connection.execute(select(matches).where(matches.c.id.in_(list(ids))))
            found = [MatchRow.model_validate(dict(row._mapping)) for row in rows]
            steps = await connection.execute(
                select(match_steps.c.match_id, match_steps.c.errors, match_steps.c.response_times)
                .where(match_steps.c.match_id.in_([m.id for m in found]))
                .order_by(match_steps.c.match_id, match_steps.c.step)
            )
            by_match: dict[str, list[StepErrors]] = {m.id: [] for m in found}
            for step in steps:
                by_match[step.match_id].append(
                    StepErrors(errors=list(step.errors), response_times=list(step.response_times))
                )
        return [(match, by_match[match.id]) for match in found]

    # -- awards ------------------------------------------------------------------------

    async def add_awards(self, tournament_id: str, results: Sequence[Mapping[str, Any]]) -> int:
        """Keep results decided without play; one already kept under its key is left alone."""
        added = 0
        for result in results:
            try:
                async with self.store._writing() as connection:
                    await connection.execute(
                        insert(tournament_awards).values(
                            tournament_id=tournament_id,
                            schedule_key=result["key"],
                            result=dict(result),
                            at=now_ms(),
                        )
                    )
                added += 1
            except IntegrityError:
                continue
        return added

    async def awards(self, tournament_id: str) -> list[dict[str, Any]]:
        async with self.store._reading() as connection:
            rows = await connection.execute(
                select(tournament_awards.c.result)
                .where(tournament_awards.c.tournament_id == tournament_id)
                .order_by(tournament_awards.c.at, tournament_awards.c.schedule_key)
            )
            return [dict(row.result) for row in rows]

    # -- ratings -----------------------------------------------------------------------

    async def unrated_matches(self, since: int | None = None) -> list[MatchRow]:
        """Finished matches the ratings have not taken in, in the order they finished; with
        ``since`` (ms), only those that finished then or later, read through an index."""
        async with self.store._reading() as connection:
            rows = await connection.execute(unrated_query(since))
            return [MatchRow.model_validate(dict(row._mapping)) for row in rows]

    async def finished_matches(self) -> list[MatchRow]:
        """Every finished match, in the order they finished."""
        query = (
            select(matches)
            .where(matches.c.status == MatchStatus.FINISHED.value)
            .order_by(matches.c.finished_at, matches.c.id)
        )
        async with self.store._reading() as connection:
            rows = await connection.execute(query)
            return [MatchRow.model_validate(dict(row._mapping)) for row in rows]

    async def last_rated(self) -> tuple[int, str] | None:
        """(finished_at, match id) of the latest match taken in, if any."""
        async with self.store._reading() as connection:
            row = (await connection.execute(_LAST_RATED)).first()
        return None if row is None else (int(row.finished_at), str(row.match_id))

    async def ratings(self, scope: str) -> list[RatingRow]:
        """Current ratings of one scope, best first (by mu minus three sigmas)."""
        async with self.store._reading() as connection:
            rows = await connection.execute(select(ratings).where(ratings.c.scope == scope))
            found = [RatingRow.model_validate(dict(row._mapping)) for row in rows]
        return sorted(found, key=lambda r: (-(r.mu - 3 * r.sigma), r.player))

    async def player_ratings(self, player: str) -> list[RatingRow]:
        async with self.store._reading() as connection:
            rows = await connection.execute(
                select(ratings).where(ratings.c.player == player).order_by(ratings.c.scope)
            )
            return [RatingRow.model_validate(dict(row._mapping)) for row in rows]

    async def player_history(self, player: str, scope: str | None = None) -> list[RatingHistoryRow]:
        query = select(rating_history).where(rating_history.c.player == player)
        if scope is not None:
            query = query.where(rating_history.c.scope == scope)
        async with self.store._reading() as connection:
            rows = await connection.execute(query.order_by(rating_history.c.id))
            return [RatingHistoryRow.model_validate(dict(row._mapping)) for row in rows]

    async def save_ratings(
        self,
        taken: Sequence[tuple[str, int]],
        current: Sequence[RatingRow],
        history: Sequence[RatingHistoryRow],
        *,
        replace: bool = False,
    ) -> None:
        """One transaction: the matches taken in, the new current ratings, the history.

        With ``replace`` every rating table is emptied first (a recomputation).
        """
        async with self.store._writing() as connection:
            if replace:
                for table in (rated_matches, rating_history, ratings):
                    await connection.execute(delete(table))
            if taken:
                await connection.execute(
                    insert(rated_matches),
                    [{"match_id": match_id, "finished_at": at} for match_id, at in taken],
                )
            changed: dict[str, list[str]] = {}
            for row in current:
                changed.setdefault(row.scope, []).append(row.player)
            for scope, players in changed.items():  # one statement a scope, not one a row
                await connection.execute(
                    _DELETE_RATINGS, {"scope": scope, "players": sorted(set(players))}
                )
            if current:
                await connection.execute(insert(ratings), [row.model_dump() for row in current])
            if history:
                await connection.execute(
                    insert(rating_history), [row.model_dump() for row in history]
                )
