"""Complemented move tests: a frame rule that asks for a move *not* touching a cell,
rewritten to ask whether the move played touches it.

Board games keep a cell as it is when the move played leaves it alone. skirmish says::

    next(location X Y P) :- true(location X Y P), role(R),
                            does(R, (move X1 Y1 X2 Y2)),
                            distinctCell(X, Y, X1, Y1), distinctCell(X, Y, X2, Y2).

Grounded as written, that is one rule per fluent and move: 2.9 million of the game's
3 million ground rules, which does-grouping then merges back into one test per fluent.
Each role plays exactly one move in a step, so "the role plays a move of this shape
that leaves the cell alone" is "the role plays a move of this shape, and not one of
this shape that touches the cell"::

    shaped(R) :- does(R, (move X1 Y1 X2 Y2)).
    cells(X, Y) :- true(location X Y P), role(R).
    touched(R, X, Y) :- does(R, (move X1 Y1 X2 Y2)), cells(X, Y), not distinctCell(X, Y, X1, Y1).
    touched(R, X, Y) :- does(R, (move X1 Y1 X2 Y2)), cells(X, Y), not distinctCell(X, Y, X2, Y2).
    next(location X Y P) :- true(location X Y P), role(R), shaped(R), not touched(R, X, Y).

The grounder still visits every pair of move and cell, but inside clingo, and emits
only the pairs where a move touches its cell: a few thousand ground rules. ``cells``
only binds ``X`` and ``Y`` for the grounder and is read as true afterwards
(:attr:`Rewritten.guard`), so ``touched`` tests moves alone and the next-state tables
keep the cell per move, as they did for the rule as written.

A ``next`` rule is rewritten when its body has one ``does`` literal, its move has at
least :data:`MIN_MOVE_VARIABLES` variables that occur nowhere else but in literals
that test it (the *tests*: literals holding a move variable), neither the head nor the
other literals (the *rest*) hold a move variable, the tests hold no variable that is
in neither the move nor the rest, and the rest binds the variables the tests share
with it by positive literals. A test on the state is kept as well (checkers'
``not single_jump_capture``): its negation is read on the same state. Rules of any
other head are left alone, so that the new relations, which read ``does``, are read
by ``next`` only and the program stays stratified.

A rule with a test on the state is rewritten only when a game is too large as written
(the compiled engine's later attempts, :meth:`~.engine.CompiledEngine.from_rules`): its
``touched`` reads the state as well as the moves, so the next-state code computes it for each
cell, where the rule as written was mostly kept per move in the next-state tables.
checkers' frame rule reads ``not single_jump_capture``: checkersTiny ran 65,000
transitions a second as written and 48,000 rewritten, while the larger checkers games,
too large as written at any start clock, compile rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..terms import RawTerm
from .demand import read_atom
from .relations import RelationKey, relation_key, term_variables

MIN_MOVE_VARIABLES = 3
"""The variables a move must have for its rule to be rewritten: a move with fewer
(tic-tac-toe's ``mark``) grounds few rules as written, and its rule's code reads one
membership test where the rewritten one would read three atoms."""

DOES: frozenset[RelationKey] = frozenset({("does", 2, True)})
NEXT_KEY = ("next", 1, True)


class Rewritten(NamedTuple):
    """The rules that replace a rule, each a head and its body (the new relations'
    first), and the atom of the guard relation among them."""

    rules: list[tuple[RawTerm, tuple[RawTerm, ...]]]
    guard: RawTerm
    """``cells`` above: it binds the shared variables for the grounder only, and is read
    as true afterwards (like a demand atom, :func:`~.demand.drop_demand`). ``touched`` is
    read only where the rest of the rule holds, and there the guard holds too; without
    it, ``touched`` tests moves alone, which the next-state tables read per move."""


def complement_move_test(
    head: RawTerm,
    body: Sequence[RawTerm],
    new_relation: Callable[[], str],
    state_tests: frozenset[RelationKey] | None = None,
) -> Rewritten | None:
    """The rules that replace ``head :- body``, or None when the rule is not of the
    shape this rewrites. ``new_relation`` names each new relation. ``state_tests``,
    when given, are the relations that depend on the state: a rule with a test on one
    of them is left as it is (see the module's documentation)."""
    if relation_key(head) != NEXT_KEY:
        return None
    moves = [index for index, literal in enumerate(body) if _reads(literal, DOES)]
    if len(moves) != 1 or not _is_positive(body[moves[0]]):
        return None
    does = body[moves[0]]
    assert isinstance(does, tuple)
    role_variables = set(term_variables(does[1]))
    move_variables = set(term_variables(does[2])) - role_variables
    if len(move_variables) < MIN_MOVE_VARIABLES or move_variables & set(term_variables(head)):
        return None
    tests: list[RawTerm] = []
    rest: list[RawTerm] = []
    for index, literal in enumerate(body):
        if index != moves[0]:
            reads_the_move = move_variables.intersection(term_variables(literal))
            (tests if reads_the_move else rest).append(literal)
    if not tests:
        return None
    if state_tests is not None and any(_reads(test, state_tests) for test in tests):
        return None
    rest_variables = {name for literal in rest for name in term_variables(literal)}
    linked = {name for literal in tests for name in term_variables(literal)} - move_variables
    linked -= role_variables
    if not linked or not linked <= rest_variables:
        return None  # nothing to share (as written it grounds once per move), or unbound
    binders = [literal for literal in rest if _is_positive(literal)]
    bound = {name for literal in binders for name in term_variables(literal)}
    if not linked <= bound:
        return None
    link = tuple(sorted(linked))
    roles = tuple(sorted(role_variables))
    shaped: RawTerm = (new_relation(), *roles) if roles else new_relation()
    cells: RawTerm = (new_relation(), *link)
    touched: RawTerm = (new_relation(), *roles, *link)
    rules: list[tuple[RawTerm, tuple[RawTerm, ...]]] = [(shaped, (does,)), (cells, tuple(binders))]
    rules.extend((touched, (does, cells, _negated(test))) for test in tests)
    rules.append((head, (*rest, shaped, ("not", touched))))
    return Rewritten(rules, cells)


def _reads(literal: RawTerm, relations: frozenset[RelationKey]) -> bool:
    """True when ``literal`` reads one of ``relations`` (positive or under ``not``)."""
    found = read_atom(literal)
    return found is not None and relation_key(found[0]) in relations


def _is_positive(literal: RawTerm) -> bool:
    """True for a relation atom (not a negation, not ``distinct``)."""
    found = read_atom(literal)
    return found is not None and found[1]


def _negated(literal: RawTerm) -> RawTerm:
    if isinstance(literal, tuple) and literal[0] == "not" and len(literal) == 2:
        return literal[1]
    return ("not", literal)


__all__ = ["MIN_MOVE_VARIABLES", "Rewritten", "complement_move_test"]
