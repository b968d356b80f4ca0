"""SIGKILL `ggp serve` several times during a round robin: after the restarts the
tournament finishes with every slot of its schedule finished exactly once, the
interrupted matches aborted and replayed, and the same standings as a run that was
never interrupted, from the same seeds."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

from players.agent import PlayerAgent
from players.base import Player
from players.match import PlayerMatch
from players.serve import running
from server.gdl import State
from server.gdl.terms import Term

from .test_restart import HEADERS, poll, start_serve, start_serve_on_a_free_port

GAME = "double_tictactoe_dengji"
NAMES = ["ann", "bob", "cat", "dan"]
KILLS = 3

_SEED = re.compile(r"\.seed(\d+)$")


class SlotSeededRandom(Player):
    """A random player whose choices in a match depend only on its own seed, its role and
    the match's seed (the end of a tournament match's id): a replay plays the same way."""

    name = "SlotSeededRandom"

    def start(self, match: PlayerMatch) -> None:
        found = _SEED.search(match.match_id)
        assert found, f"a tournament match id carries its seed: {match.match_id}"
        match.memory["rng"] = random.Random(f"{self.seed}:{found.group(1)}:{match.role}")

    def play(self, match: PlayerMatch, state: State) -> Term:
        time.sleep(0.05)  # long enough for a kill to land in the middle of a match
        moves = sorted(match.legal_moves(state), key=str)
        rng: random.Random = match.memory["rng"]
        return rng.choice(moves)


@contextlib.asynccontextmanager
async def seeded_players() -> AsyncIterator[list[str]]:
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                running(PlayerAgent(SlotSeededRandom(seed=index), max_matches=4))
            )
            for index in range(len(NAMES))
        ]


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def moves_played(session: aiohttp.ClientSession, base: str, match: Any) -> bool:
    """Whether a running match has a move played (its log has no header at first)."""
    async with session.get(f"{base}/api/matches/{match['id']}/log") as response:
        return response.status == 200 and len((await response.json()).get("states", [])) >= 2


async def create(session: aiohttp.ClientSession, base: str, urls: list[str]) -> str:
    for name, url in zip(NAMES, urls, strict=True):
        async with session.post(
            f"{base}/api/players", json={"name": name, "url": url}, headers=HEADERS
        ) as response:
            assert response.status == 201, await response.text()
    body = {
        "name": "restart cup",
        "game": GAME,
        "format": "round_robin",
        "players": NAMES,
        "matches_per_seating": 1,
        "startclock": 5,
        "playclock": 3,
        "seed": 4,
    }
    async with session.post(f"{base}/api/tournaments", json=body, headers=HEADERS) as response:
        assert response.status == 201, await response.text()
        return str((await response.json())["id"])


async def outcome(session: aiohttp.ClientSession, base: str, tournament_id: str) -> Any:
    """The finished tournament's standings and matches."""
    tournament = await poll(
        session,
        f"{base}/api/tournaments/{tournament_id}",
        lambda t: t["status"] not in ("running", "created"),
        seconds=300,
    )
    assert tournament["status"] == "finished", tournament
    table = await get(session, f"{base}/api/tournaments/{tournament_id}/standings")
    matches = await get(session, f"{base}/api/tournaments/{tournament_id}/matches")
    return table, matches


async def stop(server: asyncio.subprocess.Process, how: signal.Signals) -> None:
    server.send_signal(how)
    async with asyncio.timeout(30):
        await server.wait()


async def test_killed_several_times_a_round_robin_ends_as_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    rng = random.Random(12)
    async with seeded_players() as urls, aiohttp.ClientSession() as session:
        # the reference: the same tournament, never interrupted
        server, port = await start_serve_on_a_free_port(tmp_path / "calm")
        base = f"http://127.0.0.1:{port}"
        try:
            calm_id = await create(session, base, urls)
            calm_table, calm_matches = await outcome(session, base, calm_id)
        finally:
            await stop(server, signal.SIGTERM)

        # the same tournament, SIGKILLed while a match is under way, several times
        data = tmp_path / "killed"
        server, port = await start_serve_on_a_free_port(data)
        base = f"http://127.0.0.1:{port}"
        tournament_id = await create(session, base, urls)
        matches_url = f"{base}/api/tournaments/{tournament_id}/matches"
        for kill in range(KILLS):
            try:
                async with asyncio.timeout(120):
                    while True:  # a match under way, with a move played
                        running_now = [
                            m for m in await get(session, matches_url) if m["status"] == "running"
                        ]
                        if running_now and await moves_played(session, base, running_now[0]):
                            break
                        await asyncio.sleep(0.05)
                await asyncio.sleep(rng.uniform(0, 0.3))
            finally:
                await stop(server, signal.SIGKILL)
            extra = ["--requeue-interrupted"] if kill % 2 else []
            server = await start_serve(data, port, *extra)
        try:
            table, matches = await outcome(session, base, tournament_id)
            everything = await get(session, f"{base}/api/matches?limit=1000")
        finally:
            await stop(server, signal.SIGTERM)

    # every interrupted match was aborted by the restart and played again by its
    # tournament under `key#n` (no stray copy from --requeue-interrupted)
    aborted = [m for m in matches if m["status"] == "aborted"]
    assert len(aborted) >= KILLS and {m["end_reason"] for m in aborted} == {"server_restart"}
    assert not [m for m in everything if m["requeued_from"]]
    attempts = Counter(m["schedule_key"].split("#")[0] for m in aborted)
    keys = {m["schedule_key"] for m in matches}
    for slot, count in attempts.items():
        assert {slot} | {f"{slot}#{n}" for n in range(2, count + 2)} <= keys
    # every slot of the schedule finished exactly once, in both runs
    finished = [m for m in matches if m["status"] == "finished"]
    slots = Counter(m["schedule_key"].split("#")[0] for m in finished)
    assert len(slots) == 12 and set(slots.values()) == {1}
    assert not [m for m in matches if m["status"] in ("queued", "running")]
    calm_slots = {m["schedule_key"]: m for m in calm_matches}
    assert len(calm_slots) == 12 and {m["status"] for m in calm_matches} == {"finished"}
    # the same seeds give the same games, replays included, so the same standings
    assert {m["schedule_key"].split("#")[0]: m["goals"] for m in finished} == {
        key: m["goals"] for key, m in calm_slots.items()
    }
    assert table == calm_table
