"""Matches run by several `ggp worker` processes sharing one real PostgreSQL.

The service runs with ``no_runner`` (API, pages, tournament driver, lost-worker sweeper);
every match is played by worker processes, against player processes, over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from web.harness import ADMIN_HEADERS, running_service

from server.records.signing import load_or_create_host_key
from server.store import MatchStatus
from server.workers import WORKER_LOST, WorkerSettings

from .harness import (
    BOTS,
    WorkerProcess,
    all_matches,
    open_store,
    players,
    prepared_database,
    wait_until_settled,
    workers_running,
)

GAME = "double_tictactoe_dengji"
LOST_AFTER = 5.0


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "host_key.pem"
    load_or_create_host_key(path)
    return path


async def register(client: TestClient, urls: dict[str, str], max_matches: int) -> None:
    for name, url in urls.items():
        response = await client.post(
            "/api/players",
            json={"name": name, "url": url, "max_matches": max_matches},
            headers=ADMIN_HEADERS,
        )
        assert response.status == 201, await response.text()


async def queue(client: TestClient, players: list[str], game: str = GAME, **more: Any) -> str:
    body = {"game": game, "players": players, "startclock": 3, "playclock": 2, **more}
    response = await client.post("/api/matches", json=body, headers=ADMIN_HEADERS)
    assert response.status == 201, await response.text()
    match_id: str = (await response.json())["id"]
    return match_id


DETERMINISTIC = {
    "first": f"{BOTS}:FirstMove",
    "second": f"{BOTS}:SecondMove",
    "third": f"{BOTS}:ThirdMove",
    "last": f"{BOTS}:LastMove",
}


async def round_robin_standings(
    base_url: str, tmp_path: Path, key_file: Path, urls: dict[str, str], workers: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run the same round robin with ``workers`` worker processes; (standings, match rows)."""
    url = await prepared_database(base_url)
    folder = tmp_path / f"run-{workers}"
    async with running_service(folder, url, no_runner=True) as (_, client):
        await register(client, urls, max_matches=1)  # a player process plays one at a time
        started = [
            WorkerProcess(url, f"w{index}", key_file, concurrency=2, log_dir=tmp_path)
            for index in range(workers)
        ]
        with workers_running(*started):
            spec = {
                "name": "scale-out cup",
                "game": GAME,
                "format": "round_robin",
                "players": sorted(urls),
                "matches_per_seating": 1,
                # clocks that a loaded machine keeps: a late reply would be replaced by a
                # seeded random move, and the standings would depend on the machine's load
                "startclock": 20,
                "playclock": 10,
                "seed": 5,
            }
            response = await client.post("/api/tournaments", json=spec, headers=ADMIN_HEADERS)
            assert response.status == 201, await response.text()
            tournament = (await response.json())["id"]
            async with asyncio.timeout(300):
                while True:
                    state = await (await client.get(f"/api/tournaments/{tournament}")).json()
                    if state["status"] not in ("running", "created"):
                        break
                    await asyncio.sleep(0.5)
            assert state["status"] == "finished", state
            standings = await (await client.get(f"/api/tournaments/{tournament}/standings")).json()
        async with open_store(url) as store:
            rows = await all_matches(store)
    return standings, rows


