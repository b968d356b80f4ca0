"""What the store hands back: pydantic records, never database rows."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, field_validator


class MatchStatus(StrEnum):
    """Where a match is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class PlayerRecord(_Record):
    """A registered player and what its last pings found."""

    name: str
    url: str
    owner: str | None
    contact: str
    notes: str
    status: str
    """``unknown`` until the first ping, then ``available``, ``busy`` or ``unreachable``."""
    last_ping_at: int | None
    last_reply: str | None
    latency_ms: int | None
    failures: int
    """Failed pings in a row."""
    suspended: bool
    suspended_reason: str | None
    max_matches: int
    """How many matches the player may be in at once."""
    created_at: int
    connection: str = "http"
    """``http`` (the server posts to ``url``) or ``outbound`` (the bot connects by WebSocket)."""
    keep_alive: bool | Literal["auto"] = "auto"
    """``True``: the server asks it to keep one HTTP connection open for a whole match
    (``Connection: keep-alive``); ``False``: one connection per message, with GGP-Base's
    exact request bytes; ``"auto"``: as its latest answered ping showed."""
    keeps_connections: bool | None = None
    """Whether its HTTP server kept the connection of its latest answered ping open
    (``None``: not known yet)."""

    @field_validator("keep_alive", mode="before")
    @classmethod
    def _auto_when_null(cls, value: object) -> object:
        return "auto" if value is None else value

    @property
    def uses_kept_connections(self) -> bool:
        """Whether its next match keeps one connection open (``keep_alive``, or ``auto``
        and a ping showed it keeps them)."""
        if self.keep_alive == "auto":
            return bool(self.keeps_connections)
        return bool(self.keep_alive)


class PingRecord(_Record):
    """One ping of a player."""

    at: int
    status: str
    latency_ms: int | None
    message: str


class GameRecord(_Record):
    """One version of a game: its exact rules and what the lint found."""

    name: str
    version: int
    title: str
    rules_text: str
    rules_hash: str
    roles: list[str]
    lint_report: dict[str, Any] | None
    source: str
    start_clock: int | None
    play_clock: int | None
    created_at: int


class GameVersion(NamedTuple):
    """A game version as a match request needs it: no rules text, no lint report."""

    name: str
    version: int
    roles: list[str]


class MatchRow(_Record):
    """A match as the service keeps it, from the moment it is queued."""

    id: str
    game_name: str
    game_version: int
    status: MatchStatus
    players: list[str | None]
    start_clock: int
    play_clock: int
    policy: str
    config: dict[str, Any]
    tournament_id: str | None
    schedule_key: str | None = None
    """The match's place in its tournament's schedule (``round/table/game-index/seating``)."""
    requeued_from: str | None
    queued_at: int
    started_at: int | None
    finished_at: int | None
    end_reason: str | None
    end_message: str | None
    goals: list[int] | None


class StepRow(_Record):
    """One phase of a match: step 0 is START (the initial state), step k the k-th move."""

    step: int
    moves: list[str] | None
    state: str
    state_time: int
    errors: list[str]
    response_times: list[int | None]
    raw_replies: list[str | None]
    details: list[dict[str, Any] | None]
