"""Single elimination: the bracket, series, tie-breaks, a forfeit, and its invariants."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_tables import Service, breaks_down, higher_seed_wins, spec

from server.tournament import PlannedMatch, bracket_order, elimination_plan, standings
from server.tournament.results import results_by_slot


def test_bracket_order_meets_the_top_two_seeds_only_in_the_final() -> None:
    assert bracket_order(2) == [1, 2]
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


def test_six_players_best_of_three_top_seeds_get_byes() -> None:
    service = Service(spec("single_elimination", "abcdef", best_of=3))
    assert service.play_out(higher_seed_wins(service.spec)).finished
    # bracket of 8: a and b have byes; d-e and c-f; seats alternate in each series,
    # and 2-0 ends a best-of-three
    assert [[(m.key, "".join(m.players)) for m in batch] for batch in service.batches] == [
        [("1/1/0/3-4", "de"), ("1/3/0/2-5", "cf")],
        [("1/1/1/4-3", "ed"), ("1/3/1/5-2", "fc")],
        [("2/0/0/0-3", "ad"), ("2/1/0/1-2", "bc")],
        [("2/0/1/3-0", "da"), ("2/1/1/2-1", "cb")],
        [("3/0/0/0-1", "ab")],
        [("3/0/1/1-0", "ba")],
    ]
    table = [
        (s.rank, s.player, s.points, s.tiebreaks["round_reached"], s.status)
        for s in standings(service.spec, service.results)
    ]
    assert table == [
        (1, "a", 4.0, 4, "winner"),
        (2, "b", 2.0, 3, "eliminated"),
        (3, "c", 2.0, 2, "eliminated"),
        (4, "d", 2.0, 2, "eliminated"),
        (5, "e", 0.0, 1, "eliminated"),
        (6, "f", 0.0, 1, "eliminated"),
    ]


H, L, D = "high", "low", "draw"


@pytest.mark.parametrize(
    ("best_of", "tiebreak", "extra", "games", "played", "champion"),
    [
        (3, "extra_matches", 2, [L, L], 2, "b"),  # 2-0: the third is not played
        (3, "extra_matches", 2, [H, L, L], 3, "b"),
        (3, "extra_matches", 2, [D, H, D], 3, "a"),  # 2-1 on points
        (2, "extra_matches", 2, [H, L, D, L], 4, "b"),  # level: extra draw, extra won
        (2, "extra_matches", 2, [D, D, D, D], 4, "a"),  # extras drawn up to the cap
        (2, "extra_matches", 0, [H, L], 2, "a"),  # no extras allowed: higher seed
        (2, "higher_seed", 2, [L, H], 2, "a"),
        (1, "extra_matches", 1, [D, L], 2, "b"),
    ],
)
def test_a_series_and_its_tie_break(
    best_of: int, tiebreak: str, extra: int, games: list[str], played: int, champion: str
) -> None:
    service = Service(
        spec(
            "single_elimination",
            "ab",
            best_of=best_of,
            elimination_tiebreak=tiebreak,
            max_extra_matches=extra,
        )
    )
    script = iter(games)

    def judge(match: PlannedMatch) -> list[int]:
        winner = {H: "a", L: "b", D: None}[next(script)]
        return [50 if winner is None else 100 if p == winner else 0 for p in match.players]

    assert service.play_out(judge).finished
    assert len(service.queued_keys) == played
    assert [m.players[0] for m in (b[0] for b in service.batches)] == [
        "ab"[i % 2] for i in range(played)
    ]
    plan = elimination_plan(service.spec, results_by_slot(service.results))
    assert plan.champion == champion


def test_a_failing_player_forfeits_the_rest_of_its_series() -> None:
    service = Service(spec("single_elimination", "abcd", best_of=3))

    judge = breaks_down(service.spec, "d", {"TO": 3, "IL": 2})

    assert service.play_out(judge).finished
    forfeits = [(r.key, r.players, r.goals) for r in service.results if any(r.forfeits)]
    assert forfeits == [("1/0/1/3-0", ["d", "a"], [0, 100])]
    table = {
        s.player: (s.rank, s.played, s.forfeits, s.errors, s.status)
        for s in standings(service.spec, service.results)
    }
    assert table["a"] == (1, 4, 0, {"TO": 0, "CE": 0, "IL": 0}, "winner")
    assert table["d"] == (4, 2, 1, {"TO": 3, "CE": 0, "IL": 2}, "withdrawn")


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=2, max_value=9),
    best_of=st.integers(min_value=1, max_value=3),
    data=st.data(),
)
def test_the_bracket_has_one_winner_and_each_round_halves(
    count: int, best_of: int, data: st.DataObject
) -> None:
    names = [f"p{i}" for i in range(count)]
    service = Service(spec("single_elimination", names, best_of=best_of))
    outcomes = st.sampled_from([[100, 0], [0, 100], [50, 50]])
    assert service.play_out(lambda m: data.draw(outcomes)).finished
    plan = elimination_plan(service.spec, results_by_slot(service.results))
    size = 2 ** math.ceil(math.log2(count))
    assert len(plan.rounds) == int(math.log2(size))
    entrants = set(names)
    for number, series_round in enumerate(plan.rounds, start=1):
        assert len(series_round) == size >> number  # each round halves
        players = [p for s in series_round for p in (s.high, s.low) if p is not None]
        assert sorted(players) == sorted(entrants)  # nobody twice, nobody lost
        winners = {s.winner for s in series_round}
        assert all(s.winner in (s.high, s.low) for s in series_round)
        entrants = {w for w in winners if w is not None}
    assert entrants == {plan.champion}
    losers = [p for p in names if p != plan.champion]
    table = standings(service.spec, service.results)
    assert table[0].player == plan.champion and table[0].status == "winner"
    assert sorted(s.player for s in table if s.status == "eliminated") == sorted(losers)
    # seats alternate within every series
    for m in (m for batch in service.batches for m in batch):
        high = min(m.players, key=names.index)
        assert (m.players[0] == high) == (m.game_index % 2 == 0)
