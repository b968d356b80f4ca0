"""Swiss: hand-paired rounds, standings with Buchholz, a forfeit, and the pairing rules."""

from collections import Counter
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_tables import Service, breaks_down, higher_seed_wins, spec

from server.tournament import standings, swiss_plan
from server.tournament.results import results_by_slot


def test_five_players_three_rounds_higher_seed_always_wins() -> None:
    service = Service(spec("swiss", "abcde", rounds=3))
    assert service.play_out(higher_seed_wins(service.spec)).finished
    rounds = list(service.batches)
    # round 1: a-b and c-d in seed order, seats alternating down the tables; e, the
    #   lowest, has the bye
    # round 2: a, c, e on 1 point: a-c (a played first, c second) and e-b; d, lowest
    #   without a bye, has it
    # round 3: a on 2 has met b, and b has met e: a-e, b-d; c has the last bye
    assert [[(m.key, "".join(m.players)) for m in batch] for batch in rounds] == [
        [("1/0/0/0-1", "ab"), ("1/1/0/3-2", "dc")],
        [("2/0/0/2-0", "ca"), ("2/1/0/1-4", "be")],
        [("3/0/0/4-0", "ea"), ("3/1/0/1-3", "bd")],
    ]
    byes = [r.key for r in service.results if r.bye]
    assert byes == ["1/bye/0/4", "2/bye/0/3", "3/bye/0/2"]
    table = [
        (s.rank, s.player, s.points, s.played, s.byes, s.tiebreaks["buchholz"])
        for s in standings(service.spec, service.results)
    ]
    assert table == [
        (1, "a", 3.0, 3, 0, 5.0),  # beat b (2), c (2), e (1)
        (2, "b", 2.0, 3, 0, 5.0),  # met a (3), e (1), d (1)
        (3, "c", 2.0, 2, 1, 4.0),  # met d (1), a (3)
        (4, "e", 1.0, 2, 1, 5.0),  # met b (2), a (3): ahead of d on Buchholz
        (5, "d", 1.0, 2, 1, 4.0),  # met c (2), b (2)
    ]


def test_a_round_is_paired_only_when_the_previous_one_is_finished() -> None:
    service = Service(spec("swiss", "abcd", rounds=2))
    first = service.ask().matches
    assert [m.key for m in first] == ["1/0/0/0-1", "1/1/0/3-2"]
    service.finish(first[0], [100, 0])  # a beats b
    assert service.ask().matches == []
    service.finish(first[1], [100, 0])  # d beats c
    # a and d both played first, so a meets c and d meets b, seats swapped
    assert [m.key for m in service.ask().matches] == ["2/0/0/2-0", "2/1/0/1-3"]


def test_a_failing_player_forfeits_and_is_withdrawn_from_later_rounds() -> None:
    service = Service(spec("swiss", "abcd", rounds=3))

    judge = breaks_down(service.spec, "d", {"CE": 5})

    assert service.play_out(judge).finished
    # round 1: c beats a failing d; round 2 pairs a-c and b-d (forfeited: b wins);
    # round 3: d is withdrawn and a-b, a-c both met, so the leader a takes the bye
    assert [(r.key, "".join(r.players), r.forfeits, r.bye) for r in service.results] == [
        ("1/0/0/0-1", "ab", [], False),
        ("1/1/0/3-2", "dc", [], False),
        ("2/1/0/1-3", "bd", [False, True], False),
        ("2/0/0/2-0", "ca", [], False),
        ("3/bye/0/0", "a", [], True),
        ("3/0/0/1-2", "bc", [], False),
    ]
    assert "2/1/0/1-3" not in service.queued_keys
    table = [
        (s.player, s.points, s.forfeits, s.errors["CE"], s.status)
        for s in standings(service.spec, service.results)
    ]
    assert table == [
        ("a", 3.0, 0, 0, "active"),
        ("b", 2.0, 0, 0, "active"),
        ("c", 1.0, 0, 0, "active"),
        ("d", 0.0, 1, 5, "withdrawn"),
    ]


def _matchings(players: list[str]) -> Iterator[list[tuple[str, str]]]:
    if not players:
        yield []
        return
    first = players[0]
    for i in range(1, len(players)):
        rest = players[1:i] + players[i + 1 :]
        for tail in _matchings(rest):
            yield [(first, players[i]), *tail]


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=2, max_value=8),
    rounds=st.integers(min_value=1, max_value=8),
    data=st.data(),
)
def test_swiss_pairings_avoid_repeats_and_balance_seats_whenever_possible(
    count: int, rounds: int, data: st.DataObject
) -> None:
    names = [f"p{i}" for i in range(count)]
    service = Service(spec("swiss", names, rounds=rounds))
    outcomes = st.sampled_from([[100, 0], [0, 100], [50, 50]])
    assert service.play_out(lambda m: data.draw(outcomes)).finished
    plan = swiss_plan(service.spec, results_by_slot(service.results))
    assert len(plan.rounds) == rounds
    met: Counter[frozenset[str]] = Counter()
    balance: Counter[str] = Counter()
    had_bye: set[str] = set()
    for paired in plan.rounds:
        seated = [p for pair in paired.pairs for p in pair]
        everyone = seated + ([paired.bye] if paired.bye else [])
        assert sorted(everyone) == sorted(names)  # everyone plays or has the bye, once
        if paired.bye:
            assert paired.bye not in had_bye or had_bye >= set(names)

        def cost(pairs: list[tuple[str, str]]) -> tuple[int, int]:
            repeats = sum(met[frozenset(p)] > 0 for p in pairs)
            clashes = sum(balance[a] * balance[b] > 0 for a, b in pairs)
            return repeats, clashes

        fresh = [p for p in names if p not in had_bye] or names
        candidates = fresh if count % 2 else [None]
        best = min(
            cost(m) for bye in candidates for m in _matchings([p for p in names if p != bye])
        )
        assert cost(paired.pairs) == best
        before = Counter(balance)
        for a, b in paired.pairs:
            met[frozenset((a, b))] += 1
            balance[a] += 1
            balance[b] -= 1
            if before[a] * before[b] <= 0:  # no clash: both move towards balance
                assert abs(balance[a]) <= max(1, abs(before[a]))
                assert abs(balance[b]) <= max(1, abs(before[b]))
        if paired.bye:
            had_bye.add(paired.bye)
    keys = [m.key for m in plan.matches]
    assert len(keys) == len(set(keys)) == len(service.queued_keys)
