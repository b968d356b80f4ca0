"""SIGKILL `ggp serve` during a round robin: after a restart the tournament finishes, every
slot of the schedule finished exactly once, and the standings are those of the results."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from server.match.local_players import local_players
from server.tournament import MatchResult, TournamentSpec, standings

from .test_restart import HEADERS, free_port, poll, start_serve

GAME = "double_tictactoe_dengji"


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as response:
        assert response.status == 200, await response.text()
        return await response.json()


@pytest.mark.parametrize("requeue", [False, True], ids=["plain", "requeue-interrupted"])
async def test_a_round_robin_survives_a_killed_service(tmp_path: Path, requeue: bool) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    names = ["rnd", "lgl", "rnd2"]
    async with (
        local_players(["random", "legal", "random"], seed=9) as urls,
        aiohttp.ClientSession() as session,
    ):
        server = await start_serve(tmp_path, port)
        try:
            for name, url in zip(names, urls, strict=True):
                async with session.post(
                    f"{base}/api/players", json={"name": name, "url": url}, headers=HEADERS
                ) as response:
                    assert response.status == 201, await response.text()
            body = {
                "name": "restart cup",
                "game": GAME,
                "format": "round_robin",
                "players": names,
                "matches_per_seating": 1,
                "startclock": 3,
                "playclock": 1,
                "seed": 4,
            }
            async with session.post(
                f"{base}/api/tournaments", json=body, headers=HEADERS
            ) as response:
                assert response.status == 201, await response.text()
                tournament_id = (await response.json())["id"]
            matches_url = f"{base}/api/tournaments/{tournament_id}/matches"

            async def one_done_and_one_under_way() -> None:
                while True:
                    matches = await get(session, matches_url)
                    running = [m for m in matches if m["status"] == "running"]
                    if any(m["status"] == "finished" for m in matches) and running:
                        log = await get(session, f"{base}/api/matches/{running[0]['id']}/log")
                        if len(log.get("states", [])) >= 2:
                            return
                    await asyncio.sleep(0.05)

            async with asyncio.timeout(120):
                await one_done_and_one_under_way()
        finally:
            server.send_signal(signal.SIGKILL)
            await server.wait()

        server = await start_serve(tmp_path, port, *(["--requeue-interrupted"] if requeue else []))
        try:
            tournament = await poll(
                session,
                f"{base}/api/tournaments/{tournament_id}",
                lambda t: t["status"] not in ("running", "created"),
                seconds=240,
            )
            assert tournament["status"] == "finished", tournament
            matches = await get(session, matches_url)
            # the tournament replays its own interrupted match; no stray copy is queued
            everything = await get(session, f"{base}/api/matches?limit=1000")
            assert not [m for m in everything if m["requeued_from"]]
            table = await get(session, f"{base}/api/tournaments/{tournament_id}/standings")
        finally:
            server.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                await server.wait()

    aborted = [m for m in matches if m["status"] == "aborted"]
    assert aborted and {m["end_reason"] for m in aborted} == {"server_restart"}
    # the interrupted match was played again under `key#2`
    replays = {m["schedule_key"] for m in matches if "#" in m["schedule_key"]}
    assert {m["schedule_key"] + "#2" for m in aborted} <= replays
    finished = [m for m in matches if m["status"] == "finished"]
    slots = Counter(m["schedule_key"].split("#")[0] for m in finished)
    assert len(slots) == 6 and set(slots.values()) == {1}
    assert not [m for m in matches if m["status"] in ("queued", "running")]
    # the standings are those computed from the stored results
    results = [
        MatchResult(
            key=m["schedule_key"],
            game=GAME,
            players=m["players"],
            goals=m["goals"] or [0, 0],
            aborted_by_server=m["status"] == "aborted",
        )
        for m in matches
    ]
    expected = standings(TournamentSpec.model_validate(tournament["spec"]), results)
    assert [(s.player, s.points, s.played, s.wins) for s in expected] == [
        (s["player"], s["points"], s["played"], s["wins"]) for s in table
    ]
    assert sum(s["played"] for s in table) == 12
