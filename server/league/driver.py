"""The tournament driver: a background task that keeps each running tournament moving.

On every pass (on start, when a match of the service ends, and every few seconds) it
reads each running tournament's spec, results and active matches from the database,
asks ``next_matches`` what to do, keeps the byes and forfeits it answers, queues the
new matches through the match queue (the (tournament, schedule key) pair is unique, so
a match is never queued twice, even by two passes at once), pauses the tournament
under the ``pause`` failure rule and marks it finished when the core says so. The
state lives in the database only, so a service killed at any moment picks up where
it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from server.errors import InvalidInput
from server.records import SubstitutePolicy
from server.runner import PLAYER_UNAVAILABLE, MatchRequest, queue_match
from server.store import (
    Conflict,
    MatchRow,
    MatchStatus,
    NotFound,
    PlayerRecord,
    Store,
    TournamentRow,
    TournamentStore,
    now_ms,
)
from server.tournament import (
    MatchResult,
    NextMatches,
    PlannedMatch,
    PlayerStatus,
    TournamentSpec,
    next_matches,
)

from .ratings import RatingKeeper
from .results import match_result

log = logging.getLogger(__name__)

ACTIVE = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def planned_of(match: MatchRow) -> PlannedMatch:
    """An active match of a tournament, as the core's `PlannedMatch`."""
    key = match.schedule_key or match.id
    parts = key.split("#", 1)[0].split("/")
    numbers = [int(p) if p.isdigit() else 0 for p in (parts + ["0", "0", "0"])[:3]]
    return PlannedMatch(
        key=key,
        round=numbers[0],
        table=numbers[1],
        game_index=numbers[2],
        game=match.game_name,
        players=[name or "" for name in match.players],
        startclock=match.start_clock,
        playclock=match.play_clock,
    )


UNAVAILABLE_LIMIT = 2
"""Matches in a row a player could not join (``player_unavailable``) before it counts as failed."""

_UNAVAILABLE = re.compile(r"^player (\S+) ")


def unavailable_players(matches: Sequence[MatchRow]) -> dict[str, str]:
    """Players that could not join the tournament's last `UNAVAILABLE_LIMIT` matches they
    were in, with the last reason; a match played resets the count."""
    streak: dict[str, int] = {}
    reasons: dict[str, str] = {}
    for match in sorted(matches, key=lambda m: (m.finished_at or 0, m.id)):
        if match.status is MatchStatus.FINISHED:
            for name in match.players:
                streak.pop(name or "", None)
        elif match.status is MatchStatus.ABORTED and match.end_reason == PLAYER_UNAVAILABLE:
            found = _UNAVAILABLE.match(match.end_message or "")
            if found:
                name = found.group(1)
                streak[name] = streak.get(name, 0) + 1
                reasons[name] = match.end_message or ""
    return {
        name: f"could not join {count} matches in a row ({reasons[name]})"
        for name, count in streak.items()
        if count >= UNAVAILABLE_LIMIT
    }


def player_status(
    player: PlayerRecord | None, cleared: bool, unavailable: str | None = None
) -> PlayerStatus:
    """What the registry knows, as the core's `PlayerStatus`.

    A player is always offered matches (the runner pings it before each one); it counts
    as failed when suspended or when it could not join matches in a row, until an
    operator clears it.
    """
    if player is None:
        return PlayerStatus(failed="not registered", cleared=cleared)
    failed = None
    if not cleared:
        if player.suspended:
            failed = f"suspended: {player.suspended_reason or 'no reason given'}"
        elif unavailable:
            failed = unavailable
    return PlayerStatus(capacity=player.max_matches, failed=failed, cleared=cleared)


