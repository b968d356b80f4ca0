"""Asking a player whether it is there: one INFO message, as Tiltyard pings its players.

>>> result = await ping_player(PlayerAddress.parse("http://127.0.0.1:9147/"))  # doctest: +SKIP
>>> result.status, result.name, result.latency_ms                             # doctest: +SKIP
('available', 'Random', 3)
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from server.protocol import Info, ProtocolError, parse_info_reply, render

from .channel import HttpChannel, PlayerChannel
from .transport import PlayerAddress

DEFAULT_PING_TIMEOUT = 3.0
"""Seconds a player has to answer INFO before it counts as unreachable."""

PING_REPLY_LIMIT = 4096
"""An INFO reply longer than this many bytes is a failed ping."""


class PlayerStatus(StrEnum):
    """What a ping found: ready for a match, in one already, or not answering sensibly."""

    AVAILABLE = "available"
    BUSY = "busy"
    UNREACHABLE = "unreachable"


class PingResult(BaseModel):
    """One ping's outcome: the status, the name the player gives, the round trip and why."""

    model_config = ConfigDict(frozen=True)

    status: PlayerStatus
    name: str | None = None
    species: str | None = None
    latency_ms: int
    message: str = ""
    """Why the player is unreachable, or what it said when its status was unusual."""
    raw_reply: str | None = None
    """The reply text, cut to 200 characters."""
    keeps_connections: bool | None = None
    """Whether the player's HTTP server agreed to keep the connection open (HTTP
    keep-alive); ``None`` when unknown (no reply, or a channel other than HTTP)."""

    @property
    def reachable(self) -> bool:
        """True when the player answered INFO at all (available or busy)."""
        return self.status is not PlayerStatus.UNREACHABLE


async def ping_player(
    address: PlayerAddress,
    *,
    timeout: float = DEFAULT_PING_TIMEOUT,  # noqa: ASYNC109 - one bound for the whole exchange
    receiver: str = "",
) -> PingResult:
    """Send INFO to one player and read its answer; never raises for a player's fault.

    The request asks for the connection to be kept open (``Connection: keep-alive``),
    and the result says whether the reply agreed; the connection is closed either way.
    A reply that does not parse as an INFO reply, but came back, still proves a live
    player: players written before INFO existed answer with anything, so such a reply
    counts as ``available`` with the reason in ``message``.  A status other than
    ``available`` or ``busy`` counts as ``busy`` (the player says it cannot play now).
    """
    return await ping_channel(HttpChannel(address, receiver, keep_alive=True), timeout=timeout)


async def ping_channel(
    channel: PlayerChannel,
    *,
    timeout: float = DEFAULT_PING_TIMEOUT,  # noqa: ASYNC109 - one bound for the whole exchange
) -> PingResult:
    """Send INFO over any channel (HTTP, or an outbound bot's socket); see :func:`ping_player`.

    An :class:`HttpChannel` made with ``keep_alive`` tells whether the player keeps
    connections open, and is closed after the reply."""
    reply = await channel.send(render(Info()), time_limit=timeout, max_bytes=PING_REPLY_LIMIT)
    keeps: bool | None = None
    if isinstance(channel, HttpChannel) and channel.kept is not None:
        keeps = channel.kept.is_open if reply.ok else None
        channel.close()
    if not reply.ok:
        return PingResult(
            status=PlayerStatus.UNREACHABLE, latency_ms=reply.elapsed_ms, message=reply.message
        )
    body = reply.body or ""
    raw = body[:200]
    try:
        info = parse_info_reply(body)
    except ProtocolError as error:
        return PingResult(
            status=PlayerStatus.AVAILABLE,
            latency_ms=reply.elapsed_ms,
            message=f"the reply to INFO is not an INFO reply ({error})",
            raw_reply=raw,
            keeps_connections=keeps,
        )
    if info.status in (None, "available"):
        status, message = PlayerStatus.AVAILABLE, ""
    elif info.status == "busy":
        status, message = PlayerStatus.BUSY, ""
    else:
        status, message = PlayerStatus.BUSY, f"the player gave the status {info.status!r}"
    return PingResult(
        status=status,
        name=info.name,
        species=info.species,
        latency_ms=reply.elapsed_ms,
        message=message,
        raw_reply=raw,
        keeps_connections=keeps,
    )
