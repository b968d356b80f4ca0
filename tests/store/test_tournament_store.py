"""Tournament storage on SQLite and PostgreSQL: schedule keys are unique per tournament,
and the ratings kept match by match always equal a recomputation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from sqlalchemy import text, update
from store_rows import queue

from server.league import RatingKeeper, TournamentDriver
from server.league.ratings import LATE_WRITE_WINDOW_MS, compute
from server.store import (
    Conflict,
    MatchRow,
    MatchStatus,
    PlayerRecord,
    Store,
    TournamentRow,
    TournamentStore,
)
from server.store.tables import matches
from server.store.tournaments import _LAST_RATED, unrated_query


async def test_a_schedule_key_is_queued_once_per_tournament(store: Store) -> None:
    await queue(store, "m1", ["a", "b"], tournament_id="t1", schedule_key="0/0/0/0-1")
    with pytest.raises(Conflict, match="schedule key"):
        await queue(store, "m2", ["a", "b"], tournament_id="t1", schedule_key="0/0/0/0-1")
    # the same key in another tournament, and matches without a key, are fine
    await queue(store, "m3", ["a", "b"], tournament_id="t2", schedule_key="0/0/0/0-1")
    await queue(store, "m4", ["a", "b"], tournament_id="t1")
    await queue(store, "m5", ["a", "b"], tournament_id="t1")
    assert (await store.get_match("m1")).schedule_key == "0/0/0/0-1"


async def finish(
    store: Store, match_id: str, players: list[str], goals: list[int], game: str = "g"
) -> None:
    await queue(store, match_id, players, game)
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
    await keeper.catch_up(full=True)  # long before: a full catch-up (a sweep) finds it
    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, _ = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}
    assert [h.match_id for h in await tournaments.player_history("a", "*")] == [
        "late",
        "m1",
        "m3",
    ]


async def test_a_match_of_one_game_leaves_the_ratings_of_the_other_games_as_they_were(
    store: Store,
) -> None:
    tournaments = TournamentStore(store)
    keeper = RatingKeeper(tournaments)
    await finish(store, "h1", ["a", "b"], [100, 0], game="h")
    assert await keeper.catch_up() == 1
    in_h = await tournaments.ratings("h")
    await finish(store, "g1", ["a", "b"], [0, 100])
    assert await keeper.catch_up() == 1
    assert await tournaments.ratings("h") == in_h  # rewritten: "*" and "g" only
    assert {(r.scope, r.player, r.matches) for r in await tournaments.player_ratings("a")} == {
        ("*", "a", 2),
        ("g", "a", 1),
        ("h", "a", 1),
    }
    assert [h.match_id for h in await tournaments.player_history("a", "h")] == ["h1"]
    assert [h.match_id for h in await tournaments.player_history("a", "g")] == ["g1"]


async def test_a_tournament_created_running_is_started_and_one_created_to_start_later_is_not(
    store: Store,
) -> None:
    tournaments = TournamentStore(store)
    spec = {"name": "cup", "game": "g", "format": "round_robin"}
    running = await tournaments.create("t1", spec, status="running", created_by="admin")
    later = await tournaments.create("t2", spec, status="created", created_by="admin")
    assert running.started_at is not None and running.started_at >= running.created_at
    assert later.started_at is None


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
        assert driver.rating_catch_ups == 1  # the one at start
        await finish(store, "m1", ["a", "b"], [100, 0])
        driver.other_match_ended()
        assert await _rated_soon(tournaments, {"a", "b"})
        assert driver.rating_catch_ups == 2
    finally:
        await driver.close()
    sweeping = TournamentDriver(store, poll_seconds=60, rating_sweep_seconds=0.3)
    await sweeping.start()
    try:
        await asyncio.sleep(0.05)
        # ended with no notice at all, and recorded as finished long before the others
        await finish(store, "m2", ["a", "c"], [0, 100])
        await _set_finished_at(store, "m2", 1)
        assert await _rated_soon(tournaments, {"a", "b", "c"})
    finally:
        await sweeping.close()


async def test_a_catch_up_reads_back_a_window_a_full_one_everything(store: Store) -> None:
    tournaments = TournamentStore(store)
    keeper = RatingKeeper(tournaments)
    await finish(store, "m1", ["a", "b"], [100, 0])
    assert await keeper.catch_up() == 1
    finished = (await store.get_match("m1")).finished_at
    assert finished is not None
    await finish(store, "imported", ["c", "d"], [100, 0])
    await _set_finished_at(store, "imported", finished - 100 * LATE_WRITE_WINDOW_MS)
    await finish(store, "next", ["b", "c"], [100, 0])
    assert [m.id for m in await tournaments.unrated_matches()] == ["imported", "next"]
    assert [m.id for m in await tournaments.unrated_matches(since=finished)] == ["next"]
    assert await keeper.catch_up() == 1  # the window: only "next"
    assert {r.player for r in await tournaments.ratings("*")} == {"a", "b", "c"}
    # the sweep finds the old one, finished before the last rated: all recomputed
    assert await keeper.catch_up(full=True) == 3
    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, _ = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}
    # a late write within the window is found at once, and recomputed too
    await finish(store, "just_late", ["a", "d"], [0, 100])
    await _set_finished_at(store, "just_late", finished - LATE_WRITE_WINDOW_MS // 2)
    assert await keeper.catch_up() == 4
    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, _ = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}


async def _set_finished_at(store: Store, match_id: str, at: int) -> None:
    async with store.engine.begin() as connection:
        await connection.execute(
            update(matches).where(matches.c.id == match_id).values(finished_at=at)
        )


async def test_a_catch_up_reads_the_new_matches_from_indexes(store: Store) -> None:
    """Its cost follows what is new, not the archive: no scan of the finished matches,
    and the latest rated match is read from an index, not sorted."""
    if not store.is_sqlite:
        pytest.skip("the plan is checked on SQLite; PostgreSQL's depends on its statistics")
    dialect = store.engine.dialect
    queries = {
        "ix_matches_status_finished_at": unrated_query(since=1000),
        "ix_rated_matches_finished_at": _LAST_RATED,
    }
    async with store.engine.connect() as connection:
        for index, query in queries.items():
            sql = str(query.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
            plan = " ".join(
                str(row[-1]) for row in await connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"))
            )
            assert index in plan, (sql, plan)
            assert "USE TEMP B-TREE FOR ORDER BY" not in plan, plan


async def finish_at(
    store: Store, match_id: str, players: list[str], goals: list[int], at: int
) -> None:
    """A match that finished at ``at`` (ms), whenever it is written."""
    await finish(store, match_id, players, goals)
    async with store.engine.begin() as connection:
        await connection.execute(
            update(matches).where(matches.c.id == match_id).values(finished_at=at)
        )


async def test_a_match_of_the_same_millisecond_but_a_smaller_id_written_late_is_rated_in_order(
    store: Store,
) -> None:
    """Matches are rated in the order (finished at, id): a late write that sorts before the
    last match rated makes the keeper recompute, even within one millisecond."""
    tournaments = TournamentStore(store)
    keeper = RatingKeeper(tournaments)
    await finish_at(store, "m5", ["a", "b"], [100, 0], at=1_000)
    assert await keeper.catch_up() == 1
    await finish_at(store, "m3", ["b", "a"], [100, 0], at=1_000)
    await finish_at(store, "m9", ["a", "c"], [100, 0], at=2_000)

    assert await keeper.catch_up() == 3  # every finished match, read again

    stored = {(r.scope, r.player): r for s in ("*", "g") for r in await tournaments.ratings(s)}
    current, _ = compute(await tournaments.finished_matches())
    assert stored == {(r.scope, r.player): r for r in current}
    assert [h.match_id for h in await tournaments.player_history("a", "*")] == ["m3", "m5", "m9"]


async def two_player_cup(store: Store) -> TournamentRow:
    """A round robin "t1" of two players who may play both its matches at once."""
    await store.add_game_version("g", "(role white) (role black)", roles=["white", "black"])
    for name in ("a", "b"):
        await store.add_player(name, "http://127.0.0.1:9/", max_matches=2)
    spec = {
        "name": "cup",
        "game": "g",
        "format": "round_robin",
        "players": ["a", "b"],
        "startclock": 5,
        "playclock": 2,
    }
    return await TournamentStore(store).create("t1", spec, status="running", created_by="admin")


async def test_the_driver_reads_past_running_matches_and_matches_queued_by_hand(
    store: Store,
) -> None:
    """The tournament's oldest match was queued by hand under its name, and one of its
    scheduled matches still runs while the other has ended: neither ends the reading."""
    tournaments = TournamentStore(store)
    row = await two_player_cup(store)
    await queue(store, "a-by-hand", ["a", "b"], tournament_id="t1")
    first = await TournamentDriver(store).advance(row)
    assert len(first.matches) == 2 and not first.finished
    scheduled = [m for m in await tournaments.matches("t1") if m.schedule_key is not None]
    running, ended = scheduled
    for match in (running, ended):
        assert await store.claim_match(match.id)
    await store.end_match(
        ended.id, status=MatchStatus.FINISHED, end_reason="terminal", goals=[100, 0]
    )

    driver = TournamentDriver(store)  # a new service reads it all from the database
    results, active = await driver.results(row)
    assert [result.key for result in results] == [ended.schedule_key]
    assert [match.id for match in active] == [running.id]
    waiting = await driver.advance(row)
    assert waiting.matches == [] and not waiting.finished

    await store.end_match(
        running.id, status=MatchStatus.FINISHED, end_reason="terminal", goals=[50, 50]
    )
    assert (await TournamentDriver(store).advance(row)).finished
    assert (await tournaments.get("t1")).status == "finished"


class Starter:
    """A runner with room for ``room`` matches, started as the driver queues them."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.started: list[str] = []

    def hold(self, seated: Sequence[str | None], players: Sequence[PlayerRecord]) -> bool:
        return False

    def release(self, seated: Sequence[str | None]) -> None:
        raise AssertionError("nothing was held")

    async def start_queued(
        self, match: MatchRow, players: Sequence[PlayerRecord], *, claimed: bool = False
    ) -> bool:
        if len(self.started) == self.room:
            return False
        self.started.append(match.id)
        return True


@pytest.mark.parametrize(("room", "wakes"), [(2, 0), (1, 1), (0, 1)])
async def test_the_queue_is_woken_only_for_matches_the_runner_had_no_room_for(
    store: Store, room: int, wakes: int
) -> None:
    row = await two_player_cup(store)
    starter = Starter(room)
    woken: list[None] = []
    driver = TournamentDriver(store, starter=starter, on_queued=lambda: woken.append(None))

    answer = await driver.advance(row)

    assert len(answer.matches) == 2
    assert len(starter.started) == room and len(woken) == wakes
