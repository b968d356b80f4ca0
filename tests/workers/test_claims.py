"""The claim of a match, raced by two real processes on a real PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import insert, text

from server.store import MatchStatus, Store, now_ms
from server.store.player_checks import add_check, finish_check, start_check
from server.store.tables import match_players, matches
from server.workers.claims import Busy, Claimed, ClaimOutcome, Missing, Taken, claim_match

from .harness import all_matches, open_store, prepared_database

RACE = Path(__file__).with_name("claim_race.py")


def race(url: str, names: list[str]) -> dict[str, list[str]]:
    """Start one claimant per name, let them go at once; the ids each one won."""
    processes = {
        name: subprocess.Popen(
            [sys.executable, str(RACE), url, name, str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed, name in enumerate(names)
    }
    for process in processes.values():
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "READY"
    for process in processes.values():
        assert process.stdin is not None
        process.stdin.write("GO\n")
        process.stdin.flush()
    won = {}
    for name, process in processes.items():
        out, _ = process.communicate(timeout=600)
        assert process.returncode == 0
        won[name] = [line for line in out.splitlines() if line]
    return won


async def queue_many(store: Store, count: int, players: list[str | None]) -> None:
    """Queue ``count`` matches in one transaction (the trigger gives each its job)."""
    ids = [f"race-{number:05d}" for number in range(count)]
    async with store.engine.begin() as connection:
        await connection.execute(
            insert(matches),
            [
                {
                    "id": match_id,
                    "game_name": "double_tictactoe_dengji",
                    "game_version": 1,
                    "status": MatchStatus.QUEUED.value,
                    "players": players,
                    "start_clock": 1,
                    "play_clock": 1,
                    "policy": "random",
                    "config": {},
                    "queued_at": now_ms() + number,
                }
                for number, match_id in enumerate(ids)
            ],
        )
        await connection.execute(
            insert(match_players),
            [
                {"match_id": match_id, "seat": seat, "player": player}
                for match_id in ids
                for seat, player in enumerate(players)
            ],
        )


async def test_two_workers_never_claim_the_same_match_over_thousands_of_claims(
    postgres_base_url: str,
) -> None:
    url = await prepared_database(postgres_base_url)
    async with open_store(url) as store:
        await queue_many(store, 2000, [None, None])
    won = race(url, ["left", "right"])
    left, right = set(won["left"]), set(won["right"])
    assert not left & right
    assert len(left) + len(right) == len(won["left"]) + len(won["right"]) == 2000
    assert left and right  # both really raced
    async with open_store(url) as store:
        rows = await all_matches(store)
    assert all(row["status"] == MatchStatus.RUNNING.value for row in rows)
    async with open_store(url) as store, store.engine.connect() as connection:
        jobs = (await connection.execute(text("SELECT count(*) FROM procrastinate_jobs"))).scalar()
    assert jobs == 2000  # the trigger gave each queued match one job
    assert {row["id"] for row in rows if row["worker"] == "left"} == left


async def test_a_player_is_never_in_more_matches_than_it_allows_across_workers(
    postgres_base_url: str,
) -> None:
    url = await prepared_database(postgres_base_url)
    async with open_store(url) as store:
        await store.add_player("busy", "http://127.0.0.1:9/", max_matches=3)
        await queue_many(store, 300, ["busy", None])
    won = race(url, ["left", "right", "third"])
    assert sum(len(ids) for ids in won.values()) == 3
    async with open_store(url) as store:
        counts = await store.count_matches()
    assert counts[MatchStatus.RUNNING] == 3 and counts[MatchStatus.QUEUED] == 297


async def test_a_claim_needs_every_player_registered_with_a_free_seat_and_not_being_checked(
    postgres_base_url: str,
) -> None:
    url = await prepared_database(postgres_base_url)
    async with open_store(url) as store:
        await store.add_player("one", "http://127.0.0.1:9/", max_matches=1)
        await store.add_player("two", "http://127.0.0.1:8/", max_matches=2)
        for match_id, seats in {
            "first": ["one", "two"],
            "one-again": ["one", None],
            "two-twice": ["two", "two"],
            "two-once": ["two", None],
            "ghost": ["ghost", "two"],
            "gone": [None, None],
        }.items():
            await store.queue_match(
                match_id,
                game_name="double_tictactoe_dengji",
                game_version=1,
                players=seats,
                start_clock=1,
                play_clock=1,
                policy="random",
                config={},
            )

        async def claim(match_id: str) -> ClaimOutcome:
            match = await store.get_match(match_id)
            return await claim_match(store, match, worker="w", job_id=1)

        first = await claim("first")
        assert isinstance(first, Claimed)
        assert [player.name for player in first.players] == ["one", "two"]
        await store.end_match("gone", status=MatchStatus.ABORTED, end_reason="aborted")
        assert await claim("gone") == Taken(MatchStatus.ABORTED)
        assert await claim("one-again") == Busy("one")  # one seat, taken
        assert await claim("two-twice") == Busy("two")  # one of two taken, two wanted
        assert await claim("ghost") == Missing("ghost")
        check = await add_check(
            store, "two", trigger="test", target="x", start_clock=1, play_clock=1
        )
        assert await claim("two-once") == Busy("two")  # a queued check takes its seats
        await start_check(store, check.id, target="x")
        assert await claim("two-once") == Busy("two")  # so does a running one
        await finish_check(store, check.id, passed=True, items=[], latency_ms=1)
        assert isinstance(await claim("two-once"), Claimed)
        counts = await store.count_matches()
    assert counts[MatchStatus.RUNNING] == 2 and counts[MatchStatus.QUEUED] == 3
    assert counts[MatchStatus.ABORTED] == 1
