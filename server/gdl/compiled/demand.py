"""Demand: ground a relation only for the arguments the rules that read it ask about.

Clingo grounds bottom-up: a helper relation on the state is instantiated for every
combination of arguments the state could give it, even when the rules that read it
ask about a handful. chineseCheckers4 counts the stones on three home cells with
``(count f1 g1 g2 yellow ?payoff)``; grounded in full, ``count`` ranges over every
triple of cells, 732,000 ground rules of the game's 838,000, and crissrace's
four-cell ``count`` 2.2 million of its 2.2 million.

A relation is *demanded* when every literal that reads it (positive or under ``not``)
fixes the same argument positions: a position is fixed at a literal when its term is
ground or its variables occur in another positive relation literal of the same body.
Each rule of a demanded relation then also requires a demand atom on its fixed
positions, and each literal that reads it gives a rule deriving that demand atom from
the body's other positive literals that bind those positions (and from the demand
atom of the reading rule's own head, when that relation is demanded too). This is the
magic-set transformation of deductive databases, with the demand over-approximated:
it ignores negation and leaves out literals, so it is derived at least wherever the
reading literal could be grounded.

Grounding is an over-approximation as well: every instance of a reading rule that
clingo grounds has all its positive literals possibly true, so the demand atom of its
literal is grounded, and the relation's instance is grounded whenever it could hold.
The demand atoms themselves are then read as true (:func:`drop_demand`): the ground
program is the original one, restricted to the instances something can ask about.

Only relations read with a ground argument somewhere are demanded: that is where the
demand is narrower than what the state gives anyway, and elsewhere the demand rules
would only add grounding work.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..terms import RawTerm
from .relations import KEYWORD_PREDICATES, RelationKey, relation_key, term_variables

KEYWORD_NAMES = frozenset(name for name, _ in KEYWORD_PREDICATES)
"""Relations never demanded: the engine reads them in full, or they are the inputs."""

DEMAND_PREFIX = "m"
"""Prepended to a relation's predicate name to name its demand atoms (``r22`` to
``mr22``); no generated predicate name starts with it."""


def read_atom(literal: RawTerm) -> tuple[RawTerm, bool] | None:
    """The relation atom a body literal reads and whether it is positive; None for
    ``distinct`` and its negation."""
    if isinstance(literal, tuple) and literal[0] == "distinct":
        return None
    if isinstance(literal, tuple) and literal[0] == "not" and len(literal) == 2:
        inner = literal[1]
        if isinstance(inner, tuple) and inner[0] == "distinct":
            return None
        return inner, False
    return literal, True


def _arguments(atom: RawTerm) -> tuple[RawTerm, ...]:
    return () if isinstance(atom, str) else atom[1:]


def binding_literals(
    body: Sequence[RawTerm], skip: int, demanded: Collection[RelationKey]
) -> list[tuple[int, set[str]]]:
    """The literals of ``body`` that may bind a demand atom's arguments, by index, with
    their variables: the positive relation literals other than literal ``skip`` that do
    not read a ``demanded`` relation (whose own instances wait for their demand, so
    that two reads in one body would each wait for the other)."""
    found = []
    for index, literal in enumerate(body):
        read = read_atom(literal)
        if index == skip or read is None or not read[1] or relation_key(read[0]) in demanded:
            continue
        found.append((index, set(term_variables(read[0]))))
    return found


def demanded_positions(
    bodies: Sequence[Sequence[RawTerm]], dynamic: frozenset[RelationKey]
) -> dict[RelationKey, tuple[int, ...]]:
    """The relations worth demanding, with the argument positions every literal that
    reads them fixes. ``bodies``: the rule bodies, ``or`` expanded; ``dynamic``: the
    relations that depend on the state or the moves (the others ground to facts).

    Reads of demanded relations bind nothing, so the set is found by dropping the
    relations left without a ground fixed position until none is (dropping one only
    adds binders to the others)."""
    demanded = {
        key
        for body in bodies
        for read in map(read_atom, body)
        if read is not None
        for key in [relation_key(read[0])]
        if key in dynamic and key[0] not in KEYWORD_NAMES and key[1] > 0
    }
    while True:
        fixed, ground_at = _fixed_positions(bodies, demanded)
        kept = {key for key in demanded if fixed[key] & ground_at[key]}
        if kept == demanded:
            return {key: tuple(sorted(fixed[key])) for key in sorted(kept)}
        demanded = kept


def _fixed_positions(
    bodies: Sequence[Sequence[RawTerm]], demanded: set[RelationKey]
) -> tuple[dict[RelationKey, set[int]], dict[RelationKey, set[int]]]:
    """For each ``demanded`` relation: the positions every read of it fixes, and those
    some read gives a ground term."""
    fixed: dict[RelationKey, set[int]] = {}
    ground_at: dict[RelationKey, set[int]] = {}
    for body in bodies:
        for index, literal in enumerate(body):
            read = read_atom(literal)
            if read is None or relation_key(read[0]) not in demanded:
                continue
            atom = read[0]
            key = relation_key(atom)
            bound: set[str] = set()
            for _, binding in binding_literals(body, index, demanded):
                bound |= binding
            here: set[int] = set()
            ground: set[int] = set()
            for position, argument in enumerate(_arguments(atom)):
                inside = term_variables(argument)
                if not inside:
                    ground.add(position)
                if bound.issuperset(inside):
                    here.add(position)
            fixed[key] = fixed[key] & here if key in fixed else here
            ground_at.setdefault(key, set()).update(ground)
    return fixed, ground_at


def demand_arguments(atom: RawTerm, positions: Sequence[int]) -> tuple[RawTerm, ...]:
    """The arguments of ``atom`` at the demanded ``positions``."""
    arguments = _arguments(atom)
    return tuple(arguments[position] for position in positions)


def demand_body(
    body: Sequence[RawTerm],
    index: int,
    arguments: Sequence[RawTerm],
    demanded: Collection[RelationKey],
) -> list[int]:
    """The indices of the literals of ``body`` that bind the variables of ``arguments``
    (:func:`binding_literals`): the body of the demand rule of literal ``index``."""
    wanted: set[str] = set()
    for argument in arguments:
        wanted.update(term_variables(argument))
    return [
        other for other, variables in binding_literals(body, index, demanded) if variables & wanted
    ]


def drop_demand(
    rules: list[tuple[int, tuple[int, ...]]], demand_atoms: set[int]
) -> list[tuple[int, tuple[int, ...]]]:
    """The ground rules with the demand atoms read as true: their rules dropped, and
    their (positive) literals left out of the other bodies."""
    if not demand_atoms:
        return rules
    kept = []
    for head, body in rules:
        if head in demand_atoms:
            continue
        if not demand_atoms.isdisjoint(body):
            body = tuple(literal for literal in body if literal not in demand_atoms)
        kept.append((head, body))
    return kept


__all__ = [
    "DEMAND_PREFIX",
    "demand_arguments",
    "demand_body",
    "demanded_positions",
    "drop_demand",
    "read_atom",
]
