"""Factoring: split a rule whose body joins groups of literals that share few variables.

Clingo instantiates a rule once per match of its whole body. blockerParallel keeps a
cell when neither player's move touches it::

    next(cell1 X Y M) :- true(cell1 X Y M), does(blocker, mark(XB YB _ _)),
                         does(crosser, mark(XC YC _ _)),
                         distinctCell(X, Y, XB, YB), distinctCell(X, Y, XC, YC).

Grounded as written, that is one rule per cell, mark and pair of moves: 5.6 million
of the game's 5.7 million. Each move, though, meets the rest of the body only through
the cell it is compared with, so the rule is the same as::

    f1(X, Y) :- does(blocker, mark(XB YB _ _)), distinctCell(X, Y, XB, YB).
    f2(X, Y) :- does(crosser, mark(XC YC _ _)), distinctCell(X, Y, XC, YC).
    next(cell1 X Y M) :- true(cell1 X Y M), f1(X, Y), f2(X, Y).

which grounds a few thousand rules. This is variable elimination (the rule
decomposition of ``lpopt``, Bichler, Morak and Woltran): a variable outside the head
is eliminated by moving the literals it occurs in into a rule of their own, whose
head holds their variables that the rest of the rule still needs. The variable whose
literals hold the fewest variables goes first. A variable of the new rule's negated
and ``distinct`` literals that none of its positive literals binds is bound by a copy of
a positive literal of the rest that does (a guard, :func:`_guards`), so the new rule is
safe. A step is taken only when its new rule holds at least two literals besides the
guards and leaves at least one; a rule is
factored only when its widest piece has at least :data:`MIN_WIDTH_GAIN` variables
fewer than the rule: splitting small rules only adds atoms between the state and the
rule, and the plan's code for the rule is slower for it.

A piece loses the pruning the rest of its rule gave it, so factoring can also add
ground rules: connectFour's lines, factored into chains of pairs of cells, ground 2,407
rules instead of 497. The compiled engine therefore factors only a game whose rules as
written are too large (:meth:`~server.gdl.compiled.engine.CompiledEngine.from_rules`).

The new rules' heads are atoms of fresh relations (:data:`FACTOR_PREFIX`), never
shown: the network holds them as helper atoms, like those of the game's own helper
relations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..terms import RawTerm
from .demand import read_atom
from .relations import term_variables

FACTOR_PREFIX = "#factor"
"""The name of the factored relations before their number: no GDL constant can take it."""

MIN_WIDTH_GAIN = 2
"""The variables a factored rule's widest piece must have fewer than the rule."""

FactoredRule = tuple[RawTerm, tuple[RawTerm, ...]]
"""A head and its body."""


def factor_rule(
    head: RawTerm,
    body: Sequence[RawTerm],
    hidden: frozenset[str],
    new_relation: Callable[[], str],
) -> list[FactoredRule] | None:
    """The rules that ``head :- body`` factors into, the new ones first and the rule
    itself (its body now reading them) last; None when it is not worth factoring.

    ``hidden`` are variables written anonymous, each local to one literal: they are
    left out of the analysis. ``new_relation`` names each new relation.
    """
    pieces, widest, everything = _factored(head, body, hidden, new_relation)
    if len(pieces) == 1 or widest > everything - MIN_WIDTH_GAIN:
        return None
    return pieces


def factor_width(head: RawTerm, body: Sequence[RawTerm], hidden: frozenset[str]) -> int:
    """The variables of the widest rule that ``head :- body`` factors into (those of
    the rule itself when it is not worth factoring); ``hidden`` as for
    :func:`factor_rule`."""
    pieces, widest, everything = _factored(head, body, hidden, lambda: FACTOR_PREFIX)
    if len(pieces) == 1 or widest > everything - MIN_WIDTH_GAIN:
        return everything
    return widest


