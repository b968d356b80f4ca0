"""What the scheduler reads besides results, and what it answers."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from .results import MatchResult


def match_key(round_: int, table: int, game_index: int, seating: Sequence[int]) -> str:
    """A match's stable key: `round/table/game-index/seating`.

    The seating lists the players' indices in the spec's `players`, in role order, so
    recomputing the schedule after a restart gives the same keys.
    """
    return f"{round_}/{table}/{game_index}/{'-'.join(str(i) for i in seating)}"


class PlannedMatch(BaseModel):
    """A match the tournament wants played; queue it under its key."""

    model_config = ConfigDict(frozen=True)

    key: str
    round: int
    """Rounds are played in order; a ladder numbers its matches instead."""
    table: int
    game_index: int
    """Which match of the series on this table and seating (from 0)."""
    game: str
    players: list[str]
    """In role order."""
    startclock: int
    playclock: int


class PlayerStatus(BaseModel):
    """What the hosting service knows about a player right now."""

    model_config = ConfigDict(frozen=True)

    available: bool = True
    """Reachable and willing to play; an unavailable player is waited for."""
    capacity: int = Field(default=1, ge=1)
    """How many matches the player can play at once."""
    busy_elsewhere: int = Field(default=0, ge=0)
    """Matches the player is playing outside this tournament."""
    failed: str | None = None
    """Why the player is considered failed (say, unreachable), if it is."""
    cleared: bool = False
    """An operator checked the player: failures seen in its results are ignored."""


class Pause(BaseModel):
    """Why the tournament stopped scheduling (the `pause` failure rule)."""

    model_config = ConfigDict(frozen=True)

    player: str
    reason: str


class NextMatches(BaseModel):
    """The scheduler's answer.

    Store `record` as results (forfeits and byes, decided without play), queue `matches`.
    """

    model_config = ConfigDict(frozen=True)

    matches: list[PlannedMatch] = []
    record: list[MatchResult] = []
    paused: Pause | None = None
    finished: bool = False
    """Nothing is left to play: every match of the schedule has a result."""
