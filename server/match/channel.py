"""How the match loop reaches a player: a channel that sends one message and returns its reply.

>>> channel = HttpChannel(PlayerAddress.parse("http://127.0.0.1:9147/"), receiver="random")
>>> reply = await channel.send("( INFO )", time_limit=3.0)  # doctest: +SKIP

The runner only calls :meth:`PlayerChannel.send`; an HTTP player gets an
:class:`HttpChannel`, and the hosting service gives a bot connected over a WebSocket
a channel of its own.  Every channel keeps the same contract as
:func:`~server.match.transport.send_message`: one total deadline, and player faults
come back as a :class:`~server.match.transport.Reply` with an error, never raised.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from .transport import (
    DEFAULT_MAX_REPLY_BYTES,
    KeptConnection,
    PlayerAddress,
    Reply,
    send_message,
    start_on_kept,
)


class PlayerChannel(Protocol):
    """Sends one GGP message to one player and returns the reply."""

    @property
    def transport(self) -> str:
        """What carries the messages, as written in the match log (``http``, ``websocket``)."""
        ...

    async def send(
        self, text: str, *, time_limit: float | None, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
    ) -> Reply:
        """The reply to ``text`` within ``time_limit`` seconds in total (``None``: no limit)."""
        ...


class HttpChannel:
    """A classic player: one HTTP POST per message, with GGP-Base's request bytes.

    With ``keep_alive`` (for players the host marked so), the requests ask the player to
    keep the connection open and one connection carries message after message; call
    :meth:`close` when done with the channel.
    """

    transport = "http"

    def __init__(
        self, address: PlayerAddress, receiver: str = "", keep_alive: bool = False
    ) -> None:
        self.address = address
        self.receiver = receiver
        self.kept: KeptConnection | None = KeptConnection() if keep_alive else None

    async def send(
        self, text: str, *, time_limit: float | None, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
    ) -> Reply:
        return await send_message(
            self.address,
            text,
            receiver=self.receiver,
            time_limit=time_limit,
            max_bytes=max_bytes,
            kept=self.kept,
        )

    def start(
        self, text: str, *, time_limit: float | None, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
    ) -> asyncio.Future[Reply]:
        """:meth:`send`, begun now: on a kept connection the request is written at once
        and its reply read without a task of its own (one step of a match sends to every
        role, so a task each adds up); otherwise :meth:`send` runs as a task."""
        if self.kept is not None:
            future = start_on_kept(
                self.address,
                text,
                receiver=self.receiver,
                time_limit=time_limit,
                max_bytes=max_bytes,
                kept=self.kept,
            )
            if future is not None:
                return future
        return asyncio.ensure_future(self.send(text, time_limit=time_limit, max_bytes=max_bytes))

    def close(self) -> None:
        """Close the connection kept open for the next message, if any."""
        if self.kept is not None:
            self.kept.close()
