"""Kept connections in the service: a player registered with ``keep_alive: true`` gets one
connection per match, one with ``false`` one per message with GGP-Base's bytes, and one
left at ``auto`` (the default) whatever its INFO pings showed its HTTP server does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import ClientSession
from counting_player import player_counting_connections
from match.fakes import FakePlayer

from .harness import ADMIN_HEADERS, running_service, wait_for_status


async def _play(client: ClientSession, players: list[str]) -> dict[str, Any]:
    """Queue a match between ``players``, wait for its end and return its log."""
    response = await client.post(
        "/api/matches",
        json={"game": "tictactoex9", "players": players, "startclock": 5, "playclock": 2},
        headers=ADMIN_HEADERS,
    )
    assert response.status == 201, await response.text()
    match = await wait_for_status(client, (await response.json())["id"], {"finished", "aborted"})
    assert match["status"] == "finished", match
    await asyncio.sleep(0.1)
    log: dict[str, Any] = await (await client.get(f"/api/matches/{match['id']}/log")).json()
    return log


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
            {"name": "plain", "url": plain_url, "keep_alive": False},
        ):
            response = await client.post("/api/players", json=body, headers=ADMIN_HEADERS)
            assert response.status == 201, await response.text()
            assert (await response.json())["keep_alive"] is body["keep_alive"]
        kept_seen.clear()  # the pings when registered
        plain_seen.clear()
        log = await _play(client, ["kept", "plain"])
        messages = len(log["moves"]) + 2  # START, every PLAY, STOP
        kept_match = kept_seen[-messages:]
        assert len({id(transport) for transport in kept_match}) == 1
        assert kept_match[0].is_closing()  # type: ignore[attr-defined]  # closed at the end
        plain_match = plain_seen[-messages:]
        assert len({id(transport) for transport in plain_match}) == messages
        # the owner can turn it off again, or leave it to the pings
        for value in (False, "auto"):
            response = await client.patch(
                "/api/players/kept", json={"keep_alive": value}, headers=ADMIN_HEADERS
            )
            assert response.status == 200 and (await response.json())["keep_alive"] == value


async def test_by_default_the_pings_decide_and_players_that_close_get_ggp_bases_bytes(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        player_counting_connections(3, max_matches=4) as (modern_url, modern_seen),
        FakePlayer() as old,  # answers HTTP/1.0 and closes, as GGP-Base's players
        running_service(tmp_path, database_url, concurrency=1) as (service, client),
    ):
        for name, url in (("modern", modern_url), ("old", old.url)):
            response = await client.post(
                "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201, await response.text()
            assert (await response.json())["keep_alive"] == "auto"
        log = await _play(client, ["modern", "old"])  # pinged first: the first match knows
        for name, keeps, shown in (
            ("modern", True, "one kept open per match (its pings keep the connection open)"),
            ("old", False, "one per message (its pings close the connection)"),
        ):
            player = await (await client.get(f"/api/players/{name}")).json()
            assert player["keeps_connections"] is keeps, player
            page = await (await client.get(f"/players/{name}")).text()
            assert f'<dd id="player-connections">{shown}</dd>' in page
        messages = len(log["moves"]) + 2
        assert len({id(transport) for transport in modern_seen[-messages:]}) == 1
        match_requests = [request for request in old.requests if b"( INFO )" not in request]
        assert len(match_requests) == messages
        assert not any(b"Connection" in request for request in match_requests)