def match_seed(spec: TournamentSpec, key: str) -> int:
    """A seed per match, from the spec's seed and the match's key (a rerun is comparable)."""
    digest = hashlib.sha256(f"{spec.seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class TournamentDriver:
    """Drives every running tournament; :meth:`start`, :meth:`wake`, :meth:`close`."""

    def __init__(
        self,
        store: Store,
        *,
        poll_seconds: float = 2.0,
        on_queued: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.tournaments = TournamentStore(store)
        self.ratings = RatingKeeper(self.tournaments)
        self.poll_seconds = poll_seconds
        self.on_queued = on_queued
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._results: dict[str, MatchResult] = {}
        self._roles: dict[tuple[str, int], list[str]] = {}
        self._tournament_roles: dict[str, dict[str, int]] = {}
        self.scheduler_seconds = 0.0
        """Wall time of the passes over tournaments (reading, scheduling, queueing)."""
        self.core_seconds = 0.0
        """Time spent in `next_matches` itself (pure computation, on the event loop)."""
        self.passes = 0

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="tournament-driver")

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self, _match: MatchRow | None = None) -> None:
        """Run a pass now (a match ended, a tournament was created or resumed)."""
        self._wake.set()

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    async def _loop(self) -> None:
        while not self._closing:
            self._wake.clear()
            try:
                await self.run_pass()
            except Exception:
                log.exception("a pass over the tournaments failed; trying again")
            if self._closing:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_seconds)

    async def run_pass(self) -> None:
        """Advance every running tournament, then bring the ratings up to date."""
        started = time.perf_counter()
        for tournament in await self.tournaments.find(status=["running"]):
            if self._closing:
                break
            try:
                await self.advance(tournament)
            except Exception:
                log.exception("tournament %s: scheduling failed", tournament.id)
        self.scheduler_seconds += time.perf_counter() - started
        self.passes += 1
        await self.ratings.catch_up()

    async def _game_roles(self, name: str, version: int | None = None) -> list[str]:
        game = await self.store.get_game(name, version)
        self._roles[name, game.version] = list(game.roles)
        return list(game.roles)

    async def results(
        self, tournament: TournamentRow, matches: Sequence[MatchRow] | None = None
    ) -> tuple[list[MatchResult], list[MatchRow]]:
        """Every result of the tournament (played, aborted, awarded) and its active matches."""
        results: list[MatchResult] = []
        active: list[MatchRow] = []
        if matches is None:
            matches = await self.tournaments.matches(tournament.id)
        for match in matches:
            if match.schedule_key is None:
                continue  # queued by hand under the tournament's name: not in its schedule
            if match.status in ACTIVE:
                active.append(match)
                continue
            cached = self._results.get(match.id)
            if cached is None:
                key = (match.game_name, match.game_version)
                roles = self._roles.get(key) or await self._game_roles(*key)
                cached = match_result(match, await self.store.steps(match.id), roles)
                self._results[match.id] = cached
            results.append(cached)
        results += [
            MatchResult.model_validate(r) for r in await self.tournaments.awards(tournament.id)
        ]
        return results, active

    async def statuses(
        self, tournament: TournamentRow, spec: TournamentSpec, matches: Sequence[MatchRow]
    ) -> dict[str, PlayerStatus]:
        """Each player's status for the core: registered, suspended, cleared, joining."""
        registered = {p.name: p for p in await self.store.list_players()}
        unavailable = unavailable_players(matches)
        return {
            name: player_status(
                registered.get(name), name in tournament.cleared, unavailable.get(name)
            )
            for name in spec.players
        }

    async def advance(self, tournament: TournamentRow) -> NextMatches:
        """One step of one tournament: store awards, queue matches, pause or finish."""
        spec = TournamentSpec.model_validate(tournament.spec)
        roles = self._tournament_roles.get(tournament.id)
        if roles is None:  # the games' latest versions when first scheduled
            roles = {game: len(await self._game_roles(game)) for game in spec.all_games}
            self._tournament_roles[tournament.id] = roles
        matches = await self.tournaments.matches(tournament.id)
        results, active = await self.results(tournament, matches)
        statuses = await self.statuses(tournament, spec, matches)
        core_started = time.perf_counter()
        answer = next_matches(
            spec,
            roles,
            results,
            [planned_of(m) for m in active],
            statuses,
            now=datetime.now(UTC),
        )
        self.core_seconds += time.perf_counter() - core_started
        if answer.record:
            await self.tournaments.add_awards(
                tournament.id, [r.model_dump(mode="json") for r in answer.record]
            )
        queued = 0
        for planned in answer.matches:
            if await self._queue(tournament, spec, planned):
                queued += 1
        if queued and self.on_queued is not None:
            self.on_queued()
        if answer.paused is not None:
            reason = f"{answer.paused.player}: {answer.paused.reason}"
            if await self.tournaments.change(
                tournament.id, only_if=["running"], status="paused", pause_reason=reason
            ):
                await self.store.add_audit(
                    "service", "tournament.pause", tournament.id, {"reason": reason}
                )
        elif answer.finished:
            if await self.tournaments.change(
                tournament.id, only_if=["running"], status="finished", finished_at=now_ms()
            ):
                await self.store.add_audit("service", "tournament.finish", tournament.id)
        return answer

    async def _queue(
        self, tournament: TournamentRow, spec: TournamentSpec, planned: PlannedMatch
    ) -> bool:
        request = MatchRequest(
            game=planned.game,
            players=list(planned.players),
            start_clock=planned.startclock,
            play_clock=planned.playclock,
            policy=SubstitutePolicy(spec.substitute_policy),
            seed=match_seed(spec, planned.key),
            tournament=tournament.id,
            schedule_key=planned.key,
        )
        try:
            await queue_match(self.store, request)
        except Conflict:
            return False  # queued already (by a pass in another process)
        except (InvalidInput, NotFound) as error:
            reason = f"cannot queue {planned.key}: {error}"
            await self.tournaments.change(
                tournament.id, only_if=["running"], status="paused", pause_reason=reason
            )
            await self.store.add_audit(
                "service", "tournament.pause", tournament.id, {"reason": reason}
            )
            return False
        return True
