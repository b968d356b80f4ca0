"""Literals on atoms that nothing derives are read as the constants they are before
does-grouping, so that they do not keep apart bodies that differ only in the move.

Clingo can emit a literal on an atom of a helper relation that entered its domain but
kept no rule (checkers' frame rule reads ``not single_jump_capture`` for each cell and
move, most of which no jump makes): 856,000 of them in checkers-cylinder-mustjump,
which kept does-grouping from merging any of its 410,000 frame bodies.
"""

from __future__ import annotations

from server.gdl.compiled.estimate import EstimateFloor
from server.gdl.compiled.grounder import GroundProgram
from server.gdl.compiled.network import _group_bodies, underivable_literals

MOVES = (1, 2, 3)
"""The ``does`` atoms of one role."""
CELL = 10
"""A ``true`` atom."""


def program() -> GroundProgram:
    """Head 20 keeps the cell whichever move is played, unless helper 30 holds; the
    helpers 31 and 32 have no rule, and head 21 reads the underivable 33."""
    return GroundProgram(
        choices={*MOVES, CELL},
        rules=[
            (20, (1, CELL, -30)),
            (20, (2, CELL, -31)),
            (20, (3, CELL, -32)),
            (21, (1, 33)),
            (30, (CELL,)),
        ],
    )


def test_the_literals_on_atoms_without_rules_are_found() -> None:
    assert underivable_literals(program()) == {-31, -32, 33}


def test_bodies_apart_only_by_such_literals_are_grouped_and_impossible_ones_dropped() -> None:
    grouping = _group_bodies(program(), dict.fromkeys(MOVES, 0), float("inf"), float("inf"))
    assert grouping.grouped == {(20, 0, (-30, CELL)): [1], (20, 0, (CELL,)): [2, 3]}
    assert grouping.singles == [(30, (CELL,))]  # head 21's body can never hold


def test_the_bound_counted_while_grounding_stays_below_the_estimate() -> None:
    grounded = program()
    floor = EstimateFloor(grounded.choices)
    floor.add(grounded.rules)
    grouping = _group_bodies(grounded, dict.fromkeys(MOVES, 0), float("inf"), float("inf"))
    assert floor.estimate(len(grounded.rules)) <= grouping.estimate
    # the literal on 31 is left out of the bound as well: without that, its body and
    # the one on 32 would count as two
    assert floor.bodies == 3
