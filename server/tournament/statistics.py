"""Per-game and per-role figures of each player, from played matches."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from .results import ERROR_CODES, ErrorCode, MatchResult, outcome_points

PERCENTILES = (50, 90, 99)


class PlayerFigures(BaseModel):
    """How a player did in one game, in one role (or in all, when `role` is None)."""

    model_config = ConfigDict(frozen=True)

    player: str
    game: str
    role: str | None
    matches: int
    average_goal: float
    win_rate: float
    """Share of opponents beaten, a tie counting half (against the field)."""
    error_rates: dict[ErrorCode, float]
    """Errors of each kind per step played."""
    response_ms: dict[str, float]
    """Response-time percentiles (`p50`, `p90`, `p99`); empty without times."""


def player_figures(results: Iterable[MatchResult]) -> list[PlayerFigures]:
    """Figures for every (player, game, role) and (player, game), sorted by those keys."""
    samples: dict[tuple[str, str, str | None], list[tuple[MatchResult, int]]] = defaultdict(list)
    for result in results:
        if not result.played:
            continue
        for index, player in enumerate(result.players):
            role = result.roles[index] if result.roles else str(index)
            samples[player, result.game, role].append((result, index))
            samples[player, result.game, None].append((result, index))
    return [
        _figures(player, game, role, samples[player, game, role])
        for player, game, role in sorted(samples, key=lambda k: (k[0], k[1], k[2] or ""))
    ]


def _figures(
    player: str, game: str, role: str | None, played: list[tuple[MatchResult, int]]
) -> PlayerFigures:
    steps = sum(result.steps for result, _ in played)
    times = sorted(
        t for result, i in played if result.response_times_ms for t in result.response_times_ms[i]
    )
    return PlayerFigures(
        player=player,
        game=game,
        role=role,
        matches=len(played),
        average_goal=sum(result.goals[i] for result, i in played) / len(played),
        win_rate=sum(outcome_points(result)[i] for result, i in played) / len(played),
        error_rates={
            code: sum(result.error_count(i, code) for result, i in played) / steps if steps else 0.0
            for code in ERROR_CODES
        },
        response_ms={f"p{q}": percentile(times, q) for q in PERCENTILES} if times else {},
    )


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank percentile of sorted values."""
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
