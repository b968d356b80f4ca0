"""A player registered with ``keep_alive`` gets one connection per match from the service."""

from __future__ import annotations

import asyncio
from pathlib import Path

from counting_player import player_counting_connections

from .harness import ADMIN_HEADERS, running_service, wait_for_status


async def test_a_keep_alive_player_gets_one_connection_per_match(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        player_counting_connections(1, max_matches=4) as (kept_url, kept_seen),
        player_counting_connections(2, max_matches=4) as (plain_url, plain_seen),
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
