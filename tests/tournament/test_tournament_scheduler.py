"""The scheduler: idempotent, never double-books, respects capacity, pauses, replays aborts."""

from collections import Counter
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_tables import Service, result, spec

from server.tournament import (
    NextMatches,
    Pause,
    PlayerStatus,
    TournamentSpec,
    next_matches,
    standings,
)
from server.tournament.spec import Format


def test_the_same_inputs_give_the_same_answer_and_a_restart_repeats_nothing() -> None:
    cup = spec("swiss", "abcdefg", rounds=3)
    first = next_matches(cup, 2, [])
    assert first == next_matches(cup, 2, [])
    assert [r.key for r in first.record] == ["1/bye/0/6"]
    assert [m.key for m in first.matches] == ["1/0/0/0-1", "1/1/0/3-2", "1/2/0/4-5"]
    # the bye was stored and the matches queued, then the service restarted
    stored, queued = list(first.record), list(first.matches)
    again = next_matches(cup, 2, stored, queued)
    assert again.matches == [] and again.record == []
    # round 1 is over; round 2 is asked for twice (a crash before the answer was stored)
    results = stored + [result(m, m.players, [100, 0]) for m in queued]
    second = next_matches(cup, 2, results)
    assert second == next_matches(cup, 2, results)
    assert {m.round for m in second.matches} == {2} and len(second.matches) == 3
    assert not {m.key for m in second.matches} & {r.key for r in results}


@settings(max_examples=40, deadline=None)
@given(
    format=st.sampled_from(["round_robin", "swiss", "single_elimination"]),
    count=st.integers(min_value=3, max_value=7),
    capacity=st.lists(st.integers(min_value=1, max_value=2), min_size=7, max_size=7),
    max_concurrent=st.one_of(st.none(), st.integers(min_value=1, max_value=4)),
    data=st.data(),
)
def test_random_interleavings_never_duplicate_lose_or_double_book_a_match(
    format: Format,
    count: int,
    capacity: list[int],
    max_concurrent: int | None,
    data: st.DataObject,
) -> None:
    names = [f"p{i}" for i in range(count)]
    extra = {"rounds": 3} if format == "swiss" else {}
    service = Service(spec(format, names, max_concurrent=max_concurrent, **extra))
    service.statuses = {p: PlayerStatus(capacity=c) for p, c in zip(names, capacity, strict=False)}
    outcomes = st.sampled_from([[100, 0], [0, 100], [50, 50]])
    for _ in range(500):
        before = {r.key for r in service.results} | {m.key for m in service.active}
        answer = service.ask()
        # asking again at once (a restart) gives nothing more
        assert (
            next_matches(service.spec, 2, service.results, service.active, service.statuses).matches
            == []
        )
        assert not {m.key for m in answer.matches} & before
        load = Counter(p for m in service.active for p in m.players)
        assert all(load[p] <= service.statuses[p].capacity for p in names)
        if max_concurrent is not None:
            assert len(service.active) <= max_concurrent
        if answer.finished:
            break
        assert service.active
        # some of the running matches finish, in any order
        finishing = data.draw(
            st.lists(st.sampled_from(service.active), min_size=1, unique_by=lambda m: m.key)
        )
        for match in finishing:
            service.finish(match, data.draw(outcomes))
    else:
        raise AssertionError("did not finish")
    keys = [r.key for r in service.results]
    assert len(keys) == len(set(keys))
    assert sorted(service.queued_keys) == sorted(k for k in keys if "bye" not in k)


def test_a_busy_player_waits_and_capacity_lets_it_play_twice() -> None:
    cup = spec("round_robin", "abcd")
    busy = {"a": PlayerStatus(busy_elsewhere=1)}
    assert [m.key for m in next_matches(cup, 2, [], [], busy).matches] == ["1/1/0/2-3"]
    away = {"c": PlayerStatus(available=False)}
    assert [m.key for m in next_matches(cup, 2, [], [], away).matches] == ["1/0/0/0-1"]
    # with room for two matches each, rounds 1 and 2 start together; round 3 is
    # entered once round 1's matches are over, and round 4 waits for round 2's
    wide = {p: PlayerStatus(capacity=2) for p in "abcd"}
    first = next_matches(cup, 2, [], [], wide).matches
    assert [m.key for m in first] == ["1/0/0/0-1", "1/1/0/2-3", "2/0/0/1-0", "2/1/0/3-2"]
    assert next_matches(cup, 2, [], first, wide).matches == []
    over = [result(m, m.players, [100, 0]) for m in first[:2]]
    third = next_matches(cup, 2, over, first[2:], wide).matches
    assert [m.key for m in third] == ["3/0/0/0-2", "3/1/0/1-3"]


