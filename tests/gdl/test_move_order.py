"""The interpreter hands out legal moves in the public order, from ranks kept between
states: the order must be exactly that of ``sort_key``, however the moves arrive."""

from __future__ import annotations

import random

from server.gdl import Game
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


def test_dictionaries_a_reader_holds_stay_consistent_after_a_renumbering() -> None:
    order = MoveOrder()
    rank = order.ranked(["1", "3"])[0]
    before = dict(rank)
    order.ranked([str(n) for n in range(100, 100 + 2 * BULK)])  # a bulk merge renumbers
    assert rank == before  # the reader's dictionary was replaced, not changed


def test_the_interpreters_legal_moves_are_in_sort_key_order() -> None:
    rules = """
    (role white) (role black)
    (init (control white))
    (<= (legal ?p (mark ?x ?y)) (role ?p) (true (control ?p)) (index ?x) (index ?y))
    (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
    (<= (next (control black)) (true (control white)))
    (<= (next (control white)) (true (control black)))
    (index 1) (index 2) (index 10) (index 3)
    (<= terminal (true (control black)))
    (goal white 50) (goal black 50)
    """
    game = Game.from_text(rules, engine="interpreter")
    state = game.initial_state()
    moves = game.legal_moves(state, "white")
    assert [str(move) for move in moves] == [
        f"(mark {x} {y})" for x in (1, 2, 3, 10) for y in (1, 2, 3, 10)
    ]
    assert game.legal_moves(state, "black") == ["noop"]
