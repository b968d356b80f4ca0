"""The server side of outbound bots: their WebSockets, and a match channel over each.

>>> hub = BotHub(lambda token: player_for_bot_token(store, token))  # doctest: +SKIP
>>> app.router.add_get(CONNECT_PATH, hub.handle)                    # doctest: +SKIP
>>> reply = await hub.channel("mybot").send("( INFO )", time_limit=3)  # doctest: +SKIP

A bot connects to ``/api/bots/connect`` with its player token and from then on gets the
same GGP messages an HTTP player gets, framed as :mod:`server.protocol.envelope`
describes.  To the match loop it is a :class:`~server.match.PlayerChannel` like any
other: one total deadline per message, faults returned as a ``Reply`` with an error.

A message finds the bot's current socket when it is sent; when the socket drops before
the reply, the message waits for the bot to reconnect and is sent again on the new
socket, all within the same deadline.  A bot that stays away until the deadline gives
a connection error (``CE``), one that is connected but silent a timeout (``TO``).
A second connection for the same player replaces the first.  aiohttp's heartbeat
(WebSocket ping every ``heartbeat`` seconds) closes a socket whose peer stopped
answering, so a dead bot is noticed without waiting for a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

from aiohttp import WSMsgType, web

from server.errors import Unauthenticated
from server.match import Reply
from server.match.transport import DEFAULT_MAX_REPLY_BYTES
from server.protocol import ProtocolError
from server.protocol.envelope import (
    BotHello,
    BotMessage,
    BotReply,
    BotWelcome,
    dump_frame,
    parse_frame,
)
from server.records import ErrorKind
from server.store import PlayerRecord

log = logging.getLogger(__name__)

Authenticate = Callable[[str], Awaitable[PlayerRecord | None]]
"""Finds the outbound player a token belongs to, or ``None``."""

HELLO_SECONDS = 10.0
"""How long a bot that sent no token in a header has to send its first frame."""

BAD_TOKEN = 4401
"""The WebSocket close code for a missing or invalid token."""

REPLACED = 4000
"""The close code of a socket replaced by a newer connection of the same player."""

MAX_FRAME_BYTES = DEFAULT_MAX_REPLY_BYTES + 64 * 1024
"""The largest frame a bot may send (a reply at the size limit plus its envelope)."""


class _Lost(Exception):
    """The socket closed before the reply came."""


class BotConnection:
    """One open socket of one bot, and the replies it owes."""

    def __init__(self, player: str, socket: web.WebSocketResponse) -> None:
        self.player = player
        self.socket = socket
        self.pending: dict[int, asyncio.Future[BotReply]] = {}
        self.connected_at = time.monotonic()

    async def request(self, frame_id: int, text: str, time_limit: float | None) -> BotReply:
        """Send one message and wait for its reply; :class:`_Lost` when the socket goes."""
        future: asyncio.Future[BotReply] = asyncio.get_running_loop().create_future()
        self.pending[frame_id] = future
        try:
            try:
                await self.socket.send_str(dump_frame(BotMessage(id=frame_id, message=text)))
            except (ConnectionError, RuntimeError) as error:
                raise _Lost(str(error) or "the socket is closed") from None
            async with asyncio.timeout(time_limit):
                return await future
        finally:
            self.pending.pop(frame_id, None)

    def received(self, reply: BotReply) -> None:
        future = self.pending.get(reply.id)
        if future is not None and not future.done():
            future.set_result(reply)

    def lost(self, reason: str) -> None:
        for future in self.pending.values():
            if not future.done():
                future.set_exception(_Lost(reason))


class BotHub:
    """Every connected outbound bot of one service, by player name."""

    def __init__(
        self,
        authenticate: Authenticate,
        *,
        heartbeat: float = 10.0,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        """``on_change(name)`` is called when a bot connects or its socket goes."""
        self.authenticate = authenticate
        self.on_change = on_change or (lambda name: None)
        self.heartbeat = heartbeat
        self.connections: dict[str, BotConnection] = {}
        self._changed = asyncio.Condition()
        self._ids = itertools.count(secrets.randbits(40))  # ids of no earlier run
        self._sockets: set[web.WebSocketResponse] = set()

    def connected(self, player: str) -> bool:
        return player in self.connections

    def channel(self, player: str, *, wait: bool = True) -> OutboundChannel:
        """The match channel to ``player``; ``wait=False`` fails at once when it is away."""
        return OutboundChannel(self, player, wait=wait)

    async def wait_connection(
        self, player: str, time_limit: float | None, lost: BotConnection | None = None
    ) -> BotConnection | None:
        """The player's socket (not the ``lost`` one), waiting up to ``time_limit`` for it."""

        def ready() -> bool:
            return self.connections.get(player) not in (None, lost)

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(time_limit), self._changed:
                await self._changed.wait_for(ready)
        return self.connections.get(player) if ready() else None

    def next_id(self) -> int:
        return next(self._ids)

    async def disconnect(self, player: str, reason: str, *, code: int = REPLACED) -> bool:
        """Close the player's socket (its token was replaced, it became an HTTP player);
        True when one was open."""
        connection = self.connections.get(player)
        if connection is None:
            return False
        connection.lost(reason)
        await connection.socket.close(code=code, message=reason[:120].encode())
        return True

    async def close(self) -> None:
        """Close every socket (the bots will reconnect to the next start of the service)."""
        for socket in list(self._sockets):
            await socket.close(code=1001, message=b"the server is stopping")

    # -- the WebSocket endpoint -----------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/bots/connect``: authenticate, then serve the bot until it goes."""
        token = _bearer(request)
        player: PlayerRecord | None = None
        if token is not None:
            player = await self.authenticate(token)
            if player is None:
                raise Unauthenticated("the bot token is not valid")
        socket = web.WebSocketResponse(
            heartbeat=self.heartbeat, max_msg_size=MAX_FRAME_BYTES, autoping=True
        )
        await socket.prepare(request)
        self._sockets.add(socket)
        try:
            if player is None:
                player = await self._hello(socket)
                if player is None:
                    return socket
            await self._serve(player, socket)
        finally:
            self._sockets.discard(socket)
        return socket

    async def _hello(self, socket: web.WebSocketResponse) -> PlayerRecord | None:
        try:
            async with asyncio.timeout(HELLO_SECONDS):
                message = await socket.receive()
            if message.type is not WSMsgType.TEXT:
                raise ProtocolError('the first frame must be {"token": ...}')
            hello = parse_frame(message.data, BotHello)
        except (TimeoutError, ProtocolError) as error:
            reason = str(error) or f"no token within {HELLO_SECONDS:g} s"
            await socket.close(code=BAD_TOKEN, message=reason[:120].encode())
            return None
        player = await self.authenticate(hello.token)
        if player is None:
            await socket.close(code=BAD_TOKEN, message=b"the bot token is not valid")
        return player

    async def _serve(self, player: PlayerRecord, socket: web.WebSocketResponse) -> None:
        name = player.name
        connection = BotConnection(name, socket)
        await socket.send_str(dump_frame(BotWelcome(welcome=name, max_matches=player.max_matches)))
        async with self._changed:
            old = self.connections.get(name)
            self.connections[name] = connection
            self._changed.notify_all()
        if old is not None:
            old.lost("replaced by a new connection")
            await old.socket.close(code=REPLACED, message=b"replaced by a new connection")
        log.info("bot %s connected", name)
        self.on_change(name)
        reason = "the bot closed the connection"
        try:
            async for message in socket:
                if message.type is not WSMsgType.TEXT:
                    continue
                try:
                    connection.received(parse_frame(message.data, BotReply))
                except ProtocolError as error:
                    log.warning("bot %s sent a frame that is not a reply: %s", name, error)
        finally:
            # aiohttp closes a socket whose heartbeat went unanswered and cancels this
            # handler, so the socket's state is read here, not after the loop
            if socket.close_code == 1006 or socket.exception() is not None:
                reason = "the connection was lost (no answer to the heartbeat)"
            async with self._changed:
                if self.connections.get(name) is connection:
                    del self.connections[name]
                self._changed.notify_all()
            connection.lost(reason)
            log.info("bot %s disconnected: %s", name, reason)
            if name not in self.connections:
                self.on_change(name)


