"""Tournament storage on SQLite and PostgreSQL: schedule keys are unique per tournament,
and the ratings kept match by match always equal a recomputation."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update
from store_rows import queue

from server.league import RatingKeeper, TournamentDriver
from server.league.ratings import compute
from server.store import Conflict, MatchStatus, Store, TournamentStore
from server.store.tables import matches


async def test_a_schedule_key_is_queued_once_per_tournament(store: Store) -> None:
    await queue(store, "m1", ["a", "b"], tournament_id="t1", schedule_key="0/0/0/0-1")
    with pytest.raises(Conflict, match="schedule key"):
        await queue(store, "m2", ["a", "b"], tournament_id="t1", schedule_key="0/0/0/0-1")
    # the same key in another tournament, and matches without a key, are fine
    await queue(store, "m3", ["a", "b"], tournament_id="t2", schedule_key="0/0/0/0-1")
    await queue(store, "m4", ["a", "b"], tournament_id="t1")
    await queue(store, "m5", ["a", "b"], tournament_id="t1")
    assert (await store.get_match("m1")).schedule_key == "0/0/0/0-1"


async def finish(store: Store, match_id: str, players: list[str], goals: list[int]) -> None:
    await queue(store, match_id, players)
    assert await store.claim_match(match_id)
    await store.end_match(match_id, status=MatchStatus.FINISHED, end_reason="terminal", goals=goals)


async def test_ratings_kept_match_by_match_equal_a_recomputation(store: Store) -> None:
    tournaments = TournamentStore(store)
    keeper = RatingKeeper(tournaments)
    await finish(store, "m1", ["a", "b"], [100, 0])
    await finish(store, "m2", ["b", "c"], [50, 50])
    assert await keeper.catch_up() == 2
    await queue(store, "aborted", ["a", "c"])
    await store.end_match("aborted", status=MatchStatus.ABORTED, end_reason="server_restart")
    await finish(store, "m3", ["c", "a"], [100, 0])
    assert await keeper.catch_up() == 1
    assert await keeper.catch_up() == 0
    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, history = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}
    assert stored["*", "a"].matches == 2 and stored["g", "b"].matches == 2
    assert [h.match_id for h in await tournaments.player_history("a", "*")] == ["m1", "m3"]
    # a match written late, finished before the last one rated: everything is recomputed
    await finish(store, "late", ["a", "b"], [0, 100])
    async with store.engine.begin() as connection:
        await connection.execute(
            update(matches).where(matches.c.id == "late").values(finished_at=1)
        )
    await keeper.catch_up()
    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, _ = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}
    assert [h.match_id for h in await tournaments.player_history("a", "*")] == [
        "late",
        "m1",
        "m3",
    ]


async def _rated_soon(tournaments: TournamentStore, players: set[str]) -> bool:
    """Whether the ``*`` ratings come to hold exactly ``players`` within ten seconds."""
    for _ in range(500):
        if {row.player for row in await tournaments.ratings("*")} == players:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_the_ratings_are_read_again_when_a_match_ends_not_at_every_poll(
    store: Store,
) -> None:
    """Each catch-up reads the finished matches, so an idle service must not run one at
    every poll; an end is taken in at once, and a sweep catches what no notice announced."""
    tournaments = TournamentStore(store)
    driver = TournamentDriver(store, poll_seconds=0.05, rating_seconds=0.01)
    await driver.start()
    try:
        await asyncio.sleep(0.5)  # ten polls
        assert driver.rating_catch_ups == 0
        await finish(store, "m1", ["a", "b"], [100, 0])
        driver.other_match_ended()
        assert await _rated_soon(tournaments, {"a", "b"})
        assert driver.rating_catch_ups == 1
    finally:
        await driver.close()
    sweeping = TournamentDriver(store, poll_seconds=60, rating_sweep_seconds=0.1)
    await finish(store, "m2", ["a", "c"], [0, 100])  # ended with no notice at all
    await sweeping.start()
    try:
        assert await _rated_soon(tournaments, {"a", "b", "c"})
    finally:
        await sweeping.close()
