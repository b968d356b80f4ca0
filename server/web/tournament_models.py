"""Bodies and answers of the tournament and rating routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from server.store import TournamentRow
from server.tournament import TournamentSpec


class TournamentCreate(TournamentSpec):
    """A tournament spec; ``start: false`` keeps it ``created`` until started."""

    start: bool = True


class Progress(BaseModel):
    """How far a tournament is: matches by status, and the schedule's size when known."""

    total: int | None = Field(description="Matches in the whole schedule (round robin only).")
    finished: int
    running: int
    queued: int
    aborted: int
    awarded: int = Field(description="Results decided without play (byes, forfeits).")


class TournamentAnswer(BaseModel):
    id: str
    name: str
    game: str
    format: str
    status: str = Field(description="created, running, paused, finished or cancelled")
    pause_reason: str | None
    cleared: list[str]
    created_by: str
    created_at: int
    started_at: int | None
    finished_at: int | None
    spec: dict[str, Any]

    @classmethod
    def of(cls, row: TournamentRow) -> TournamentAnswer:
        return cls.model_validate(row.model_dump())


class TournamentDetail(TournamentAnswer):
    progress: Progress
    leaders: list[str] = Field(description="The first three of the standings.")


class ResumeBody(BaseModel):
    """Resume a paused tournament; ``clear`` names failed players an operator checked."""

    model_config = ConfigDict(extra="forbid")

    clear: list[str] = []


class ReplaceBody(BaseModel):
    """Put ``by`` (a registered player) in the seat of the withdrawn ``player``."""

    model_config = ConfigDict(extra="forbid")

    player: str = Field(min_length=1)
    by: str = Field(min_length=1)


class RatingAnswer(BaseModel):
    rank: int
    player: str
    game: str = Field(description="`*` for every game")
    mu: float
    sigma: float
    ordinal: float = Field(description="mu - 3 sigma, the figure ranked by")
    matches: int


class RatingPointAnswer(BaseModel):
    game: str
    match_id: str
    finished_at: int | None
    mu: float
    sigma: float
    ordinal: float


class PlayerRatings(BaseModel):
    player: str
    ratings: list[RatingAnswer]
    history: list[RatingPointAnswer]


class RatingFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game: str | None = None


class Action(BaseModel):
    """Nothing to send (the body may be empty)."""