class OutboundChannel:
    """A :class:`~server.match.PlayerChannel` to one outbound bot, through the hub."""

    transport = "websocket"

    def __init__(self, hub: BotHub, player: str, *, wait: bool = True) -> None:
        self.hub = hub
        self.player = player
        self.wait = wait

    async def send(
        self, text: str, *, time_limit: float | None, max_bytes: int = DEFAULT_MAX_REPLY_BYTES
    ) -> Reply:
        started = time.monotonic()
        deadline = None if time_limit is None else started + time_limit

        def elapsed() -> int:
            return round((time.monotonic() - started) * 1000)

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        reason = "the bot is not connected"
        frame_id = self.hub.next_id()
        lost: BotConnection | None = None
        while True:
            connection = self.hub.connections.get(self.player)
            if connection is lost:
                connection = None
            if connection is None and self.wait and (left() is None or left()):
                connection = await self.hub.wait_connection(self.player, left(), lost)
            if connection is None:
                return Reply(None, ErrorKind.CONNECTION_ERROR, reason, elapsed())
            try:
                answer = await connection.request(frame_id, text, left())
            except TimeoutError:
                return Reply(
                    None, ErrorKind.TIMEOUT, f"no reply within {time_limit:g} s", elapsed()
                )
            except _Lost as error:
                reason = f"the bot's connection was lost ({error}) and not restored in time"
                lost = connection
                if not self.wait:
                    return Reply(None, ErrorKind.CONNECTION_ERROR, reason, elapsed())
                continue
            if answer.reply is None:
                message = answer.error or "the bot sent no reply"
                return Reply(None, ErrorKind.CONNECTION_ERROR, message, elapsed())
            if len(answer.reply.encode()) > max_bytes:
                return Reply(None, ErrorKind.TOO_LARGE, f"reply over {max_bytes} bytes", elapsed())
            return Reply(answer.reply.strip(), None, "", elapsed(), "websocket")


def _bearer(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
