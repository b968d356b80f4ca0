"""Scheduled INFO pings: status, latency and history kept; repeated failures suspend."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.match.local_players import local_players

from .harness import ADMIN_HEADERS, running_service


async def test_scheduled_pings_keep_status_and_suspend_a_failing_player(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ggp.db'}"
    async with (
        local_players(["random"]) as (random_url,),
        running_service(tmp_path, url, ping_seconds=0.2, suspend_after=3) as (service, client),
    ):
        for name, player_url in (("alive", random_url), ("gone", "http://127.0.0.1:9/")):
            response = await client.post(
                "/api/players", json={"name": name, "url": player_url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201
        async with asyncio.timeout(30):
            while True:
                gone = await (await client.get("/api/players/gone")).json()
                if gone["suspended"]:
                    break
                await asyncio.sleep(0.1)
        assert gone["status"] == "unreachable" and "3 failed pings" in gone["suspended_reason"]
        assert [ping["status"] for ping in gone["pings"]] == ["unreachable"] * 3
        alive = await (await client.get("/api/players/alive")).json()
        assert alive["status"] == "available" and not alive["suspended"]
        assert len(alive["pings"]) >= 3 and alive["last_reply"]
        # a suspended player is no longer pinged
        await asyncio.sleep(0.6)
        again = await (await client.get("/api/players/gone")).json()
        assert len(again["pings"]) == 3


async def test_scheduled_pings_note_kept_connections_and_leave_players_in_a_match_alone(
    tmp_path: Path,
) -> None:
    from server.registry import Registry, RegistrySettings
    from server.store import Store

    store = Store(f"sqlite:///{tmp_path / 'ggp.db'}")
    await store.open(upgrade=True)
    try:
        async with local_players(["random", "random"]) as (playing_url, idle_url):
            await store.add_player("playing", playing_url)
            await store.add_player("idle", idle_url)
            await store.add_player("rival", idle_url)
            await store.queue_match(
                "m.1",
                game_name="tictactoex9",
                game_version=1,
                players=["playing", "rival"],
                start_clock=5,
                play_clock=5,
                policy="random",
                config={},
            )
            assert await store.claim_match("m.1")  # running: its players are left alone
            registry = Registry(store, RegistrySettings())
            pinged = {player.name: player for player in await registry.ping_all()}
        assert set(pinged) == {"idle"}
        assert (pinged["idle"].status, pinged["idle"].keeps_connections) == ("available", True)
        assert pinged["idle"].uses_kept_connections  # keep_alive left at auto
        assert (await store.get_player("playing")).last_ping_at is None
    finally:
        await store.close()
