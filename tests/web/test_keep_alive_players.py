"""A player registered with ``keep_alive`` gets one connection per match from the service."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from players.agent import PlayerAgent
from players.registry import create_player

from .harness import ADMIN_HEADERS, running_service, wait_for_status


@contextlib.asynccontextmanager
async def player_counting_connections(seed: int) -> AsyncIterator[tuple[str, list[object]]]:
    """A bundled random player on loopback; yields its URL and each request's connection."""
    seen: list[object] = []

    @web.middleware
    async def count(request: web.Request, handler: web.Handler) -> web.StreamResponse:
        seen.append(request.transport)
        return await handler(request)

    app = PlayerAgent(create_player("random", seed=seed), max_matches=4).app()
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


async def test_a_keep_alive_player_gets_one_connection_per_match(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        player_counting_connections(1) as (kept_url, kept_seen),
        player_counting_connections(2) as (plain_url, plain_seen),
        running_service(tmp_path, database_url, concurrency=1) as (service, client),
    ):
        for body in (
            {"name": "kept", "url": kept_url, "keep_alive": True},
            {"name": "plain", "url": plain_url},
        ):
            response = await client.post("/api/players", json=body, headers=ADMIN_HEADERS)
            assert response.status == 201, await response.text()
            assert (await response.json())["keep_alive"] is body.get("keep_alive", False)
        kept_seen.clear()  # the pings when registered
        plain_seen.clear()
        response = await client.post(
            "/api/matches",
            json={
                "game": "tictactoex9",
                "players": ["kept", "plain"],
                "startclock": 5,
                "playclock": 2,
            },
            headers=ADMIN_HEADERS,
        )
        assert response.status == 201, await response.text()
        match = await wait_for_status(
            client, (await response.json())["id"], {"finished", "aborted"}
        )
        assert match["status"] == "finished", match
        await asyncio.sleep(0.1)
        log = await (await client.get(f"/api/matches/{match['id']}/log")).json()
        messages = len(log["moves"]) + 2  # START, every PLAY, STOP
        kept_match = kept_seen[-messages:]
        assert len({id(transport) for transport in kept_match}) == 1
        assert kept_match[0].is_closing()  # type: ignore[attr-defined]  # closed at the end
        plain_match = plain_seen[-messages:]
        assert len({id(transport) for transport in plain_match}) == messages
        # the owner can turn it off again
        response = await client.patch(
            "/api/players/kept", json={"keep_alive": False}, headers=ADMIN_HEADERS
        )
        assert response.status == 200 and (await response.json())["keep_alive"] is False
