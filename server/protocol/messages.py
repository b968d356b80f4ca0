"""The GGP messages as data: what a game server sends to a player.

Terms inside messages are raw terms (``str`` or nested ``tuple``, see
:mod:`server.gdl.terms`); rules are :class:`server.gdl.parser.Rule` values.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, InstanceOf

from server.gdl.parser import Rule


def _raw_term(value: Any) -> Any:
    """Accept a term (raw or public) and store it as plain ``str``/``tuple`` values."""
    if isinstance(value, str):
        if not value or any(char.isspace() or char in "()" for char in value):
            raise ValueError(f"not a GDL symbol: {value!r}")
        return str.__str__(value)
    if isinstance(value, tuple) and value and isinstance(value[0], str):
        return (_raw_term(value[0]), *(_raw_term(arg) for arg in value[1:]))
    raise ValueError(f"not a GDL term: {value!r}")


WireTerm: TypeAlias = Annotated[Any, BeforeValidator(_raw_term)]
"""A ground term as carried by a message, stored raw."""

Symbol: TypeAlias = Annotated[str, BeforeValidator(_raw_term)]
"""An atom on the wire: a match id or a role name (no spaces, no parentheses)."""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)


class Start(_Message):
    """``( START id role (rules...) startclock playclock)``: a new match for the player."""

    match_id: Symbol
    role: Symbol
    rules: list[InstanceOf[Rule]]
    start_clock: int = Field(ge=0)
    play_clock: int = Field(ge=0)


class Play(_Message):
    """``( PLAY id moves )``: choose a move; ``moves`` is the previous joint move, or
    ``None`` on the first step (``NIL`` on the wire)."""

    match_id: Symbol
    moves: list[WireTerm] | None = None


class Stop(_Message):
    """``( STOP id moves )``: the match is over; ``moves`` is the last joint move."""

    match_id: Symbol
    moves: list[WireTerm] | None = None


class Abort(_Message):
    """``( ABORT id )``: the match was cancelled."""

    match_id: Symbol


class Info(_Message):
    """``( INFO )``: who are you and are you available?"""


class Preview(_Message):
    """``( PREVIEW (rules...) previewclock )``: a look at the rules before a match."""

    rules: list[InstanceOf[Rule]]
    preview_clock: int = Field(ge=0)


Message: TypeAlias = Start | Play | Stop | Abort | Info | Preview
"""Any message a game server sends."""
