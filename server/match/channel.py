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

from typing import Protocol

from .transport import DEFAULT_MAX_REPLY_BYTES, PlayerAddress, Reply, send_message


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
    """A classic player: one HTTP POST per message, with GGP-Base's request bytes."""

    transport = "http"

    def __init__(self, address: PlayerAddress, receiver: str = "") -> None:
        self.address = address
        self.receiver = receiver

    async def send(
        self, text: str, *, time_limit: float | None, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
    ) -> Reply:
        return await send_message(
            self.address, text, receiver=self.receiver, time_limit=time_limit, max_bytes=max_bytes
        )