def _factored(
    head: RawTerm,
    body: Sequence[RawTerm],
    hidden: frozenset[str],
    new_relation: Callable[[], str],
) -> tuple[list[FactoredRule], int, int]:
    """The rules ``head :- body`` factors into (the rule itself last, alone when no step
    is allowed), the variables of the widest of them, and those of the whole rule."""
    variables = [frozenset(term_variables(literal)) - hidden for literal in body]
    kept = frozenset(term_variables(head))
    everything = kept.union(*variables)
    literals = list(zip(body, variables, strict=True))
    pieces: list[FactoredRule] = []
    widest = 0
    while True:
        step = _best_step(literals, kept)
        if step is None:
            break
        inside, guards, shared = step
        atom: RawTerm = new_relation()
        if shared:
            atom = (atom, *sorted(shared))
        piece = [*inside, *guards]
        pieces.append((atom, tuple(literals[index][0] for index in piece)))
        widest = max(widest, len(frozenset().union(*(literals[i][1] for i in piece))))
        first = inside[0]
        literals = [
            (atom, shared) if index == first else literal
            for index, literal in enumerate(literals)
            if index == first or index not in inside
        ]
    widest = max(widest, len(kept.union(*(found for _, found in literals))))
    pieces.append((head, tuple(literal for literal, _ in literals)))
    return pieces, widest, len(everything)


def _best_step(
    literals: list[tuple[RawTerm, frozenset[str]]], kept: frozenset[str]
) -> tuple[list[int], list[int], frozenset[str]] | None:
    """The next variable to eliminate: the indices of the literals it occurs in, of the
    guards the new rule copies from the rest (:func:`_guards`), and the variables the
    new rule shares with the rest of the rule; None when no step is allowed."""
    candidates = sorted(frozenset().union(*(found for _, found in literals)) - kept)
    best: tuple[tuple[int, int, str], list[int], list[int], frozenset[str]] | None = None
    for variable in candidates:
        inside = [index for index, (_, found) in enumerate(literals) if variable in found]
        if len(inside) < 2 or len(inside) == len(literals):
            continue
        guards = _guards(literals, inside)
        if guards is None:
            continue
        inner = frozenset().union(*(literals[index][1] for index in [*inside, *guards]))
        outer = kept.union(
            *(found for index, (_, found) in enumerate(literals) if index not in inside)
        )
        shared = inner & outer
        score = (len(inner), len(shared), variable)
        if best is None or score < best[0]:
            best = (score, inside, guards, shared)
    return None if best is None else (best[1], best[2], best[3])


def _guards(literals: list[tuple[RawTerm, frozenset[str]]], inside: list[int]) -> list[int] | None:
    """The positive literals outside ``inside`` that the new rule must copy so that the
    variables of its negated and ``distinct`` literals are bound (they stay in the rest of
    the rule too): for each unbound variable, the narrowest literal that binds it. None
    when some variable is bound nowhere. crossers3 ranks three robots' step counters
    with ``(not (smaller ?s1 ?s2))``; the rule that eliminates ``?s2`` copies the
    literal that binds ``?s1``."""
    bound = set(_bound(literals[index][0] for index in inside))
    inner = frozenset().union(*(literals[index][1] for index in inside))
    guards: list[int] = []
    for variable in sorted(inner - bound):
        if variable in bound:
            continue
        options = [
            index
            for index, (literal, found) in enumerate(literals)
            if index not in inside and variable in found and variable in _bound([literal])
        ]
        if not options:
            return None
        guard = min(options, key=lambda index: (len(literals[index][1]), index))
        guards.append(guard)
        bound.update(_bound([literals[guard][0]]))
    return guards


def _bound(literals: Iterable[RawTerm]) -> frozenset[str]:
    """The variables that the positive relation literals among ``literals`` bind."""
    found: set[str] = set()
    for literal in literals:
        read = read_atom(literal)
        if read is not None and read[1]:
            found.update(term_variables(read[0]))
    return frozenset(found)


__all__ = ["FACTOR_PREFIX", "MIN_WIDTH_GAIN", "factor_rule", "factor_width"]
