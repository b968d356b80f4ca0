"""Figures the pages show, from stored results: a game's seats, lengths and draws; a
player's results by game and role."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SeatFigures:
    """How one role of a game does, whoever plays it."""

    role: str
    average_goal: float
    wins: int
    """Matches where this role's goal was the only highest."""


@dataclass(frozen=True)
class GameFigures:
    """A game's figures over its finished matches."""

    matches: int
    average_steps: float
    average_seconds: float | None
    draw_rate: float
    """Share of matches where every role got the same goal."""
    seats: list[SeatFigures]


def sole_winner(goals: Sequence[int]) -> int | None:
    """The index of the only highest goal, or None (a draw, or shared first place)."""
    if not goals:
        return None
    best = max(goals)
    first = [i for i, goal in enumerate(goals) if goal == best]
    return first[0] if len(first) == 1 else None


def game_figures(
    results: Sequence[tuple[list[int], int, int | None, int | None]], roles: Sequence[str]
) -> GameFigures:
    """From (goals, steps, started_at, finished_at) of finished matches of one game."""
    counted = [r for r in results if len(r[0]) == len(roles)]
    n = len(counted)
    durations = [
        (end - start) / 1000
        for _, _, start, end in counted
        if start is not None and end is not None
    ]
    winners = [sole_winner(goals) for goals, *_ in counted]
    seats = [
        SeatFigures(
            role=role,
            average_goal=sum(goals[i] for goals, *_ in counted) / n if n else 0.0,
            wins=sum(w == i for w in winners),
        )
        for i, role in enumerate(roles)
    ]
    return GameFigures(
        matches=n,
        average_steps=sum(steps for _, steps, _, _ in counted) / n if n else 0.0,
        average_seconds=sum(durations) / len(durations) if durations else None,
        draw_rate=sum(len(set(goals)) == 1 for goals, *_ in counted) / n if n else 0.0,
        seats=seats,
    )


@dataclass(frozen=True)
class RoleResults:
    """A player's results in one role of one game."""

    game: str
    role: str
    matches: int
    average_goal: float
    wins: int
    draws: int
    losses: int


def results_by_role(
    seats: Sequence[tuple[str, int, list[int]]], roles: Mapping[str, Sequence[str]]
) -> list[RoleResults]:
    """From (game, seat, goals) of a player's finished matches, by game then role."""
    grouped: dict[tuple[str, int], list[list[int]]] = {}
    for game, seat, goals in seats:
        if seat < len(goals):
            grouped.setdefault((game, seat), []).append(goals)
    table = []
    for (game, seat), played in sorted(grouped.items()):
        names = roles.get(game, ())
        wins = sum(sole_winner(goals) == seat for goals in played)
        draws = sum(len(set(goals)) == 1 for goals in played)
        table.append(
            RoleResults(
                game=game,
                role=names[seat] if seat < len(names) else f"role {seat + 1}",
                matches=len(played),
                average_goal=sum(goals[seat] for goals in played) / len(played),
                wins=wins,
                draws=draws,
                losses=len(played) - wins - draws,
            )
        )
    return table
