"""The driver between full passes: ended matches taken in one by one, the next started at once,
never more at once than the runner's limit, the rest left to the queue."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from bots.faulty_players import faulty_player

from server.match.local_players import local_players

from .harness import ADMIN_HEADERS, running_service
from .test_tournaments import register, run_to_end, spec


async def test_the_driver_starts_what_the_runner_has_room_for_and_queues_the_rest(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_players(["random"] * 4, seed=2) as urls,
        running_service(tmp_path, database_url, concurrency=1) as (service, client),
    ):
        names = ["a", "b", "c", "d"]
        await register(client, dict(zip(names, urls, strict=True)))
        response = await client.post(
            "/api/tournaments", json=spec("round_robin", names), headers=ADMIN_HEADERS
        )
        assert response.status == 201, await response.text()
        tournament_id = (await response.json())["id"]
        path = f"/api/tournaments/{tournament_id}"
        most_running = 0
        saw_queued = False
        async with asyncio.timeout(240):
            while True:
                matches = await (await client.get(f"{path}/matches")).json()
                statuses = [m["status"] for m in matches]
                most_running = max(most_running, statuses.count("running"))
                saw_queued |= "queued" in statuses
                tournament = await (await client.get(path)).json()
                if tournament["status"] != "running":
                    break
                await asyncio.sleep(0.05)
        assert tournament["status"] == "finished", tournament
        # two matches could be played at once, but the runner takes one: the other waits
        assert most_running == 1 and saw_queued
        matches = await (await client.get(f"{path}/matches")).json()  # read after the end
        assert len(matches) == 12 and {m["status"] for m in matches} == {"finished"}
        driver = service.tournaments
        assert driver is not None
        # passes took ended matches in without reading the whole tournament again
        assert driver.passes - driver.full_passes >= 4


async def test_errors_in_the_standings_are_those_of_the_stored_steps(
    tmp_path: Path, database_url: str
) -> None:
    """The runner hands each ended match's errors to the driver without a read: what the
    standings count must be exactly what the stored steps hold."""
    async with (
        local_players(["random", "random"], seed=4) as urls,
        faulty_player("illegal-moves") as faulty_url,
        running_service(tmp_path, database_url, concurrency=2) as (service, client),
    ):
        names = ["r1", "r2", "bad"]
        await register(client, dict(zip(names, [*urls, faulty_url], strict=True)))
        tournament_id = await run_to_end(client, spec("round_robin", names))
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        stored: Counter[tuple[str, str]] = Counter()
        for match in matches:
            for step in await service.store.steps(match["id"]):
                for name, error in zip(match["players"], step.errors, strict=True):
                    if error:  # "TO", "CE", or "IL <the move>" as GGP-Base writes it
                        stored[name, error.split()[0]] += 1
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        counted = Counter(
            {
                (line["player"], code): count
                for line in table
                for code, count in line["errors"].items()
                if count
            }
        )
        assert counted == stored
        assert counted["bad", "IL"] >= 4 and not any(n != "bad" for n, _ in counted)
