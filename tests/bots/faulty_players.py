"""Players with one deliberate fault each: a sound player (the bundled random one) with
one thing broken, served by aiohttp on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from aiohttp import web

from players.agent import PlayerAgent
from players.random_player import RandomPlayer
from players.serve import url_of
from server.protocol import Abort, Info, Play, Start, parse_message

FAULTS = (
    "illegal-moves",
    "upper-case-only",
    "silent-abort",
    "slow",
    "known-roles-only",
    "second-start-ok",
    "stuck-after-abort",
    "info-garbage",
)

KNOWN_ROLES = {"xplayer", "oplayer", "white", "black", "red", "blue", "left", "right"}
"""The role names the ``known-roles-only`` player has a table for."""

SLOW_SECONDS = 0.5
"""How far past the play clock the ``slow`` player answers (within the server's slack)."""


class FaultyPlayer:
    """A random player with one fault:

    * ``illegal-moves``: answers every PLAY of a known match with a move no game has;
    * ``upper-case-only``: reads only upper-case keywords (``(play ...)`` gets a 400);
    * ``silent-abort``: forgets the match on ABORT but never answers;
    * ``slow``: answers PLAY half a second after the play clock;
    * ``known-roles-only``: answers START ``ready``, then fails with HTTP 500 on PLAY
      when its role is not in a table of usual role names (as scrambled ones are not);
    * ``second-start-ok``: answers a START that comes while it plays ``ok``, not ``busy``;
    * ``stuck-after-abort``: after its first ABORT, answers the next PLAY ``busy``;
    * ``info-garbage``: answers INFO (in any case) with text that is no INFO reply.
    """

    def __init__(self, fault: str) -> None:
        assert fault in FAULTS
        self.fault = fault
        self.agent = PlayerAgent(RandomPlayer(seed=5))
        self.stuck: bool | None = None
        """``stuck-after-abort``: None until the first ABORT, True until the next PLAY."""

    async def handle(self, request: web.Request) -> web.Response:
        text = (await request.read()).decode()
        received = time.monotonic()
        if self.fault == "upper-case-only":
            keyword = text.replace("(", " ").split()[0]
            if keyword != keyword.upper():
                return web.Response(status=400, text=f"unknown message type {keyword}")
        message = parse_message(text)
        if self.fault == "info-garbage" and isinstance(message, Info):
            return web.Response(text="hello there", content_type="text/acl")
        match = self.agent.matches.get(getattr(message, "match_id", ""))
        if self.fault == "known-roles-only" and isinstance(message, Play) and match:
            if match.role not in KNOWN_ROLES:
                return web.Response(status=500, text="KeyError: " + match.role)
        if self.fault == "slow" and isinstance(message, Play) and match:
            await asyncio.sleep(match.play_clock + SLOW_SECONDS)
        answer = await self.agent.answer(message, received)
        if self.fault == "silent-abort" and isinstance(message, Abort):
            await asyncio.sleep(3600)
        if self.fault == "illegal-moves" and isinstance(message, Play) and match:
            answer = "( teleport 9 9 )"
        if self.fault == "second-start-ok" and isinstance(message, Start) and answer == "busy":
            return web.Response(text="ok", content_type="text/acl")
        if self.fault == "stuck-after-abort":
            if isinstance(message, Abort) and self.stuck is None:
                self.stuck = True
            elif isinstance(message, Play) and match and self.stuck:
                self.stuck = False
                answer = "busy"
        assert not isinstance(message, Start) or answer in ("ready", "busy")
        return web.Response(text=answer, content_type="text/acl")


@contextlib.asynccontextmanager
async def faulty_player(fault: str) -> AsyncIterator[str]:
    """Serve a player with ``fault`` on a free loopback port; yield its URL."""
    app = web.Application()
    app.router.add_route("*", "/{path:.*}", FaultyPlayer(fault).handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield url_of(runner.addresses[0])
    finally:
        await runner.cleanup()
