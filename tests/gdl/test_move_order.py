"""The interpreter hands out legal moves in the public order, from ranks kept between
states: the order must be exactly that of ``sort_key``, however the moves arrive."""

from __future__ import annotations

import random

import pytest

from server.gdl.interpreter import move_order
from server.gdl.interpreter.move_order import BULK, MoveOrder
from server.gdl.terms import sort_key


def random_move(rng: random.Random) -> object:
    kind = rng.randrange(4)
    if kind == 0:
        return str(rng.randrange(200))
    if kind == 1:
        return rng.choice(["noop", "pass", "a", "b", "zz"])
    if kind == 2:
        return ("mark", str(rng.randrange(9)), str(rng.randrange(9)))
    return ("move", ("cell", str(rng.randrange(5)), "x"), str(rng.randrange(30)))


def test_moves_come_out_in_sort_key_order_whether_few_or_many_arrive_at_once() -> None:
    rng = random.Random(7)
    order = MoveOrder()
    for batch in range(300):
        size = rng.choice([1, 2, 5, BULK + 10])
        moves = list({random_move(rng) for _ in range(size)})
        assert order.sort(list(moves)) == sorted(moves, key=sort_key), batch
    assert len(order) > 400


def test_a_gap_that_runs_out_renumbers_and_keeps_the_order() -> None:
    order = MoveOrder()
    low, high = "0", "999999"
    order.sort([low, high])
    # numbers between the two, each inserted just above the last: halves one gap each time
    inserted = [str(n) for n in range(1, 60)]
    for move in inserted:
        order.sort([move])
    everything = [low, high, *inserted]
    assert order.sort(list(reversed(everything))) == sorted(everything, key=sort_key)
    ranks = [order.tables[0][move] for move in sorted(everything, key=sort_key)]
    assert ranks == sorted(set(ranks))


def test_each_rank_reads_back_its_moves_public_term_after_inserts_merges_and_renumbers() -> None:
    rng = random.Random(11)
    order = MoveOrder()
    order.sort(["0", "999999"])
    for batch in range(200):
        size = rng.choice([1, 1, 3, BULK + 5])
        order.sort(list({random_move(rng) for _ in range(size)}))
        order.sort([str(batch + 1)])  # just above the last: halves one gap each time
    rank, public, by_rank = order.tables
    assert len(rank) == len(public) == len(by_rank) == len(order)
    for move, place in rank.items():
        assert by_rank[place] is public[move]
    # small enough for the integers CPython compares fastest
    assert all(abs(place) < 2**30 for place in rank.values())


def test_past_the_limit_the_order_starts_again_and_still_sorts() -> None:
    order = MoveOrder(limit=10)
    first = [str(n) for n in range(8)]
    assert order.sort(list(reversed(first))) == first
    second = [f"m{n}" for n in range(6)]
    assert order.sort(list(reversed(second))) == second
    assert len(order) == 6


def test_many_new_moves_at_once_take_ranks_in_the_gaps_and_the_moves_kept_keep_theirs() -> None:
    order = MoveOrder()
    rank = order.ranked(["1", "3", "500"])[0]
    before = dict(rank)
    many = [str(n) for n in range(100, 100 + 2 * BULK)]  # between "3" and "500", and above
    order.ranked([*many, "2", "9999"])
    assert order.tables[0] is rank  # no renumbering: the same dictionary, grown
    assert {move: rank[move] for move in before} == before
    everything = ["1", "2", "3", "500", "9999", *many]
    assert order.sort(list(reversed(everything))) == sorted(everything, key=sort_key)


def test_a_gap_too_small_for_the_moves_falling_in_it_renumbers_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(move_order, "SPACING", 4)
    order = MoveOrder()
    order.sort(["0", "999999"])
    held = order.tables[0]
    many = [str(n) for n in range(1, 2 * BULK)]
    everything = ["0", "999999", *many]
    assert order.sort(list(reversed(everything))) == sorted(everything, key=sort_key)
    assert order.tables[0] is not held
    ranks = [order.tables[0][move] for move in sorted(everything, key=sort_key)]
    assert ranks == [4 * (at + 1) for at in range(len(everything))]


def test_dictionaries_a_reader_holds_stay_consistent_after_a_renumbering() -> None:
    order = MoveOrder()
    order.sort(["0", "999999"])
    held = order.tables[0]
    before = dict(held)
    for n in range(1, 60):  # each just above the last: one gap halved until it runs out
        order.sort([str(n)])
    assert order.tables[0] is not held  # renumbered into a new dictionary
    assert {move: held[move] for move in before} == before  # the reader's ranks unchanged