def test_free_players_start_a_later_round_at_once_without_waiting_for_a_slow_match() -> None:
    cup = spec("round_robin", "abcdef")
    first = next_matches(cup, 2, []).matches
    assert [m.key for m in first] == ["1/0/0/0-1", "1/1/0/2-3", "1/2/0/4-5"]
    slow = first[2]
    done = [result(m, m.players, [100, 0]) for m in first[:2]]
    second = next_matches(cup, 2, done, [slow]).matches
    assert [m.key for m in second] == ["2/0/0/1-0", "2/1/0/3-2"]
    done += [result(m, m.players, [0, 100]) for m in second]
    # e and f still play their first match, yet a, b, c and d go on with round 3
    third = next_matches(cup, 2, done, [slow]).matches
    assert len(third) == 2 and not {"e", "f"} & {p for m in third for p in m.players}
    assert {m.round for m in third} == {3}


def test_the_players_with_the_most_matches_left_are_served_first() -> None:
    cup = spec("round_robin", "abc")
    played = [result("1/0/0/0-1", ["a", "b"], [100, 0]), result("2/0/0/1-0", ["b", "a"], [0, 100])]
    # a and b met twice already; c has four matches left, so it plays now
    chosen = next_matches(cup, 2, played).matches
    assert len(chosen) == 1 and "c" in chosen[0].players


def test_max_concurrent_caps_the_matches_running_at_once() -> None:
    cup = spec("round_robin", "abcdef", max_concurrent=2)
    first = next_matches(cup, 2, []).matches
    assert [m.key for m in first] == ["1/0/0/0-1", "1/1/0/2-3"]
    assert next_matches(cup, 2, [], first).matches == []
    done = [result(first[0], first[0].players, [100, 0])]
    assert [m.key for m in next_matches(cup, 2, done, first[1:]).matches] == ["1/2/0/4-5"]


def test_the_pause_rule_stops_scheduling_with_the_reason_until_cleared() -> None:
    cup = spec("round_robin", "abc", failure_rule="pause")
    failed = result("1/0/0/0-1", ["a", "b"], [100, 0], errors=[{}, {"TO": 5}])
    answer = next_matches(cup, 2, [failed])
    assert answer.matches == [] and answer.record == []
    assert answer.paused is not None
    assert (answer.paused.player, answer.paused.reason) == (
        "b",
        "erred on every step of match 1/0/0/0-1",
    )
    assert standings(cup, [failed])[1].status == "failed"
    cleared = {"b": PlayerStatus(cleared=True)}
    # once cleared, play goes on: c, with the most matches left, plays first
    assert [m.key for m in next_matches(cup, 2, [failed], [], cleared).matches] == ["3/0/0/0-2"]
    unreachable = {"c": PlayerStatus(failed="unreachable")}
    paused = next_matches(cup, 2, [], [], unreachable).paused
    assert paused is not None and paused.reason == "unreachable"


def test_a_match_without_a_step_fails_nobody() -> None:
    # A game whose initial state is terminal ends before the first PLAY: no step was
    # asked for, so no player erred on every one of them.
    cup = spec("round_robin", "abc", failure_rule="pause")
    over_at_once = result("1/0/0/0-1", ["a", "b"], [50, 50], steps=0)
    answer = next_matches(cup, 2, [over_at_once])
    assert answer.paused is None
    assert [m.key for m in answer.matches] == ["3/0/0/0-2"]
    assert {row.player: row.status for row in standings(cup, [over_at_once])}["b"] != "failed"


def test_an_unreachable_player_under_the_forfeit_rule_loses_its_remaining_matches() -> None:
    cup = spec("round_robin", "abc")
    answer = next_matches(cup, 2, [], [], {"c": PlayerStatus(failed="unreachable")})
    assert [(r.key, r.players, r.goals, r.forfeits) for r in answer.record] == [
        ("3/0/0/0-2", ["a", "c"], [100, 0], [False, True]),
        ("4/0/0/2-0", ["c", "a"], [0, 100], [True, False]),
        ("5/0/0/1-2", ["b", "c"], [100, 0], [False, True]),
        ("6/0/0/2-1", ["c", "b"], [0, 100], [True, False]),
    ]
    assert [m.key for m in answer.matches] == ["1/0/0/0-1"]


def test_a_match_the_server_aborted_is_played_again_under_a_new_key() -> None:
    cup = spec("round_robin", "ab")
    aborted = result("1/0/0/0-1", ["a", "b"], [0, 0], aborted_by_server=True)
    assert [m.key for m in next_matches(cup, 2, [aborted]).matches] == ["1/0/0/0-1#2"]
    replayed = result("1/0/0/0-1#2", ["a", "b"], [100, 0])
    assert [m.key for m in next_matches(cup, 2, [aborted, replayed]).matches] == ["2/0/0/1-0"]
    assert standings(cup, [aborted, replayed])[0].played == 1


