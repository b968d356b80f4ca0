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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from server.errors import InvalidInput
from server.match import MatchConfig, new_match_id
from server.records import SubstitutePolicy
from server.runner import PLAYER_UNAVAILABLE, MatchRequest, queue_match
from server.store import (
    Conflict,
    MatchRow,
    MatchStatus,
    NotFound,
    PlayerRecord,
    StepErrors,
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
from server.tournament.results import slot_of

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
    """A seed per schedule slot, from the spec's seed and the slot: the replay of an
    interrupted match (`key#2`) gets the seed of the match it replaces."""
    digest = hashlib.sha256(f"{spec.seed}:{slot_of(key)}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def match_config(request: MatchRequest) -> MatchConfig:
    """The configuration a match is queued with (as `queue_match` makes it)."""
    return MatchConfig(
        start_clock=request.start_clock,
        play_clock=request.play_clock,
        policy=request.policy,
        step_limit=request.step_limit,
        seed=request.seed,
        scramble=request.scramble,
        tournament_name=request.tournament,
        match_id_prefix="ggp",
    )


def tournament_match_id(game: str, seed: int) -> str:
    """A new id for a tournament's match; it ends in ``.seed<seed>``, the match's seed, so
    a player may take its random choices per match from it and play a replay the same way."""
    return f"{new_match_id('ggp', game)}.seed{seed}"


RATING_SWEEP_SECONDS = 30.0
"""With no match ending, the ratings are brought up to date this often all the same (an
end whose notice was lost, a match imported from another process)."""
FULL_PASS_EVERY = 10
"""While matches keep ending, the driver reads everything again only every this many
poll intervals (for matches ended elsewhere); when none ended for one interval, at once."""


class MatchStarter(Protocol):
    """Starts matches at once (the service's runner)."""

    def hold(self, seated: Sequence[str | None], players: Sequence[PlayerRecord]) -> bool:
        """Keep room for a match about to be stored as running; false when there is none."""

    def release(self, seated: Sequence[str | None]) -> None:
        """Give back the room kept for a match that was not stored."""

    async def start_queued(
        self, match: MatchRow, players: Sequence[PlayerRecord], *, claimed: bool = False
    ) -> bool:
        """Start a match (held and stored as running, or claimed here); false when there
        is no room."""


@dataclass
class _Live:
    """What the driver knows of one running tournament between two full passes."""

    row: TournamentRow
    spec: TournamentSpec
    roles: dict[str, int]
    ended: dict[str, MatchRow] = field(default_factory=dict)
    results: dict[str, MatchResult] = field(default_factory=dict)
    """The result of each ended match of the schedule, by match id."""
    active: dict[str, MatchRow] = field(default_factory=dict)
    awards: list[MatchResult] = field(default_factory=list)


class TournamentDriver:
    """Drives every running tournament; :meth:`start`, :meth:`wake`, :meth:`close`.

    A full pass reads every running tournament from the database; in between, a match
    of a tournament that ends (:meth:`wake` with the match) only adds its result to
    what the driver holds in memory, and the next matches are queued in one write and
    started at once by the runner (``starter``), so a player that frees up plays again without
    waiting for a pass or a poll of the queue.
    """

    def __init__(
        self,
        store: Store,
        *,
        poll_seconds: float = 2.0,
        on_queued: Callable[[], None] | None = None,
        starter: MatchStarter | None = None,
        rating_seconds: float = 0.5,
        rating_sweep_seconds: float = RATING_SWEEP_SECONDS,
    ) -> None:
        self.store = store
        self.tournaments = TournamentStore(store)
        self.ratings = RatingKeeper(self.tournaments)
        self.poll_seconds = poll_seconds
        self.rating_seconds = rating_seconds
        """Ratings are brought up to date at most this often while matches end."""
        self.rating_sweep_seconds = rating_sweep_seconds
        """...and this often when none ends (each catch-up reads the finished matches)."""
        self.rating_catch_ups = 0
        self.on_queued = on_queued
        self.starter = starter
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._rating_task: asyncio.Task[None] | None = None
        self._rate = asyncio.Event()
        self._closing = False
        self._full_due = True
        self._last_full = 0.0
        self._last_pass = 0.0
        self._ended: list[tuple[MatchRow, Sequence[StepErrors] | None]] = []
        self._live: dict[str, _Live] = {}
        self._registered: dict[str, PlayerRecord] = {}
        self._versions: dict[str, int] = {}
        """The latest version of each game, read again on every full pass."""
        self._results: dict[str, MatchResult] = {}
        self._roles: dict[tuple[str, int], list[str]] = {}
        self._tournament_roles: dict[str, dict[str, int]] = {}
        self.scheduler_seconds = 0.0
        """Wall time of the passes over tournaments (reading, scheduling, queueing)."""
        self.core_seconds = 0.0
        """Time spent in `next_matches` itself (pure computation, on the event loop)."""
        self.passes = 0
        self.full_passes = 0

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="tournament-driver")
        self._rating_task = asyncio.create_task(self._rating_loop(), name="ratings")

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(
        self, match: MatchRow | None = None, steps: Sequence[StepErrors] | None = None
    ) -> None:
        """Act now: a match ended (given, as stored, with its steps' errors when the
        runner kept them; otherwise they are read), or a tournament was created, resumed
        or changed (no match: the next pass reads everything)."""
        if match is None:
            self._full_due = True
        elif match.tournament_id is not None and match.schedule_key is not None:
            if match.tournament_id in self._live:
                self._ended.append((match, steps))
            else:
                self._full_due = True
        self._rate.set()
        self._wake.set()

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        self._rate.set()
        for task in (self._task, self._rating_task):
            if task is None:
                continue
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _loop(self) -> None:
        while not self._closing:
            self._wake.clear()
            now = time.monotonic()
            try:
                if (
                    self._full_due
                    or now - self._last_full >= FULL_PASS_EVERY * self.poll_seconds
                    or (not self._ended and now - self._last_pass >= self.poll_seconds)
                ):
                    await self.run_pass(rate=False)
                elif self._ended:
                    await self._take_ended()
            except Exception:
                log.exception("a pass over the tournaments failed; trying again")
                self._full_due = True
            if self._closing:
                break
            if self._ended or self._full_due:
                continue
            wait = max(0.0, self.poll_seconds - (time.monotonic() - self._last_pass))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def _rating_loop(self) -> None:
        """Bring the ratings up to date when matches have ended, at most every
        `rating_seconds`, apart from the scheduling (which must not wait for it); with
        no match ending, every `rating_sweep_seconds`."""
        sweep = True  # at start: every finished match
        while not self._closing:
            if not sweep:
                try:
                    await asyncio.wait_for(self._rate.wait(), self.rating_sweep_seconds)
                except TimeoutError:
                    sweep = True  # every finished match: also those written late
            self._rate.clear()
            if self._closing:
                break
            try:
                self.rating_catch_ups += 1
                await self.ratings.catch_up(full=sweep)
            except Exception:
                log.exception("bringing the ratings up to date failed; trying again")
            sweep = False
            await asyncio.sleep(self.rating_seconds)

    async def run_pass(self, *, rate: bool = True) -> None:
        """Read and advance every running tournament (and with `rate`, the ratings)."""
        started = time.perf_counter()
        self._full_due = False
        self._last_full = time.monotonic()
        self._ended.clear()
        self._live.clear()
        self._versions.clear()
        self._registered = {p.name: p for p in await self.store.list_players()}
        for tournament in await self.tournaments.find(status=["running"]):
            if self._closing:
                break
            try:
                await self.advance(tournament)
            except Exception:
                log.exception("tournament %s: scheduling failed", tournament.id)
                self._live.pop(tournament.id, None)
        self.scheduler_seconds += time.perf_counter() - started
        self.passes += 1
        self._last_pass = time.monotonic()
        self.full_passes += 1
        if rate:
            await self.ratings.catch_up(full=True)

    def other_match_ended(self) -> None:
        """A match outside every tournament ended (in another process): bring the ratings
        up to date, and pass over the tournaments if a pass is due (a player it freed may
        be one a tournament waits for), as :meth:`wake` does for such a match."""
        self._rate.set()
        self._wake.set()

    async def _take_ended(self) -> None:
        """Take in the matches that ended since the last pass and schedule what follows."""
        started = time.perf_counter()
        ended, self._ended = self._ended, []
        touched: list[_Live] = []
        known = [(row, steps) for row, steps in ended if steps is not None]
        unknown = [row.id for row, steps in ended if steps is None]
        for row, steps in [*known, *await self.tournaments.ended_matches(unknown)]:
            live = self._live.get(row.tournament_id or "")
            if live is None or row.status in ACTIVE:
                continue
            live.active.pop(row.id, None)
            live.ended[row.id] = row
            key = (row.game_name, row.game_version)
            roles = self._roles.get(key) or await self._game_roles(*key)
            live.results[row.id] = self._results[row.id] = match_result(row, steps, roles)
            if live not in touched:
                touched.append(live)
        for live in touched:
            try:
                await self._schedule(live)
            except Exception:
                log.exception("tournament %s: scheduling failed", live.row.id)
                self._full_due = True
        self.scheduler_seconds += time.perf_counter() - started
        self.passes += 1
        self._last_pass = time.monotonic()

    async def _game_roles(self, name: str, version: int | None = None) -> list[str]:
        game = await self.store.get_game(name, version)
        self._roles[name, game.version] = list(game.roles)
        return list(game.roles)

    async def _result(self, match: MatchRow) -> MatchResult:
        cached = self._results.get(match.id)
        if cached is None:
            key = (match.game_name, match.game_version)
            roles = self._roles.get(key) or await self._game_roles(*key)
            cached = match_result(match, await self.store.steps(match.id), roles)
            self._results[match.id] = cached
        return cached

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
            results.append(await self._result(match))
        results += [
            MatchResult.model_validate(r) for r in await self.tournaments.awards(tournament.id)
        ]
        return results, active

    async def statuses(
        self, tournament: TournamentRow, spec: TournamentSpec, matches: Sequence[MatchRow]
    ) -> dict[str, PlayerStatus]:
        """Each player's status for the core: registered, suspended, cleared, joining."""
        registered = {p.name: p for p in await self.store.list_players()}
        return self._statuses(tournament, spec, matches, registered)

    @staticmethod
    def _statuses(
        tournament: TournamentRow,
        spec: TournamentSpec,
        matches: Sequence[MatchRow],
        registered: Mapping[str, PlayerRecord],
    ) -> dict[str, PlayerStatus]:
        unavailable = unavailable_players(matches)
        return {
            name: player_status(
                registered.get(name), name in tournament.cleared, unavailable.get(name)
            )
            for name in spec.players
        }

    async def advance(self, tournament: TournamentRow) -> NextMatches:
        """One step of one tournament, read whole from the database: store awards, queue
        matches, pause or finish."""
        spec = TournamentSpec.model_validate(tournament.spec)
        roles = self._tournament_roles.get(tournament.id)
        if roles is None:  # the games' latest versions when first scheduled
            roles = {game: len(await self._game_roles(game)) for game in spec.all_games}
            self._tournament_roles[tournament.id] = roles
        matches = await self.tournaments.matches(tournament.id)
        live = _Live(tournament, spec, roles)
        for match in matches:
            if match.schedule_key is None:
                continue
            if match.status in ACTIVE:
                live.active[match.id] = match
            else:
                live.ended[match.id] = match
                live.results[match.id] = await self._result(match)
        live.awards = [
            MatchResult.model_validate(r) for r in await self.tournaments.awards(tournament.id)
        ]
        if not self._registered:
            self._registered = {p.name: p for p in await self.store.list_players()}
        self._live[tournament.id] = live
        return await self._schedule(live)

    async def _schedule(self, live: _Live) -> NextMatches:
        """Ask the core what follows from what `live` holds, and do it."""
        tournament, spec = live.row, live.spec
        statuses = self._statuses(tournament, spec, list(live.ended.values()), self._registered)
        core_started = time.perf_counter()
        answer = next_matches(
            spec,
            live.roles,
            [*live.results.values(), *live.awards],
            [planned_of(m) for m in live.active.values()],
            statuses,
            now=datetime.now(UTC),
        )
        self.core_seconds += time.perf_counter() - core_started
        if answer.record:
            await self.tournaments.add_awards(
                tournament.id, [r.model_dump(mode="json") for r in answer.record]
            )
            live.awards += answer.record
        if answer.matches:
            waiting = await self._queue(live, answer.matches)
            if waiting and self.on_queued is not None:
                self.on_queued()
        if answer.paused is not None:
            self._live.pop(tournament.id, None)
            reason = f"{answer.paused.player}: {answer.paused.reason}"
            if await self.tournaments.change(
                tournament.id, only_if=["running"], status="paused", pause_reason=reason
            ):
                await self.store.add_audit(
                    "service", "tournament.pause", tournament.id, {"reason": reason}
                )
        elif answer.finished:
            self._live.pop(tournament.id, None)
            if await self.tournaments.change(
                tournament.id, only_if=["running"], status="finished", finished_at=now_ms()
            ):
                await self.store.add_audit("service", "tournament.finish", tournament.id)
        return answer

    def _request(self, live: _Live, planned: PlannedMatch) -> tuple[str, MatchRequest]:
        seed = match_seed(live.spec, planned.key)
        return tournament_match_id(planned.game, seed), MatchRequest(
            game=planned.game,
            players=list(planned.players),
            start_clock=planned.startclock,
            play_clock=planned.playclock,
            policy=SubstitutePolicy(live.spec.substitute_policy),
            seed=seed,
            tournament=live.row.id,
            schedule_key=planned.key,
        )

    async def _queue(self, live: _Live, planned: Sequence[PlannedMatch]) -> int:
        """Queue the matches in one write, the first the runner keeps room for as running,
        and start them at once where there is room; hold them all as active. Returns how
        many are left queued."""
        requests = [self._request(live, p) for p in planned]
        seated = [self._players(request.players) for _, request in requests]
        starter = self.starter
        claim = [False] * len(requests)
        if starter is not None:
            for index, ((_, request), players) in enumerate(zip(requests, seated, strict=True)):
                if players is not None and starter.hold(request.players, players):
                    claim[index] = True
                    break
        try:
            rows = await self._queue_together(requests, claim)
        except BaseException as error:
            for (_, request), held in zip(requests, claim, strict=True):
                if held and starter is not None:
                    starter.release(request.players)
            if not isinstance(error, Conflict | InvalidInput | NotFound):
                raise
            claim = [False] * len(requests)
            found = [await self._queue_one(live, *r) for r in requests]
            rows = [row for row in found if row]
            seated = [players for players, row in zip(seated, found, strict=True) if row]
        waiting = 0
        for row, players, claimed in zip(rows, seated, claim, strict=True):
            live.active[row.id] = row
            if (
                starter is None
                or players is None
                or not await starter.start_queued(row, players, claimed=claimed)
            ):
                waiting += 1
        return waiting

    def _players(self, names: Sequence[str | None]) -> list[PlayerRecord] | None:
        """The registered players of a match, or None when one is not known yet."""
        seated = [name for name in names if name]
        if any(name not in self._registered for name in seated):
            return None
        return [self._registered[name] for name in seated]

    async def _queue_together(
        self, requests: Sequence[tuple[str, MatchRequest]], claim: Sequence[bool]
    ) -> list[MatchRow]:
        """Queue matches of known players and games in one transaction, those to `claim`
        as running."""
        at = now_ms()
        versions = self._versions
        for _, request in requests:
            if any(name not in self._registered for name in request.players if name):
                raise NotFound("a player is not registered")
            if request.game not in versions:
                game = await self.store.get_game(request.game)
                if len(game.roles) != len(request.players):
                    raise InvalidInput("the game's roles changed", field="players")
                versions[request.game] = game.version
        return await self.tournaments.queue_matches(
            [
                {
                    "id": match_id,
                    "game_name": request.game,
                    "game_version": versions[request.game],
                    "players": list(request.players),
                    "start_clock": request.start_clock,
                    "play_clock": request.play_clock,
                    "policy": request.policy.value,
                    "config": match_config(request).model_dump(mode="json"),
                    "tournament_id": request.tournament,
                    "schedule_key": request.schedule_key,
                    "requeued_from": None,
                    **({"status": MatchStatus.RUNNING.value, "started_at": at} if claimed else {}),
                }
                for (match_id, request), claimed in zip(requests, claim, strict=True)
            ]
        )

    async def _queue_one(
        self, live: _Live, match_id: str, request: MatchRequest
    ) -> MatchRow | None:
        tournament = live.row
        try:
            return await queue_match(self.store, request, match_id=match_id)
        except Conflict:
            return None  # queued already (by a pass in another process)
        except (InvalidInput, NotFound) as error:
            reason = f"cannot queue {request.schedule_key}: {error}"
            self._live.pop(tournament.id, None)
            await self.tournaments.change(
                tournament.id, only_if=["running"], status="paused", pause_reason=reason
            )
            await self.store.add_audit(
                "service", "tournament.pause", tournament.id, {"reason": reason}
            )
            return None