async def test_three_workers_give_the_standings_of_one_worker(
    postgres_base_url: str, tmp_path: Path, key_file: Path
) -> None:
    with players(DETERMINISTIC) as urls:
        alone, alone_rows = await round_robin_standings(
            postgres_base_url, tmp_path, key_file, urls, workers=1
        )
        shared, shared_rows = await round_robin_standings(
            postgres_base_url, tmp_path, key_file, urls, workers=3
        )

    def table(standings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [
            (row["player"], row["rank"], row["points"], row["wins"], row["draws"], row["losses"])
            for row in standings
        ]

    results = {row["schedule_key"]: (row["players"], row["goals"]) for row in alone_rows}
    again = {row["schedule_key"]: (row["players"], row["goals"]) for row in shared_rows}
    assert again == results
    assert table(shared) == table(alone)
    assert len({tuple(row["goals"]) for row in alone_rows}) > 1  # not all draws: they differ
    for rows in (alone_rows, shared_rows):
        assert len(rows) == 12  # 4 players, 6 pairs, 2 seatings: each match once
        assert all(row["status"] == "finished" for row in rows)
        assert Counter(row["schedule_key"] for row in rows).most_common(1)[0][1] == 1
    assert {row["worker"] for row in alone_rows} == {"w0"}
    assert len({row["worker"] for row in shared_rows}) >= 2


async def test_sigkill_of_workers_mid_match_loses_and_duplicates_nothing(
    postgres_base_url: str, tmp_path: Path, key_file: Path
) -> None:
    url = await prepared_database(postgres_base_url)
    aborts = tmp_path / "aborts.txt"
    aborts.touch()
    slow = {f"slow-{letter}": f"{BOTS}:SlowFirst" for letter in "abcdef"}
    pairs = [["slow-a", "slow-b"], ["slow-c", "slow-d"], ["slow-e", "slow-f"]]
    env = {"GGP_TEST_ABORT_LOG": str(aborts), "GGP_TEST_THINK": "0.2"}
    # the workers count a worker lost after 5 s, the service's sweeper after its default
    bound = max(
        WorkerSettings(lost_after=LOST_AFTER),
        WorkerSettings(),
        key=lambda settings: settings.lost_after,
    ).lost_within
    killed: dict[str, float] = {}  # match id -> when its worker was killed (epoch seconds)
    with players(slow, env) as urls:
        async with running_service(
            tmp_path / "service", url, no_runner=True, requeue_interrupted=True
        ) as (_, client):
            await register(client, urls, max_matches=1)
            originals = [await queue(client, pairs[number % 3]) for number in range(8)]
            async with open_store(url) as store:
                with workers_running() as group:
                    for round_ in range(3):  # a worker takes matches, and is killed mid-match
                        victim = WorkerProcess(
                            url, f"victim{round_}", key_file, lost_after=LOST_AFTER, requeue=True
                        )
                        group.append(victim)
                        running = await _wait_for_running_match(store, victim.name)
                        victim.kill()
                        now = time.time()
                        for match_id in await _held_by(store, victim.name):
                            killed[match_id] = now
                        assert running in killed
                    group.append(
                        WorkerProcess(
                            url, "survivor", key_file, lost_after=LOST_AFTER, requeue=True
                        )
                    )
                    final = await wait_until_settled(store, 300)
    by_id = {match.id: match for match in final}
    for match_id, when in killed.items():
        match = by_id[match_id]
        assert match.status is MatchStatus.ABORTED and match.end_reason == WORKER_LOST, match
        assert match.finished_at is not None
        detected = match.finished_at / 1000 - when
        assert detected <= bound + 5, (match_id, detected)  # 5 s of slack for a loaded machine
    async with open_store(url) as store:
        for match_id in killed:
            log = await store.signed_record(match_id)
            assert log is not None and WORKER_LOST in log
    # every original match ends finished exactly once, through its chain of re-queued copies
    copies = Counter(match.requeued_from for match in final if match.requeued_from)
    assert all(count == 1 for count in copies.values()), copies
    assert set(copies) == set(killed)
    children = {match.requeued_from: match.id for match in final if match.requeued_from}
    for original in originals:
        chain = [original]
        while chain[-1] in children:
            chain.append(children[chain[-1]])
        statuses = [by_id[match_id].status for match_id in chain]
        assert statuses[-1] is MatchStatus.FINISHED, (chain, statuses)
        assert statuses.count(MatchStatus.FINISHED) == 1
    assert len(final) == len(originals) + len(killed)
    told = set(aborts.read_text().split())
    assert set(killed) <= told  # both players of each lost match got ABORT


async def _held_by(store: Any, worker: str) -> list[str]:
    return [
        row["id"]
        for row in await all_matches(store)
        if row["worker"] == worker and row["status"] == MatchStatus.RUNNING.value
    ]


async def _wait_for_running_match(store: Any, worker: str, seconds: float = 120) -> str:
    """A match the worker is playing, a few steps in."""
    async with asyncio.timeout(seconds):
        while True:
            for match_id in await _held_by(store, worker):
                if len(await store.steps(match_id)) >= 3:
                    return match_id
            await asyncio.sleep(0.2)


async def test_a_worker_limited_to_some_games_never_takes_others(
    postgres_base_url: str, tmp_path: Path, key_file: Path
) -> None:
    url = await prepared_database(postgres_base_url)
    with players({"first": DETERMINISTIC["first"], "last": DETERMINISTIC["last"]}) as urls:
        async with running_service(tmp_path / "service", url, no_runner=True) as (_, client):
            await register(client, urls, max_matches=1)
            mine = [await queue(client, ["first", "last"]) for _ in range(3)]
            others = [
                await queue(client, ["first", "last"], game="nineBoardTicTacToe") for _ in range(3)
            ]
            worker = WorkerProcess(url, "small", key_file, games=[GAME])
            async with open_store(url) as store:
                with workers_running(worker):
                    async with asyncio.timeout(120):
                        while True:
                            done = [(await store.get_match(match_id)).status for match_id in mine]
                            if set(done) == {MatchStatus.FINISHED}:
                                break
                            await asyncio.sleep(0.3)
                    await asyncio.sleep(3)  # time enough to take another job, were it allowed
                    rows = {row["id"]: row for row in await all_matches(store)}
                    metrics = await (await client.get("/metrics")).text()
                    alive = await asyncio.to_thread(check_alive, url, "small")
                assert alive.returncode == 0 and "alive, 0 of 4" in alive.stdout, alive
                gone = await asyncio.to_thread(check_alive, url, "small")
                assert gone.returncode == 1 and "stopped" in gone.stderr, gone
    assert 'ggp_queue_depth{game="nineBoardTicTacToe"} 3.0' in metrics
    assert 'ggp_worker_capacity{worker="small"} 4.0' in metrics
    assert "ggp_matches_stalled 0.0" in metrics
    assert all(rows[match_id]["worker"] == "small" for match_id in mine)
    assert all(rows[match_id]["status"] == "queued" for match_id in others)
    assert all(rows[match_id]["worker"] is None for match_id in others)


def check_alive(url: str, name: str) -> subprocess.CompletedProcess[str]:
    command = ["worker", "--database", url, "--check-alive", name]
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *command], capture_output=True, text=True, timeout=60
    )


