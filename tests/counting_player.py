"""A bundled random player on loopback that remembers the connection of every request."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from players.agent import PlayerAgent
from players.registry import create_player


@contextlib.asynccontextmanager
async def player_counting_connections(
    seed: int, max_matches: int = 1
) -> AsyncIterator[tuple[str, list[object]]]:
    """Yield the player's URL and the transport each request came on, in order."""
    seen: list[object] = []

    @web.middleware
    async def count(request: web.Request, handler: web.Handler) -> web.StreamResponse:
        seen.append(request.transport)
        return await handler(request)

    app = PlayerAgent(create_player("random", seed=seed), max_matches=max_matches).app()
    app.middlewares.append(count)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/", seen
    finally:
        await runner.cleanup()
