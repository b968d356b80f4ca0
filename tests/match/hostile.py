"""A hostile GGP player as a real aiohttp server on loopback: it answers PLAY with any text.

It plays the protocol correctly otherwise (``ready``, ``done``, ``aborted``), so a
test decides exactly what each PLAY reply is: ``reply(step, legal_moves)`` gets the
step number (from 1) and the player's first legal move printed as GGP-Base prints it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from server.gdl import Game
from server.gdl.terms import to_ggp
from server.protocol import Abort, Play, Start, Stop, parse_message

ReplyScript = Callable[[int, str], str]
"""What to answer to PLAY number ``step``, given the honest move."""


def honest(step: int, move: str) -> str:
    """The honest reply: the first legal move."""
    return move


@dataclass
class HostilePlayer:
    """An aiohttp player on ``127.0.0.1`` whose PLAY replies come from ``script``."""

    script: ReplyScript = honest
    delay: float = 0.0
    """Seconds to wait before answering each PLAY."""
    url: str = ""
    plays: int = 0
    _runner: web.AppRunner | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._game: Game | None = None
        self._state = None
        self._role = ""

    async def __aenter__(self) -> HostilePlayer:
        app = web.Application(client_max_size=1 << 24)
        app.router.add_post("/", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        message = parse_message(await request.text())
        if self.delay and isinstance(message, Play):
            await asyncio.sleep(self.delay)
        return web.Response(text=self._answer(message), content_type="text/acl")

    def _answer(self, message: object) -> str:
        if isinstance(message, Start):
            self._game = Game(message.rules, engine="interpreter")
            self._role = message.role
            self._state = self._game.initial_state()
            return "ready"
        if isinstance(message, Play):
            assert self._game is not None and self._state is not None
            if message.moves is not None:
                self._state = self._game.next_state(self._state, message.moves)
            self.plays += 1
            move = to_ggp(self._game.legal_moves(self._state, self._role)[0])
            return self.script(self.plays, move)
        if isinstance(message, Stop):
            return "done"
        if isinstance(message, Abort):
            return "aborted"
        return "( ( name Hostile ) ( status available ) )"
