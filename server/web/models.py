"""The API's bodies and answers, as pydantic models (their JSON Schemas feed /openapi.json)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from server.match import PlayerAddress
from server.records import SubstitutePolicy
from server.store import GameRecord, MatchRow, MatchStatus, PingRecord, PlayerRecord

from .bot_models import CheckSummary
from .query import MAX_QUERY_NUMBER

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _check_keep_alive(value: object) -> object:
    if value is True or value is False or value == "auto":
        return value
    raise ValueError('keep_alive is true, false or "auto"')


KeepAlive = Annotated[bool | Literal["auto"], BeforeValidator(_check_keep_alive)]
"""Kept connections for a player: always, never, or as its pings show (``auto``)."""


def _check_url(url: str) -> str:
    try:
        address = PlayerAddress.parse(url)
    except ValueError as error:
        raise ValueError(f"not a player URL: {error}") from None
    if "://" not in url:
        url = address.url
    return url


class PlayerCreate(_Body):
    """Register a player: one that listens at ``url``, or an outbound bot that connects."""

    name: str = Field(pattern=NAME_PATTERN, description="Unique name of the player.")
    url: str | None = Field(
        default=None, max_length=2000, description="Where the player listens (http://host:port/)."
    )
    connection: Literal["http", "outbound"] = Field(
        default="http",
        description="outbound: the bot connects to /api/bots/connect with the token answered.",
    )
    owner: str | None = Field(
        default=None,
        pattern=NAME_PATTERN,
        description="The owner (admin only; an owner's token registers for that owner).",
    )
    contact: str = Field(default="", max_length=500)
    notes: str = Field(default="", max_length=5000)
    max_matches: int = Field(default=1, ge=1, le=1000, description="Matches at once it accepts.")
    keep_alive: KeepAlive = Field(
        default="auto",
        description="true: ask it to keep one HTTP connection open per match (Connection: "
        "keep-alive); false: one connection per message with GGP-Base's exact request "
        "bytes; auto (the default): kept connections when its latest answered INFO ping "
        "kept the connection open (keeps_connections).",
    )

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)


class PlayerUpdate(_Body):
    """Change a player; ``suspended: false`` reinstates a suspended player.

    ``connection`` switches between ``http`` (give ``url``) and ``outbound`` (the answer
    carries the bot's new token, once); a new URL is checked again."""

    url: str | None = Field(default=None, max_length=2000)
    connection: Literal["http", "outbound"] | None = None
    contact: str | None = Field(default=None, max_length=500)
    notes: str | None = Field(default=None, max_length=5000)
    max_matches: int | None = Field(default=None, ge=1, le=1000)
    keep_alive: KeepAlive | None = None
    suspended: bool | None = None
    suspended_reason: str | None = Field(default=None, max_length=500)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)


class PlayerAnswer(PlayerRecord):
    """A player; ``owner_token`` only once, when registering created its owner, and
    ``token`` only once, when an outbound bot is registered (it connects with it).
    ``check`` is its latest finished check; ``check_pending`` a check queued or running."""

    owner_token: str | None = None
    token: str | None = None
    check: CheckSummary | None = None
    check_pending: bool = False


class PlayerDetail(PlayerRecord):
    pings: list[PingRecord]
    check: CheckSummary | None = None
    check_pending: bool = False


class GameCreate(_Body):
    """Upload a game's rules in GDL (KIF), or name a ggp.org-style repository URL to fetch."""

    name: str | None = Field(default=None, pattern=r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$")
    rules: str | None = Field(default=None, min_length=1, max_length=1_000_000)
    url: str | None = Field(default=None, max_length=2000, description="A repository game URL.")
    title: str = Field(default="", max_length=200)


class GameSummary(BaseModel):
    name: str
    version: int
    title: str
    roles: list[str]
    source: str
    heavy: bool | None
    created_at: int

    @classmethod
    def of(cls, game: GameRecord) -> GameSummary:
        report = game.lint_report or {}
        return cls(
            name=game.name,
            version=game.version,
            title=game.title,
            roles=game.roles,
            source=game.source,
            heavy=report.get("heavy"),
            created_at=game.created_at,
        )


class GameDetail(GameRecord):
    """A game with its exact rules and its lint report."""


class MatchCreate(_Body):
    """Queue a match; ``players`` are registered names in role order."""

    game: str = Field(min_length=1, max_length=100)
    players: list[str | None] = Field(min_length=1, max_length=100)
    startclock: int = Field(default=10, ge=1, le=3600, description="Start clock, seconds.")
    playclock: int = Field(default=5, ge=1, le=3600, description="Play clock, seconds.")
    policy: SubstitutePolicy = SubstitutePolicy.RANDOM
    step_limit: int | None = Field(default=None, ge=1, le=100_000)
    seed: int | None = Field(default=None, ge=0, le=2**48)
    scramble: bool = False
    tournament: str | None = Field(default=None, pattern=NAME_PATTERN)


class MatchAnswer(MatchRow):
    log_url: str


class MatchFilters(_Body):
    game: str | None = None
    player: str | None = None
    tournament: str | None = None
    status: MatchStatus | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0, le=MAX_QUERY_NUMBER)


class Health(BaseModel):
    """``GET /api/health``: ``ok`` when every part below is up (503 otherwise)."""

    ok: bool
    database: bool
    """The database answers."""
    runner: bool
    """The match runner's task is running."""
    registry: bool
    """The scheduled pings of the players are running."""
    tournaments: bool
    """The tournament driver's task is running."""


def match_answer(match: MatchRow) -> MatchAnswer:
    return MatchAnswer(**match.model_dump(), log_url=f"/api/matches/{match.id}/log")
