"""A tournament declared once, as data, and checked before anything is scheduled.

Formats and the number of roles they support:

- ``round_robin``: any number of roles (every n-subset of the players, every seating);
- ``ladder``: any number of roles, over one or more games;
- ``swiss`` and ``single_elimination``: two-role games only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .results import PointsRule

Format = Literal["round_robin", "swiss", "single_elimination", "ladder"]
FailureRule = Literal["forfeit", "pause"]
EliminationTiebreak = Literal["extra_matches", "higher_seed"]
SubstitutePolicy = Literal["random", "first", "forfeit"]

TWO_ROLE_FORMATS: frozenset[str] = frozenset({"swiss", "single_elimination"})


class TournamentSpecError(ValueError):
    """A tournament spec that cannot be scheduled; each problem names its field."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))


class TournamentSpec(BaseModel):
    """What a tournament is: its format, game, players (in seed order) and rules.

    Single elimination's tie-break: a series level after `best_of` matches goes on with
    extra matches (seats still alternating) until one of them is won, at most
    `max_extra_matches`; if still level, the higher seed advances. With
    `elimination_tiebreak="higher_seed"` the higher seed advances at once.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    game: str = Field(min_length=1)
    format: Format
    players: list[str] = Field(min_length=2)
    """Player names, in seed order (best first) for elimination and Swiss."""
    matches_per_seating: int = Field(default=1, ge=1)
    startclock: int = Field(ge=1)
    playclock: int = Field(ge=1)
    rounds: int | None = Field(default=None, ge=1)
    """Swiss only: how many rounds."""
    games: list[str] = []
    """Ladder only: more games to pick from, besides `game`."""
    roles: int | None = Field(default=None, ge=1)
    """The game's number of roles, when known here (scheduling takes it as input too)."""
    best_of: int | None = Field(default=None, ge=1)
    """Elimination only: matches per series; defaults to `matches_per_seating`."""
    elimination_tiebreak: EliminationTiebreak = "extra_matches"
    max_extra_matches: int = Field(default=2, ge=0)
    points: PointsRule = "outcome"
    """`outcome`: win 1, draw 0.5, loss 0 against each opponent (averaged over opponents);
    `goals`: the goal divided by 100, for games that are not zero-sum."""
    failure_rule: FailureRule = "forfeit"
    substitute_policy: SubstitutePolicy = "random"
    seed: int = 0
    max_concurrent: int | None = Field(default=None, ge=1)
    starts_at: datetime | None = None

    @field_validator("players", "games")
    @classmethod
    def _distinct_names(cls, names: list[str]) -> list[str]:
        if any(not name.strip() for name in names):
            raise ValueError("names must not be empty")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate names: {', '.join(duplicates)}")
        return names

    @model_validator(mode="after")
    def _format_fields(self) -> Self:
        if self.format == "swiss" and self.rounds is None:
            raise ValueError("rounds: a Swiss tournament needs a number of rounds")
        if self.format != "swiss" and self.rounds is not None:
            raise ValueError("rounds: only a Swiss tournament has a number of rounds")
        if self.format != "ladder" and self.games:
            raise ValueError("games: only a ladder plays more than one game")
        if self.format != "single_elimination" and self.best_of is not None:
            raise ValueError("best_of: only single elimination plays series")
        if self.roles is not None:
            check_roles(self, {self.game: self.roles})
        return self

    @property
    def all_games(self) -> list[str]:
        """The games played: `game`, then the ladder's `games`."""
        return [self.game, *(g for g in self.games if g != self.game)]

    @property
    def series_length(self) -> int:
        """Matches in an elimination series (before any tie-break)."""
        return self.best_of or self.matches_per_seating


def check_roles(spec: TournamentSpec, roles: Mapping[str, int]) -> None:
    """Refuse a spec whose format cannot play its games' numbers of roles."""
    for game in spec.all_games:
        count = roles.get(game)
        if count is None:
            raise TournamentSpecError([("roles", f"the number of roles of {game!r} is not given")])
        if spec.format in TWO_ROLE_FORMATS and count != 2:
            raise TournamentSpecError(
                [("format", f"{spec.format} needs a two-role game; {game!r} has {count} roles")]
            )
        if count > len(spec.players):
            raise TournamentSpecError(
                [("players", f"{game!r} has {count} roles but only {len(spec.players)} players")]
            )


def parse_spec(data: Mapping[str, Any]) -> TournamentSpec:
    """Read a spec from plain data; every problem is reported with the field it concerns."""
    try:
        return TournamentSpec.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            field = ".".join(str(part) for part in item["loc"])
            message = str(item["msg"]).removeprefix("Value error, ")
            if not field and ": " in message:
                field, message = message.split(": ", 1)
            problems.append((field or "spec", message))
        raise TournamentSpecError(problems) from None
