"""Round robin: the schedule, standings from a table of results, a forfeiting player."""

from collections import Counter
from itertools import combinations, permutations

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_tables import Service, breaks_down, result, spec

from server.tournament import round_robin_schedule, standings


def test_four_players_play_every_seating_in_six_rounds() -> None:
    schedule = round_robin_schedule(spec("round_robin", "abcd"), roles=2)
    assert [(m.round, m.key, "".join(m.players)) for m in schedule] == [
        (1, "1/0/0/0-1", "ab"),
        (1, "1/1/0/2-3", "cd"),
        (2, "2/0/0/1-0", "ba"),
        (2, "2/1/0/3-2", "dc"),
        (3, "3/0/0/0-2", "ac"),
        (3, "3/1/0/1-3", "bd"),
        (4, "4/0/0/2-0", "ca"),
        (4, "4/1/0/3-1", "db"),
        (5, "5/0/0/0-3", "ad"),
        (5, "5/1/0/1-2", "bc"),
        (6, "6/0/0/3-0", "da"),
        (6, "6/1/0/2-1", "cb"),
    ]


def test_two_matches_per_seating_play_each_seating_in_consecutive_rounds() -> None:
    schedule = round_robin_schedule(spec("round_robin", "abc", matches_per_seating=2), roles=2)
    assert [(m.round, m.key) for m in schedule[:4]] == [
        (1, "1/0/0/0-1"),
        (2, "2/0/1/0-1"),
        (3, "3/0/0/1-0"),
        (4, "4/0/1/1-0"),
    ]
    assert len(schedule) == 12


def test_three_role_game_seats_every_permutation_of_every_trio() -> None:
    schedule = round_robin_schedule(spec("round_robin", "abcd"), roles=3)
    seatings = Counter("".join(m.players) for m in schedule)
    expected = {"".join(p) for trio in combinations("abcd", 3) for p in permutations(trio)}
    assert set(seatings) == expected and set(seatings.values()) == {1}
    assert len(schedule) == 24
    for player in "abcd":
        roles = Counter(m.players.index(player) for m in schedule if player in m.players)
        assert roles == {0: 6, 1: 6, 2: 6}
    # four players, three seats: one match per round
    assert [m.round for m in schedule] == list(range(1, 25))


def test_three_role_standings_score_the_share_of_opponents_beaten() -> None:
    service = Service(spec("round_robin", "abcd"), roles=3)
    answer = service.play_out(
        lambda m: [{"a": 100, "b": 50, "c": 50, "d": 0}[p] for p in m.players]
    )
    assert answer.finished
    table = [
        (s.player, s.points, s.played, s.wins, s.draws, s.losses)
        for s in standings(service.spec, service.results)
    ]
    # each player sits in 18 matches (three trios, six seatings each). a beats both
    # opponents every time (1 point), d neither (0); b scores 0.25 with a and c (tie with
    # c, loss to a), 0.5 with a and d, 0.75 with c and d: 6 * 1.5 = 9, every one a draw
    assert table == [
        ("a", 18.0, 18, 18, 0, 0),
        ("b", 9.0, 18, 0, 18, 0),
        ("c", 9.0, 18, 0, 18, 0),
        ("d", 0.0, 18, 0, 0, 18),
    ]


def test_standings_from_a_table_of_results() -> None:
    cup = spec("round_robin", "abcd")
    goals = {
        "1/0/0/0-1": [100, 0],  # a beats b
        "1/1/0/2-3": [50, 50],  # c draws d
        "2/0/0/1-0": [0, 100],  # a beats b
        "2/1/0/3-2": [50, 50],  # d draws c
        "3/0/0/0-2": [100, 0],  # a beats c
        "3/1/0/1-3": [100, 0],  # b beats d
        "4/0/0/2-0": [0, 100],  # a beats c
        "4/1/0/3-1": [0, 100],  # b beats d
        "5/0/0/0-3": [50, 50],  # a draws d
        "5/1/0/1-2": [0, 100],  # c beats b
        "6/0/0/3-0": [50, 50],  # d draws a
        "6/1/0/2-1": [50, 50],  # c draws b
    }
    schedule = {m.key: m for m in round_robin_schedule(cup, 2)}
    results = [result(key, schedule[key].players, g) for key, g in goals.items()]
    table = [
        (
            s.rank,
            s.player,
            s.points,
            s.played,
            s.wins,
            s.draws,
            s.losses,
            s.tiebreaks["head_to_head"],
        )
        for s in standings(cup, results)
    ]
    shape = standings(cup, results)[0].model_dump()
    assert list(shape) == [
        "player", "rank", "points", "played", "wins", "draws", "losses", "byes", "forfeits",
        "tiebreaks", "errors", "status",
    ]  # fmt: skip
    # b and c are level on 2.5; c took 1.5 of the 2 points between them, so c is second
    # although b has more wins and the higher seed
    assert table == [
        (1, "a", 5.0, 6, 4, 2, 0, 0.0),
        (2, "c", 2.5, 6, 1, 3, 2, 1.5),
        (3, "b", 2.5, 6, 2, 1, 3, 0.5),
        (4, "d", 2.0, 6, 0, 4, 2, 0.0),
    ]


def test_a_player_that_fails_forfeits_its_remaining_matches() -> None:
    service = Service(spec("round_robin", "abcd"))

    judge = breaks_down(service.spec, "d", {"TO": 5})  # from its first match on

    answer = service.play_out(judge)
    assert answer.finished
    forfeits = sorted(r.key for r in service.results if any(r.forfeits))
    # d played 1/1/0/2-3 and failed; its five other matches are forfeited at once
    assert forfeits == ["2/1/0/3-2", "3/1/0/1-3", "4/1/0/3-1", "5/0/0/0-3", "6/0/0/3-0"]
    assert all(k not in service.queued_keys for k in forfeits)
    table = {
        s.player: (s.points, s.played, s.wins, s.losses, s.forfeits, s.errors["TO"], s.status)
        for s in standings(service.spec, service.results)
    }
    assert table["d"] == (0.0, 6, 0, 6, 5, 5, "withdrawn")
    assert table["a"] == (6.0, 6, 6, 0, 0, 0, "active")
    assert table["c"] == (2.0, 6, 2, 4, 0, 0, "active")


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(min_value=2, max_value=7),
    roles=st.integers(min_value=2, max_value=3),
    repeats=st.integers(min_value=1, max_value=3),
)
def test_every_seating_is_scheduled_exactly_n_times_and_nobody_plays_twice_a_round(
    players: int, roles: int, repeats: int
) -> None:
    names = [f"p{i}" for i in range(players)]
    if roles > players:
        return
    schedule = round_robin_schedule(spec("round_robin", names, matches_per_seating=repeats), roles)
    seatings = Counter(tuple(m.players) for m in schedule)
    expected = {p for subset in combinations(names, roles) for p in permutations(subset)}
    assert set(seatings) == expected
    assert set(seatings.values()) == {repeats}
    assert len({m.key for m in schedule}) == len(schedule)
    by_round: dict[int, list[str]] = {}
    for m in schedule:
        by_round.setdefault(m.round, []).extend(m.players)
    for seated in by_round.values():
        assert len(seated) == len(set(seated))
    assert [m.round for m in schedule] == sorted(m.round for m in schedule)
