"""Results of tournament matches as the core reads them, and the points they give."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ErrorCode = Literal["TO", "CE", "IL"]
"""GGP-Base's error codes: timeout, connection error, illegal (or unparsable) move."""

ERROR_CODES: tuple[ErrorCode, ...] = ("TO", "CE", "IL")

PointsRule = Literal["outcome", "goals"]
"""How a match gives points: by outcome against each opponent, or by the goal itself."""

Outcome = Literal["win", "draw", "loss"]


class MatchResult(BaseModel):
    """One finished match (or one decided without play: a forfeit or a bye).

    Every per-role list is in role order, like `players`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1)
    """The schedule's key of the match (see `server.tournament.planned.match_key`)."""
    game: str = ""
    players: list[str] = Field(min_length=1)
    roles: list[str] = []
    goals: list[int]
    errors: list[dict[ErrorCode, int]] = []
    """Per role, how many errors of each kind the player made."""
    steps: int = Field(default=0, ge=0)
    """Steps played; a role with as many errors as steps failed on every step."""
    aborted_by_server: bool = False
    """The server, not a player, ended the match early: it counts for nothing."""
    forfeits: list[bool] = []
    """Per role, whether the role lost by forfeit (the player failed); empty means none."""
    bye: bool = False
    """A Swiss bye: one player, scored as a win, nobody played."""
    response_times_ms: list[list[float]] = []
    finished_at: datetime | None = None

    @field_validator("finished_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    @model_validator(mode="after")
    def _lists_match_players(self) -> Self:
        n = len(self.players)
        for name in ("roles", "errors", "forfeits", "response_times_ms"):
            value = getattr(self, name)
            if value and len(value) != n:
                raise ValueError(f"{name}: {len(value)} entries for {n} players")
        if len(self.goals) != n:
            raise ValueError(f"goals: {len(self.goals)} entries for {n} players")
        return self

    def forfeited(self, role: int) -> bool:
        """Whether the role at this index lost by forfeit."""
        return bool(self.forfeits) and self.forfeits[role]

    @property
    def played(self) -> bool:
        """Whether the match was really played (not a bye, forfeit or server abort)."""
        return not (self.bye or self.aborted_by_server or any(self.forfeits))

    @property
    def counts(self) -> bool:
        """Whether the result counts in standings (everything but server aborts)."""
        return not self.aborted_by_server

    def error_count(self, role: int, code: ErrorCode | None = None) -> int:
        """Errors of the role at this index, of one kind or of all kinds."""
        if not self.errors:
            return 0
        counts = self.errors[role]
        return counts.get(code, 0) if code else sum(counts.values())

    def failed_every_step(self, role: int) -> bool:
        """Whether the role's player erred on every step of a played match."""
        return self.played and self.steps > 0 and self.error_count(role) >= self.steps


def outcomes(result: MatchResult) -> list[Outcome]:
    """Per role: a win beats every opponent, a loss is beaten by every one, else a draw.

    A forfeiting role always loses; a bye is a win.
    """
    if result.bye:
        return ["win"]
    points = outcome_points(result)
    return ["win" if p == 1 else "loss" if p == 0 else "draw" for p in points]


def outcome_points(result: MatchResult) -> list[float]:
    """Per role, the share of opponents beaten, a tie counting half (win 1, draw 0.5, loss 0)."""
    n = len(result.players)
    if result.bye or n == 1:
        return [1.0] * n
    points = []
    for i in range(n):
        if result.forfeited(i):
            points.append(0.0)
            continue
        score = 0.0
        for j in range(n):
            if j == i:
                continue
            if result.forfeited(j) or result.goals[i] > result.goals[j]:
                score += 1.0
            elif result.goals[i] == result.goals[j]:
                score += 0.5
        points.append(score / (n - 1))
    return points


def match_points(result: MatchResult, rule: PointsRule) -> list[float]:
    """Per role, the points the result gives under the rule (a forfeit gives 0, a bye 1)."""
    if rule == "outcome" or result.bye:
        return outcome_points(result)
    return [0.0 if result.forfeited(i) else goal / 100 for i, goal in enumerate(result.goals)]


def chronological(results: Iterable[MatchResult]) -> list[MatchResult]:
    """Results in the order they finished; those without a time keep their place first."""
    earliest = datetime.min.replace(tzinfo=UTC)
    indexed = list(enumerate(results))
    indexed.sort(key=lambda item: (item[1].finished_at or earliest, item[0]))
    return [result for _, result in indexed]


def slot_of(key: str) -> str:
    """The schedule slot a key fills: a replay of a server-aborted match adds `#attempt`."""
    return key.split("#", 1)[0]


def results_by_slot(results: Sequence[MatchResult]) -> dict[str, MatchResult]:
    """The result that fills each schedule slot (server-aborted attempts fill none)."""
    return {slot_of(r.key): r for r in results if r.counts}
