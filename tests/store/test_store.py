"""The storage interface, the same tests on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest
from store_rows import queue, step_row

from server.store import (
    Conflict,
    GameVersion,
    MatchStatus,
    NotFound,
    PlayerRecord,
    SchemaOutOfDate,
    StepRow,
    Store,
)


async def test_a_fresh_database_is_refused_until_upgraded(database_url: str) -> None:
    with pytest.raises(SchemaOutOfDate, match="ggp db upgrade"):
        await Store(database_url).open()
    store = Store(database_url)
    await store.open(upgrade=True)
    current, head = await store.revision()
    assert current == head
    await store.close()
    await store.open()  # at the latest revision now: opens without upgrading
    assert await store.ping()
    await store.close()


async def test_players_are_registered_changed_and_deleted(store: Store) -> None:
    token = await store.create_owner("alice")
    assert await store.owner_for_token(token) == "alice"
    assert await store.owner_for_token(token + "x") is None
    player = await store.add_player("bot", "http://127.0.0.1:9147/", owner="alice", contact="a@b")
    assert (player.status, player.owner, player.max_matches) == ("unknown", "alice", 1)
    # kept connections only once a ping has shown that the player keeps them
    assert (player.keep_alive, player.uses_kept_connections) == ("auto", False)
    pinged = await store.record_ping(
        "bot",
        status="available",
        latency_ms=2,
        message="",
        reply="( available )",
        suspend_after=3,
        keeps_connections=True,
    )
    assert (pinged.keeps_connections, pinged.uses_kept_connections) == (True, True)
    silent = await store.record_ping(
        "bot", status="unreachable", latency_ms=None, message="", reply=None, suspend_after=3
    )
    assert silent.keeps_connections is True  # a failed ping says nothing about it
    off = await store.update_player("bot", {"keep_alive": False})
    assert (off.keep_alive, off.uses_kept_connections) == (False, False)
    back = await store.update_player("bot", {"keep_alive": "auto"})
    assert (back.keep_alive, back.uses_kept_connections) == ("auto", True)
    with pytest.raises(Conflict):
        await store.add_player("bot", "http://127.0.0.1:9148/")
    changed = await store.update_player("bot", {"notes": "fast", "max_matches": 3})
    assert (changed.notes, changed.max_matches) == ("fast", 3)
    assert (await store.update_player("bot", {"keep_alive": True})).keep_alive is True
    kept = await store.add_player("kept", "http://127.0.0.1:9149/", keep_alive=True)
    assert kept.keep_alive is True
    await store.delete_player("kept")
    assert [p.name for p in await store.list_players()] == ["bot"]
    await store.delete_player("bot")
    with pytest.raises(NotFound):
        await store.get_player("bot")


async def refused_ping(store: Store, suspend_after: int) -> PlayerRecord:
    """Record a failed ping of the player ``bot``."""
    return await store.record_ping(
        "bot",
        status="unreachable",
        latency_ms=3,
        message="refused",
        reply=None,
        suspend_after=suspend_after,
    )


async def test_with_suspend_after_zero_failed_pings_never_suspend_a_player(store: Store) -> None:
    await store.add_player("bot", "http://127.0.0.1:9/")
    for _ in range(6):
        player = await refused_ping(store, suspend_after=0)
    assert not player.suspended and player.failures == 6


async def test_failed_pings_suspend_a_player_and_the_owner_reinstates_it(store: Store) -> None:
    await store.add_player("bot", "http://127.0.0.1:9/")
    for _ in range(2):
        player = await refused_ping(store, suspend_after=3)
        assert not player.suspended
    player = await store.record_ping(
        "bot", status="unreachable", latency_ms=3, message="refused", reply=None, suspend_after=3
    )
    assert player.suspended and "3 failed pings" in (player.suspended_reason or "")
    history = await store.ping_history("bot")
    assert [ping.status for ping in history] == ["unreachable"] * 3
    player = await store.update_player("bot", {"suspended": False})
    assert (player.suspended, player.suspended_reason, player.failures) == (False, None, 0)
    player = await store.record_ping(
        "bot", status="available", latency_ms=1, message="", reply="( available )", suspend_after=3
    )
    assert (player.status, player.failures, player.last_reply) == ("available", 0, "( available )")


async def test_games_are_versioned_by_their_rules(store: Store) -> None:
    first = await store.add_game_version("g", "(role a)", roles=["a"])
    same = await store.add_game_version("g", "(role a)", roles=["a"])
    second = await store.add_game_version("g", "(role b)", roles=["b"])
    assert (first.version, same.version, second.version) == (1, 1, 2)
    assert (await store.get_game("g")).rules_text == "(role b)"
    assert (await store.get_game("g", 1)).rules_text == "(role a)"
    assert [(game.name, game.version) for game in await store.list_games()] == [("g", 2)]
    with pytest.raises(NotFound):
        await store.get_game("g", 3)


async def test_a_match_request_is_checked_in_one_read_and_queued_with_its_audit_line(
    store: Store,
) -> None:
    await store.add_game_version("g", "(role a) (role b)", roles=["a", "b"])
    await store.add_game_version("g", "(role x) (role y) (role z)", roles=["x", "y", "z"])
    await store.add_player("p", "http://127.0.0.1:9147/")
    game, known = await store.match_inputs("g", ["p", "nobody", "p"])
    assert game == GameVersion("g", 2, ["x", "y", "z"])  # the latest version
    assert known == {"p"}
    assert await store.match_inputs("nothing", []) == (None, set())
    await store.queue_match(
        "m1",
        game_name="g",
        game_version=2,
        players=["p", None, None],
        start_clock=5,
        play_clock=1,
        policy="random",
        config={},
        audit_actor="admin",
    )
    trail = await store.audit_trail()
    assert [(line["actor"], line["action"], line["target"]) for line in trail] == [
        ("admin", "match.queue", "m1")
    ]
    with pytest.raises(Conflict):  # the same id again: neither the match nor its line is kept
        await store.queue_match(
            "m1",
            game_name="g",
            game_version=2,
            players=["p", None, None],
            start_clock=5,
            play_clock=1,
            policy="random",
            config={},
            audit_actor="admin",
        )
    assert len(await store.audit_trail()) == 1


async def test_a_match_from_queue_to_end(store: Store) -> None:
    match = await store.queue_match(
        "m1",
        game_name="g",
        game_version=1,
        players=["a", "b"],
        start_clock=5,
        play_clock=1,
        policy="random",
        config={"seed": 1},
        tournament_id="t",
    )
    assert match.status is MatchStatus.QUEUED
    assert match == await store.get_match("m1")  # the row returned is the row stored
    with pytest.raises(Conflict):
        await store.queue_match(
            "m1",
            game_name="g",
            game_version=1,
            players=["a"],
            start_clock=1,
            play_clock=1,
            policy="random",
            config={},
        )
    assert await store.claim_match("m1")
    assert not await store.claim_match("m1")
    for number in range(3):
        await store.add_step("m1", step_row(number))
    assert await store.steps("m1") == [step_row(0), step_row(1), step_row(2)]
    assert await store.end_match(
        "m1", status=MatchStatus.FINISHED, end_reason="terminal", goals=[100, 0], signed_record="{}"
    )
    assert not await store.end_match("m1", status=MatchStatus.ABORTED, end_reason="x")
    ended = await store.get_match("m1")
    assert (ended.status, ended.goals, ended.end_reason) == (
        MatchStatus.FINISHED,
        [100, 0],
        "terminal",
    )
    assert await store.signed_record("m1") == "{}"
    assert [m.id for m in await store.list_matches(player="b")] == ["m1"]
    assert await store.list_matches(player="c") == []
    assert [
        m.id for m in await store.list_matches(tournament="t", status=MatchStatus.FINISHED)
    ] == ["m1"]
    assert (await store.count_matches())[MatchStatus.FINISHED] == 1


async def test_queued_matches_are_claimed_a_page_at_a_time(store: Store) -> None:
    for number in range(5):
        await store.queue_match(
            f"m{number}",
            game_name="g",
            game_version=1,
            players=["a", "b"],
            start_clock=5,
            play_clock=1,
            policy="random",
            config={},
        )
    assert await store.claim_match("m2")  # taken by another runner first
    assert await store.claim_matches(["m4", "m0", "m2", "m9", "m1"]) == ["m4", "m0", "m1"]
    assert await store.claim_matches([]) == []
    running = await store.list_matches(status=MatchStatus.RUNNING, limit=10)
    assert sorted(match.id for match in running) == ["m0", "m1", "m2", "m4"]
    assert all(match.started_at is not None for match in running)
    assert [m.id for m in await store.list_matches(status=MatchStatus.QUEUED)] == ["m3"]


async def test_the_players_in_running_matches_are_those_seated_in_one_now(store: Store) -> None:
    for name in ("a", "b", "c"):
        await store.add_player(name, f"http://127.0.0.1:{9100 + ord(name)}/")
    await queue(store, "m.running", ["a", "b"])
    await queue(store, "m.queued", ["c", "a"])
    assert await store.players_in_running_matches() == set()
    assert await store.claim_match("m.running")
    assert await store.players_in_running_matches() == {"a", "b"}
    await store.end_match("m.running", status=MatchStatus.FINISHED, end_reason="goal")
    assert await store.players_in_running_matches() == set()


async def test_one_group_commit_keeps_every_value_of_its_rows_and_headers(store: Store) -> None:
    """Rows and headers of concurrent matches share one write; what a player sent comes
    back exactly (NUL, quotes, backslashes, any script), and a match's later header wins."""
    for match_id in ("m1", "m2"):
        await queue(store, match_id, ["a", "b"])
    awkward = 'nul \x00 quote " backslash \\ tab \t é 日本 🎲 {"json": [1]}'
    rows = {
        "m1": StepRow(
            step=0,
            moves=None,
            state="( (cell 1 1 b) )",
            state_time=2**40,
            errors=["", "IL (mark 9 9)"],
            response_times=[0, None],
            raw_replies=[awkward, None],
            details=[{"kind": "illegal", "quoted": awkward, "nested": {"n": [1.5, None]}}, None],
        ),
        "m2": step_row(1),
    }
    header = {"matchId": "m1", "gameMetaURL": "x", "scrambled": False, "note": awkward}
    await asyncio.gather(
        store.save_header("m1", {"matchId": "m1", "first": True}),
        store.save_header("m1", header),
        *(store.add_step("m" + key[1], row) for key, row in rows.items()),
    )
    assert await store.steps("m1") == [rows["m1"]]
    assert await store.steps("m2") == [rows["m2"]]
    assert await store.header("m1") == header
    assert await store.header("m2") is None
