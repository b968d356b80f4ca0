"""The next matches to queue: one pure function of the spec, the results and the players.

`next_matches` is deterministic and idempotent: the same inputs give the same answer,
and it never returns a match whose key is already queued, running or finished. Matches
are keyed by their place in the schedule (`round/table/game-index/seating`), so a
service that crashes and recomputes gets the same keys and neither loses nor repeats a
match. A match the server aborted is played again under `key#2`, `key#3`, ...
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .elimination import elimination_plan
from .failures import failed_players, forfeit_result
from .ladder import LadderCounts, ladder_matches
from .planned import NextMatches, Pause, PlannedMatch, PlayerStatus
from .results import MatchResult, results_by_slot, slot_of
from .round_robin import round_robin_schedule
from .spec import TournamentSpec, check_roles
from .swiss import swiss_plan


@dataclass(frozen=True)
class _Plan:
    """The matches a format wants so far, results it awards (byes), and whether it is over."""

    matches: list[PlannedMatch]
    awards: list[MatchResult]
    finished: bool


def role_counts(spec: TournamentSpec, roles: int | Mapping[str, int]) -> dict[str, int]:
    """Roles per game, from one number (for the spec's game) or a mapping by game."""
    if isinstance(roles, int):
        return dict.fromkeys(spec.all_games, roles)
    return dict(roles)


def next_matches(
    spec: TournamentSpec,
    roles: int | Mapping[str, int],
    results: Sequence[MatchResult],
    active: Sequence[PlannedMatch] = (),
    players: Mapping[str, PlayerStatus] | None = None,
    now: datetime | None = None,
) -> NextMatches:
    """The matches to queue now, and the results to record (byes, forfeits).

    `results` are every stored result of the tournament (forfeits and byes included),
    `active` the matches queued or running, `players` each player's status (a missing
    player is available with capacity 1), `now` the time, checked against the spec's
    `starts_at` (without it the tournament counts as started). Raises
    `TournamentSpecError` when the format cannot play the game's number of roles.
    """
    counts = role_counts(spec, roles)
    check_roles(spec, counts)
    if spec.starts_at is not None and now is not None and now < spec.starts_at:
        return NextMatches()
    statuses = {p: (players or {}).get(p, PlayerStatus()) for p in spec.players}
    failed = failed_players(spec.players, results, statuses)
    settled = _settle(spec, counts, results, active, failed)
    if settled.paused is not None or (settled.plan.finished and not active):
        return NextMatches(
            record=settled.recorded, paused=settled.paused, finished=settled.paused is None
        )
    free = _free_slots(statuses, active, failed)
    limit = sys.maxsize if spec.max_concurrent is None else spec.max_concurrent - len(active)
    if spec.format == "ladder":
        if failed and spec.failure_rule == "pause":
            player, reason = next(iter(failed.items()))
            return NextMatches(record=settled.recorded, paused=Pause(player=player, reason=reason))
        made = [(r.game, r.players) for r in settled.done.values()]
        history = LadderCounts(made + [(m.game, m.players) for m in active])
        numbers = [_round_of(r.key) for r in results] + [_round_of(m.key) for m in active]
        chosen = ladder_matches(spec, counts, history, max(numbers, default=-1) + 1, free, limit)
    else:
        chosen = _dispatch(settled.pending, free, limit)
    attempts = _attempts(results)
    matches = [m.model_copy(update={"key": _attempt_key(m.key, attempts)}) for m in chosen]
    return NextMatches(matches=matches, record=settled.recorded)


@dataclass(frozen=True)
class _Settled:
    """The plan once byes and forfeits are recorded, and the matches left to play."""

    plan: _Plan
    done: dict[str, MatchResult]
    pending: list[PlannedMatch]
    recorded: list[MatchResult]
    paused: Pause | None


def _settle(
    spec: TournamentSpec,
    roles: Mapping[str, int],
    results: Sequence[MatchResult],
    active: Sequence[PlannedMatch],
    failed: Mapping[str, str],
) -> _Settled:
    """Record byes and the forfeits of failed players until the plan stops changing.

    Under the `pause` rule a failed player with a match to play pauses instead.
    """
    active_slots = {slot_of(m.key) for m in active}
    attempts = _attempts(results)
    recorded: list[MatchResult] = []
    while True:
        done = results_by_slot([*results, *recorded])
        plan = _plan(spec, roles, done)
        awards = [a for a in plan.awards if a.key not in done]
        pending = [m for m in plan.matches if m.key not in done and m.key not in active_slots]
        stricken = [m for m in pending if any(p in failed for p in m.players)]
        if stricken and spec.failure_rule == "pause":
            player = next(p for p in stricken[0].players if p in failed)
            pause = Pause(player=player, reason=failed[player])
            return _Settled(plan, done, pending, recorded, pause)
        if not awards and not stricken:
            return _Settled(plan, done, pending, recorded, None)
        recorded += awards
        recorded += [forfeit_result(m, _attempt_key(m.key, attempts), failed) for m in stricken]


def _plan(spec: TournamentSpec, roles: Mapping[str, int], done: Mapping[str, MatchResult]) -> _Plan:
    if spec.format == "round_robin":
        schedule = round_robin_schedule(spec, roles[spec.game])
        return _Plan(schedule, [], all(m.key in done for m in schedule))
    if spec.format == "swiss":
        swiss = swiss_plan(spec, done)
        return _Plan(swiss.matches, swiss.byes, swiss.complete)
    if spec.format == "single_elimination":
        bracket = elimination_plan(spec, done)
        return _Plan(bracket.matches, [], bracket.champion is not None)
    return _Plan([], [], False)


def _free_slots(
    statuses: Mapping[str, PlayerStatus], active: Sequence[PlannedMatch], failed: Mapping[str, str]
) -> dict[str, int]:
    """How many more matches each player can take now."""
    load = Counter(p for m in active for p in m.players)
    return {
        player: max(0, status.capacity - status.busy_elsewhere - load[player])
        if status.available and player not in failed
        else 0
        for player, status in statuses.items()
    }


def _dispatch(
    pending: list[PlannedMatch], free: Mapping[str, int], limit: int
) -> list[PlannedMatch]:
    """The matches whose players all have room now, the busiest players' first.

    Every pending match is a candidate whatever its round: a format lists a match only
    once it can be played (Swiss pairs a round when the last one is over, a bracket
    lists a series once both sides are known), so a free player never waits for a slow
    match elsewhere. Matches are taken greedily, first those whose players have the
    most matches left (so that nobody is left with a tail of matches at the end), then
    earlier rounds, then in schedule order.
    """
    if limit <= 0:
        return []
    room = Counter(free)
    ready = [
        (index, match)
        for index, match in enumerate(pending)
        if all(room[p] > 0 for p in match.players)
    ]
    if not ready:
        return []
    left = Counter(p for m in pending for p in m.players)
    ready.sort(key=lambda item: (-sum(left[p] for p in item[1].players), item[1].round, item[0]))
    chosen: list[PlannedMatch] = []
    for _, match in ready:
        need = Counter(match.players)
        if all(room[p] >= n for p, n in need.items()):
            chosen.append(match)
            room.subtract(need)
            if len(chosen) >= limit:
                break
    return chosen


def _round_of(key: str) -> int:
    return int(key.split("/", 1)[0])


def _attempts(results: Sequence[MatchResult]) -> Counter[str]:
    """How many times the server aborted the match of each slot."""
    return Counter(slot_of(r.key) for r in results if r.aborted_by_server)


def _attempt_key(key: str, attempts: Mapping[str, int]) -> str:
    """The key of the next attempt at a slot: the slot itself, or `slot#n` after aborts."""
    tried = attempts.get(key, 0)
    return f"{key}#{tried + 1}" if tried else key
