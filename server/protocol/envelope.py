"""The framing of GGP messages on an outbound bot's WebSocket (``/api/bots/connect``).

A bot behind a firewall opens a WebSocket to the server and receives exactly the GGP
messages an HTTP player receives, as the same S-expression text, each in a JSON text
frame with an id; it answers each in a frame with the same id, so the messages of
several concurrent matches are matched to their replies:

    server -> bot   {"id": 7, "message": "( PLAY match-1 ( ( mark 1 1 ) noop ) )"}
    bot -> server   {"id": 7, "reply": "( mark 2 2 )"}
    bot -> server   {"id": 8, "error": "cannot read the message"}     (counts as CE)

When the socket drops before the reply, the server sends the message again, with the
same id, on the bot's next socket (within the message's deadline); a bot should answer
an id it has answered already with the same reply rather than act twice.

The bot authenticates with its player token, as ``Authorization: Bearer TOKEN`` on
the upgrade request or as a first frame ``{"token": "TOKEN"}``; the server then
sends ``{"welcome": "NAME", "max_matches": N}``.
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ProtocolError

CONNECT_PATH = "/api/bots/connect"
"""Where ``ggp serve`` accepts outbound bots."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BotMessage(_Frame):
    """A GGP message for the bot."""

    id: int = Field(ge=0)
    message: str


class BotReply(_Frame):
    """The bot's answer to the message with the same id: a reply, or why there is none."""

    id: int = Field(ge=0)
    reply: str | None = None
    error: str | None = None


class BotHello(_Frame):
    """The first frame of a bot that did not send its token in a header."""

    token: str = Field(min_length=1, max_length=200)


class BotWelcome(_Frame):
    """The server's greeting once the token is accepted."""

    welcome: str
    max_matches: int = 1


Frame = BotMessage | BotReply | BotHello | BotWelcome
T = TypeVar("T", bound=_Frame)


def dump_frame(frame: Frame) -> str:
    """One frame as compact JSON text."""
    return frame.model_dump_json(exclude_none=True)


def parse_frame(text: str | bytes, kind: type[T]) -> T:
    """Read one frame of the expected ``kind``; :class:`ProtocolError` when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtocolError(f"a frame that is not JSON: {error}") from None
    try:
        return kind.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "frame"
        raise ProtocolError(f"not a {kind.__name__} frame: {where}: {first['msg']}") from None
