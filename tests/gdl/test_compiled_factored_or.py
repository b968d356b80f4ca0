"""Wide ORs are written factored: the same truth, far fewer tests per evaluation."""

from __future__ import annotations

import random

from server.gdl.compiled.codegen import or_code
from server.gdl.compiled.plan import Conj

SIDE = 30
"""Positions of each of two pieces: a join of the two is SIDE * SIDE bodies."""


class CountingState(int):
    """A state that counts the bit tests made on it (every test is ``s & number``)."""

    tests = 0

    def __and__(self, other: int) -> int:
        CountingState.tests += 1
        return int(self) & other


def piece_join() -> list[Conj]:
    """A goal as tron writes it: the first piece on a square i whose mark is off, the
    second piece on another square j whose mark is on, for every such i and j (bits:
    first piece on i, second piece on i, mark on i)."""

    def bit(kind: int, square: int) -> int:
        return 1 << (3 * square + kind)

    return [
        frozenset({("p", bit(0, i)), ("n", bit(2, i)), ("p", bit(1, j)), ("p", bit(2, j))})
        for i in range(SIDE)
        for j in range(SIDE)
        if j != i
    ]


def holds(bodies: list[Conj], state: int) -> bool:
    """The OR of the bodies, literal by literal."""
    return any(
        all((state & value == value) if kind == "p" else not state & value for kind, value in body)
        for body in bodies
    )


def evaluate(expression: str, state: int) -> tuple[bool, int]:
    """The value of generated code on ``state`` and the bit tests it made."""
    CountingState.tests = 0
    value = eval(expression, {"s": CountingState(state)})  # noqa: S307
    return bool(value), CountingState.tests


def random_state(rng: random.Random) -> int:
    """The two pieces on random squares, a random third of the squares marked."""
    state = 1 << (3 * rng.randrange(SIDE)) | 1 << (3 * rng.randrange(SIDE) + 1)
    for square in range(SIDE):
        if rng.random() < 0.33:
            state |= 1 << (3 * square + 2)
    return state


def test_a_wide_or_gives_the_truth_of_its_bodies() -> None:
    bodies = piece_join()
    expression = or_code(bodies, "s", str)
    rng = random.Random(7)
    states = [random_state(rng) for _ in range(300)] + [0, (1 << 3 * SIDE) - 1]
    assert {holds(bodies, state) for state in states} == {False, True}
    for state in states:
        assert evaluate(expression, state)[0] == holds(bodies, state)


def test_a_join_of_two_pieces_costs_tests_per_position_not_per_pair() -> None:
    expression = or_code(piece_join(), "s", str)
    rng = random.Random(11)
    most = max(evaluate(expression, random_state(rng))[1] for _ in range(200))
    assert most <= 4 * SIDE  # the flat OR makes up to SIDE * (SIDE - 1) = 870 tests


def test_a_narrow_or_stays_flat() -> None:
    bodies = piece_join()[:3]
    assert or_code(bodies, "s", str).count(" or ") == 2
