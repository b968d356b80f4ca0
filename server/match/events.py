"""Typed events of a match; observers subscribe to them (log writer, store, live pages).

Every event carries ``record``, the live match record (not serialised with the event).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from server.records import EndReason, ErrorDetail, MatchRecord


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    match_id: str
    record: MatchRecord = Field(exclude=True, repr=False)

    @classmethod
    def of(cls, **values: Any) -> Self:
        """An event from trusted values, every field given, without validation.

        The runner builds one or more events per step from values it made itself;
        this is :meth:`~pydantic.BaseModel.model_construct` without its per-field loop.
        """
        event = cls.__new__(cls)
        _set = object.__setattr__
        _set(event, "__dict__", values)
        _set(event, "__pydantic_fields_set__", set(values))
        _set(event, "__pydantic_extra__", None)
        _set(event, "__pydantic_private__", None)
        return event


class MatchStarted(_Event):
    """The match is set up; START is about to be sent."""

    game_name: str | None
    roles: list[str]
    players: list[str]
    start_clock: int
    play_clock: int
    step_limit: int


class PlayersStarted(_Event):
    """Every player answered START (or failed to); ``errors`` holds GGP-Base codes."""

    errors: list[str]
    details: list[ErrorDetail | None]
    response_times: list[int | None]


class StepPlayed(_Event):
    """One step was played: the joint move applied and the state it led to."""

    step: int
    moves: list[str]
    errors: list[str]
    details: list[ErrorDetail | None]
    response_times: list[int | None]
    state: str
    terminal: bool


class MatchEnded(_Event):
    """The result is final (STOP or ABORT is about to be sent)."""

    reason: EndReason
    goals: list[int] | None


class MatchClosed(_Event):
    """STOP or ABORT went out and the match coroutine is done; nothing follows."""

    stop_errors: list[ErrorDetail | None]


MatchEvent: TypeAlias = MatchStarted | PlayersStarted | StepPlayed | MatchEnded | MatchClosed
"""Any event of a match."""

Observer: TypeAlias = Callable[[MatchEvent], Awaitable[None] | None]
"""Something that watches a match: called with every event, in order; may be async."""