async def test_live_steps_reach_the_service_from_a_worker_process(
    postgres_base_url: str, tmp_path: Path, key_file: Path
) -> None:
    url = await prepared_database(postgres_base_url)
    slow = {"slow-a": f"{BOTS}:SlowFirst", "slow-b": f"{BOTS}:SlowFirst"}
    with players(slow, {"GGP_TEST_THINK": "0.15"}) as urls:
        async with running_service(tmp_path / "service", url, no_runner=True) as (service, client):
            await register(client, urls, max_matches=1)
            match_id = await queue(client, ["slow-a", "slow-b"])
            worker = WorkerProcess(url, "far", key_file)
            with workers_running(worker):
                events = await _read_events(client, match_id)
            assert service.runner.running == {}  # nothing ran in the service itself
    steps = [data for kind, data in events if kind == "step"]
    assert events[-1][0] == "end"
    assert len(steps) >= 5
    assert [step["step"] for step in steps] == sorted({step["step"] for step in steps})
    async with open_store(url) as store:
        stored = await store.steps(match_id)
        assert (await store.get_match(match_id)).status is MatchStatus.FINISHED
    assert steps[-1]["step"] == stored[-1].step


async def _read_events(client: TestClient, match_id: str) -> list[tuple[str, Any]]:
    import json

    events: list[tuple[str, Any]] = []
    async with asyncio.timeout(120):
        response = await client.get(f"/matches/{match_id}/events")
        kind = ""
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))
                if kind == "end":
                    break
    return events


async def test_an_abort_through_the_api_reaches_the_worker_running_the_match(
    postgres_base_url: str, tmp_path: Path, key_file: Path
) -> None:
    url = await prepared_database(postgres_base_url)
    aborts = tmp_path / "aborts.txt"
    aborts.touch()
    slow = {"slow-a": f"{BOTS}:SlowFirst", "slow-b": f"{BOTS}:SlowFirst"}
    env = {"GGP_TEST_ABORT_LOG": str(aborts), "GGP_TEST_THINK": "0.3"}
    with players(slow, env) as urls:
        async with running_service(tmp_path / "service", url, no_runner=True) as (_, client):
            await register(client, urls, max_matches=1)
            match_id = await queue(client, ["slow-a", "slow-b"])
            worker = WorkerProcess(url, "far", key_file)
            async with open_store(url) as store:
                with workers_running(worker):
                    assert await _wait_for_running_match(store, "far") == match_id
                    response = await client.post(
                        f"/api/matches/{match_id}/abort", headers=ADMIN_HEADERS
                    )
                    assert response.status == 200, await response.text()
                    answer = await response.json()
                    log = await store.signed_record(match_id)
                    steps = len(await store.steps(match_id))
    assert answer["status"] == "aborted"
    assert log is not None and '"isAborted":true' in log.replace(" ", "")
    assert steps >= 3
    assert aborts.read_text().split().count(match_id) == 2  # both players were told
