"""Stored matches as the tournament core reads them (`MatchResult`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from server.store import MatchRow, MatchStatus
from server.tournament import ErrorCode, MatchResult

_CODES: tuple[ErrorCode, ...] = ("TO", "CE", "IL")


class StepLike(Protocol):
    """What a result reads of a stored step (a `StepRow`, or only these two columns)."""

    @property
    def errors(self) -> list[str]: ...

    @property
    def response_times(self) -> list[int | None]: ...


def is_server_abort(match: MatchRow) -> bool:
    """An aborted match counts for nothing and is played again (`key#2`)."""
    return match.status is MatchStatus.ABORTED


def _time(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def match_result(
    match: MatchRow, steps: Sequence[StepLike], roles: Sequence[str], key: str | None = None
) -> MatchResult:
    """The result of an ended match: goals, errors per role by kind, response times."""
    players = [name or "" for name in match.players]
    errors: list[dict[ErrorCode, int]] = [{} for _ in players]
    times: list[list[float]] = [[] for _ in players]
    for step in steps:
        for role, error in enumerate(step.errors[: len(players)]):
            code = error.split(" ", 1)[0]  # GGP-Base writes an illegal move as "IL <move>"
            if code in _CODES:
                errors[role][code] = errors[role].get(code, 0) + 1
        for role, ms in enumerate(step.response_times[: len(players)]):
            if ms is not None:
                times[role].append(float(ms))
    aborted = is_server_abort(match)
    goals = list(match.goals) if match.goals and len(match.goals) == len(players) else []
    return MatchResult(
        key=key or match.schedule_key or match.id,
        game=match.game_name,
        players=players,
        roles=list(roles) if len(roles) == len(players) else [],
        goals=goals or [0] * len(players),
        errors=errors,
        steps=max(0, len(steps) - 1),
        aborted_by_server=aborted,
        response_times_ms=times,
        finished_at=_time(match.finished_at),
    )
