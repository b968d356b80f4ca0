"""Helpers that read like the service: build specs and results, play a tournament out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from server.tournament import (
    MatchResult,
    NextMatches,
    PlannedMatch,
    PlayerStatus,
    TournamentSpec,
    next_matches,
)
from server.tournament.spec import Format

START = datetime(2026, 1, 1, tzinfo=UTC)


def spec(format: Format, players: Sequence[str], **fields: Any) -> TournamentSpec:
    """A spec with short clocks and the given format, players and fields."""
    return TournamentSpec(
        name="cup",
        game="ticTacToe",
        format=format,
        players=list(players),
        startclock=10,
        playclock=5,
        **fields,
    )


def result(
    match: PlannedMatch | str, players: Sequence[str], goals: Sequence[int], **fields: Any
) -> MatchResult:
    """A played result of a match (or of a key), of five steps unless ``steps`` says."""
    key, game = (match, "ticTacToe") if isinstance(match, str) else (match.key, match.game)
    fields.setdefault("steps", 5)
    return MatchResult(key=key, game=game, players=list(players), goals=list(goals), **fields)


Judge = Callable[[PlannedMatch], list[int] | MatchResult]
"""Plays a match: its goals in role order, or a whole result."""


def higher_seed_wins(spec_: TournamentSpec) -> Judge:
    """The player listed earlier in the spec wins every match."""

    def judge(match: PlannedMatch) -> list[int]:
        best = min(match.players, key=spec_.players.index)
        return [100 if p == best else 0 for p in match.players]

    return judge


def breaks_down(spec_: TournamentSpec, player: str, errors: dict[str, int]) -> Judge:
    """`player` makes these errors (one per step of five) and loses; else the higher seed wins."""

    def judge(match: PlannedMatch) -> list[int] | MatchResult:
        if player not in match.players:
            return higher_seed_wins(spec_)(match)
        return result(
            match,
            match.players,
            [0 if p == player else 100 for p in match.players],
            errors=[errors if p == player else {} for p in match.players],
        )

    return judge


class Service:
    """The loop the hosting service runs: ask, record, queue, play, repeat."""

    def __init__(self, spec_: TournamentSpec, roles: int | Mapping[str, int] = 2) -> None:
        self.spec = spec_
        self.roles = roles
        self.results: list[MatchResult] = []
        self.active: list[PlannedMatch] = []
        self.queued_keys: list[str] = []
        self.batches: list[list[PlannedMatch]] = []
        self.statuses: dict[str, PlayerStatus] = {}

    def ask(self) -> NextMatches:
        """One call of the scheduler; byes and forfeits are stored, matches queued."""
        answer = next_matches(self.spec, self.roles, self.results, self.active, self.statuses)
        self.results.extend(answer.record)
        self.active.extend(answer.matches)
        self.queued_keys.extend(m.key for m in answer.matches)
        if answer.matches:
            self.batches.append(list(answer.matches))
        return answer

    def finish(self, match: PlannedMatch, outcome: list[int] | MatchResult) -> None:
        """Store a match's result and free its players."""
        if isinstance(outcome, MatchResult):
            stored = outcome
        else:
            stored = result(match, match.players, outcome)
        clock = START + timedelta(minutes=len(self.results))
        self.results.append(stored.model_copy(update={"finished_at": clock}))
        self.active.remove(match)

    def play_out(self, judge: Judge, limit: int = 10_000) -> NextMatches:
        """Play every queued match as soon as it is queued, until finished or paused."""
        for _ in range(limit):
            answer = self.ask()
            if answer.finished or answer.paused:
                return answer
            if not self.active:
                raise AssertionError("nothing queued, nothing running, and not finished")
            for match in list(self.active):
                self.finish(match, judge(match))
        raise AssertionError("tournament did not finish")
