"""The match list with many rows, on SQLite and PostgreSQL: every filter pages through
exactly its matches, newest first, and SQLite answers from the indexes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import insert, text

from server.store import MatchRow, MatchStatus, Store
from server.store.tables import match_players, matches

ROWS = 3000
GAMES = ("chess", "go", "hex")
PLAYERS = ("ann", "bob", "cyd", "dee", "eve")


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    store = Store(database_url)
    await store.open(upgrade=True)
    rows, seats = [], []
    for number in range(ROWS):
        seated = [PLAYERS[number % 5], PLAYERS[(number * 3 + 1) % 5]]
        rows.append(
            {
                "id": f"m{number:05d}",
                "game_name": GAMES[number % 3],
                "game_version": 1,
                "status": list(MatchStatus)[number % 4].value,
                "players": seated,
                "start_clock": 1,
                "play_clock": 1,
                "policy": "random",
                "config": {},
                "tournament_id": f"t{number % 7}" if number % 2 else None,
                "queued_at": 1_000_000 + number // 3,  # ties: the id orders them
            }
        )
        seats += [
            {"match_id": f"m{number:05d}", "seat": s, "player": p} for s, p in enumerate(seated)
        ]
    async with store.engine.begin() as connection:
        await connection.execute(insert(matches), rows)
        await connection.execute(insert(match_players), seats)
    yield store
    await store.close()


async def pages(store: Store, size: int, **filters: object) -> list[MatchRow]:
    found: list[MatchRow] = []
    while True:
        page = await store.list_matches(limit=size, offset=len(found), **filters)  # type: ignore[arg-type]
        found += page
        if len(page) < size:
            return found


def newest_first(numbers: list[int]) -> list[str]:
    return [f"m{n:05d}" for n in sorted(numbers, key=lambda n: (-(n // 3), n))]


async def test_every_filter_pages_through_exactly_its_matches(store: Store) -> None:
    everything = await pages(store, 250)
    assert [match.id for match in everything] == newest_first(list(range(ROWS)))
    by_game = await pages(store, 97, game="go")
    assert [m.id for m in by_game] == newest_first([n for n in range(ROWS) if n % 3 == 1])
    by_player = await pages(store, 113, player="cyd")
    assert [m.id for m in by_player] == newest_first(
        [n for n in range(ROWS) if "cyd" in (PLAYERS[n % 5], PLAYERS[(n * 3 + 1) % 5])]
    )
    both = await pages(store, 50, tournament="t3", status=MatchStatus.FINISHED, game="hex")
    assert [m.id for m in both] == newest_first(
        [n for n in range(ROWS) if n % 2 and n % 7 == 3 and n % 4 == 2 and n % 3 == 2]
    )
    oldest = await store.list_matches(status=MatchStatus.QUEUED, limit=3, oldest_first=True)
    assert [m.id for m in oldest] == ["m00000", "m00004", "m00008"]


async def test_the_filtered_lists_are_read_from_indexes(store: Store) -> None:
    if not store.is_sqlite:
        pytest.skip("the plan is checked on SQLite; PostgreSQL's depends on its statistics")
    order = "ORDER BY queued_at DESC, id LIMIT 20"
    queries = {
        "ix_matches_queued_at": f"SELECT id FROM matches {order}",
        "ix_matches_game_name_queued_at": f"SELECT id FROM matches WHERE game_name = 'go' {order}",
        "ix_matches_tournament_id_queued_at": (
            f"SELECT id FROM matches WHERE tournament_id = 't3' {order}"
        ),
        "ix_matches_status_queued_at": f"SELECT id FROM matches WHERE status = 'queued' {order}",
        "ix_match_players_player_match_id": (
            "SELECT match_id FROM match_players WHERE player = 'cyd'"
        ),
    }
    async with store.engine.connect() as connection:
        for index, query in queries.items():
            plan = " ".join(
                str(row[-1])
                for row in await connection.execute(text(f"EXPLAIN QUERY PLAN {query}"))
            )
            assert index in plan, (query, plan)
            assert re.search(r"SCAN (matches|match_players)(?! USING)", plan) is None, plan