def test_a_ladder_is_deterministic_given_its_seed_and_history() -> None:
    ladder = spec("ladder", "abcdef", games=["chinese"], max_concurrent=2)
    roles = {"ticTacToe": 2, "chinese": 3}
    first = next_matches(ladder, roles, [])
    assert first == next_matches(ladder, roles, [])
    assert len(first.matches) == 2
    assert {m.game for m in first.matches} == {"ticTacToe", "chinese"}
    assert len({p for m in first.matches for p in m.players}) == 5
    other = next_matches(ladder.model_copy(update={"seed": 7}), roles, [])
    assert [m.players for m in other.matches] != [m.players for m in first.matches]


def test_a_ladder_balances_games_players_and_roles() -> None:
    ladder = spec("ladder", "abcde", games=["chinese"], max_concurrent=1)
    service = Service(ladder, {"ticTacToe": 2, "chinese": 3})
    for _ in range(120):
        (match,) = service.ask().matches
        service.finish(match, [100] + [0] * (len(match.players) - 1))
    results = service.results
    games = Counter(r.game for r in results)
    assert games == {"ticTacToe": 60, "chinese": 60}
    for game, roles in (("ticTacToe", 2), ("chinese", 3)):
        plays = Counter(p for r in results if r.game == game for p in r.players)
        assert max(plays.values()) - min(plays.values()) <= 1
        for player in "abcde":
            seats = Counter(
                r.players.index(player) for r in results if r.game == game and player in r.players
            )
            assert max(seats.values()) - min(seats[i] for i in range(roles)) <= 1


def test_a_spec_is_checked_against_the_games_roles() -> None:
    swiss = TournamentSpec(
        name="s",
        game="chinese",
        format="swiss",
        players=list("abcd"),
        rounds=2,
        startclock=1,
        playclock=1,
    )
    try:
        next_matches(swiss, 3, [])
    except ValueError as error:
        assert str(error) == "format: swiss needs a two-role game; 'chinese' has 3 roles"
    else:
        raise AssertionError("a Swiss tournament of a three-role game was scheduled")


def test_nothing_is_queued_before_the_start_time() -> None:
    start = datetime(2026, 5, 1, 12, tzinfo=UTC)
    cup = spec("round_robin", "ab", starts_at=start)
    assert next_matches(cup, 2, [], now=start - timedelta(seconds=1)) == NextMatches()
    assert [m.key for m in next_matches(cup, 2, [], now=start).matches] == ["1/0/0/0-1"]


def test_a_ladder_leaves_a_failed_player_out_under_the_forfeit_rule() -> None:
    ladder = spec("ladder", "abcd")
    answer = next_matches(ladder, 2, [], [], {"b": PlayerStatus(failed="unreachable")})
    assert answer.record == []
    (match,) = answer.matches  # three players left, two seats: one match, without b
    assert "b" not in match.players
    paused = next_matches(
        ladder.model_copy(update={"failure_rule": "pause"}),
        2,
        [],
        [],
        {"b": PlayerStatus(failed="unreachable")},
    )
    assert paused.matches == [] and paused.paused == Pause(player="b", reason="unreachable")


def test_a_ladder_fills_its_free_seats_with_a_smaller_game_when_the_next_one_is_too_big() -> None:
    # Four players, two matches at once: after a two-role match, two players are free,
    # too few for the three-role game (now the least played), so another two-role match
    # starts rather than none.
    firsts = Counter()
    for seed in range(12):
        ladder = spec("ladder", "abcd", games=["chinese"], max_concurrent=2, seed=seed)
        matches = next_matches(ladder, {"ticTacToe": 2, "chinese": 3}, []).matches
        firsts[matches[0].game] += 1
        if matches[0].game == "ticTacToe":
            assert [m.game for m in matches] == ["ticTacToe", "ticTacToe"]
            assert len({p for m in matches for p in m.players}) == 4
        else:  # three of the four are seated: nobody is left to pair
            assert len(matches) == 1
    assert firsts["ticTacToe"] and firsts["chinese"]


def test_a_ladder_of_a_game_with_more_roles_than_it_permutes_still_rotates_the_seats() -> None:
    # Past six roles the seating is chosen role by role (the permutations are too many):
    # each role goes to the free player who has played it least, so that over sixteen
    # matches of eight players everyone sits in every seat, none more than three times.
    ladder = spec("ladder", "abcdefgh")
    service = Service(ladder, 8)
    for _ in range(16):
        (match,) = service.ask().matches
        service.finish(match, [100] + [0] * 7)
    for player in "abcdefgh":
        seats = Counter(r.players.index(player) for r in service.results)
        assert all(1 <= seats[role] <= 3 for role in range(8)), (player, seats)
