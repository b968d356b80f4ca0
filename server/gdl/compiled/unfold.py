"""Unfolding: write a static helper's one rule in place of the literals that read it.

Factoring (:mod:`.factor`) splits a rule at the variables its literals share, but a
helper relation that ties them all together hides the variables it joins on. quarto
finds a line of four pieces sharing an attribute with::

    row :- index(Y), true(cell 1 Y P1), true(cell 2 Y P2), true(cell 3 Y P3),
           true(cell 4 Y P4), set(P1, P2, P3, P4).
    set(P1, P2, P3, P4) :- bit(B), index(N), bitNIs(N, P1, B), bitNIs(N, P2, B),
                           bitNIs(N, P3, B), bitNIs(N, P4, B).

``set`` holds for about 25,000 quadruples of pieces, and ``row`` grounds once per row
and quadruple: 230,000 ground rules for the lines, more than 80 % of the game's. With
``set``'s body written in its place, the pieces meet only through the attribute
(``N`` and ``B``), and factoring gives one small rule per cell of the line::

    f1(Y, N, B) :- true(cell 1 Y P1), bitNIs(N, P1, B).
    ...
    row :- index(Y), bit(B), index(N), f1(Y, N, B), f2(Y, N, B), f3(Y, N, B), f4(Y, N, B).

6,600 ground rules for the whole game. This is one step of SLD resolution (unfolding,
in the program transformations of logic programming): a positive literal of a relation
with one rule is replaced by that rule's body, the rule's head variables renamed to the
literal's arguments and its other variables to fresh ones. It keeps the meaning of every
program: the literal holds exactly when the body does for some values of those fresh
variables.

Only *static* relations (those that depend on neither the state nor the moves) with one
rule and no facts, whose head arguments are distinct variables and whose body has
variables of its own, are unfolded, and a rule takes the unfolded body only when that
factors into narrower pieces than the body as written (:func:`factor_width`). A static
helper that no rule reads (any more) is then left out, so that its own join is not
grounded; that is done to the rules as written too: max_knights states facts of the
board's geometry that no rule reads, 65,000 of its 75,000 ground rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..terms import RawTerm
from .demand import KEYWORD_NAMES, read_atom
from .factor import factor_width
from .relations import RelationKey, relation_key, term_variables

Clause = tuple[RawTerm, tuple[RawTerm, ...]]
"""A head and a body without ``or``."""


def unfold_helpers(
    clauses: Sequence[Clause],
    dynamic: frozenset[RelationKey],
    hidden: Callable[[RawTerm, Sequence[RawTerm]], frozenset[str]],
    unfolding: bool = True,
) -> list[Clause | None]:
    """Each clause, its body unfolded where that factors narrower (with ``unfolding``);
    None for the clauses of static helpers no clause reads (any more).
    ``hidden(head, body)`` gives the variables that factoring leaves out of a body
    (those written anonymous)."""
    definitions = _unfoldable(clauses, dynamic) if unfolding else {}
    if not definitions:
        return _without_unread(list(clauses), dynamic)
    fresh = Counter[str]()
    out: list[Clause | None] = []
    for head, body in clauses:
        unfolded = _unfolded_body(body, definitions, fresh)
        if unfolded is not None and factor_width(head, unfolded, hidden(head, unfolded)) < (
            factor_width(head, body, hidden(head, body))
        ):
            body = unfolded
        out.append((head, body))
    return _without_unread(out, dynamic)


def _unfoldable(
    clauses: Sequence[Clause], dynamic: frozenset[RelationKey]
) -> dict[RelationKey, Clause]:
    """The static helpers with one clause, a body with variables of its own, distinct
    variables as head arguments, and no literal of their own relation."""
    counts = Counter(relation_key(head) for head, _ in clauses)
    found: dict[RelationKey, Clause] = {}
    for head, body in clauses:
        key = relation_key(head)
        if key in dynamic or key[0] in KEYWORD_NAMES or counts[key] != 1 or not body:
            continue
        arguments = head[1:] if isinstance(head, tuple) else ()
        if not all(isinstance(a, str) and a.startswith("?") for a in arguments):
            continue
        if len(set(arguments)) != len(arguments):
            continue
        own = {v for literal in body for v in term_variables(literal)} - set(arguments)
        if not own or any(_read(literal) == key for literal in body):
            continue
        found[key] = (head, body)
    return found


def _unfolded_body(
    body: tuple[RawTerm, ...], definitions: dict[RelationKey, Clause], fresh: Counter[str]
) -> tuple[RawTerm, ...] | None:
    """``body`` with each positive literal of an unfoldable helper replaced by the
    helper's body; None when it has none."""
    out: list[RawTerm] = []
    changed = False
    for literal in body:
        read = read_atom(literal)
        definition = None
        if read is not None and read[1]:
            definition = definitions.get(relation_key(literal))
        if definition is None:
            out.append(literal)
            continue
        head, helper_body = definition
        renaming: dict[str, RawTerm] = {}
        if isinstance(head, tuple) and isinstance(literal, tuple):
            renaming.update(zip(head[1:], literal[1:], strict=True))
        for variable in {v for part in helper_body for v in term_variables(part)}:
            if variable not in renaming:
                fresh[variable] += 1
                renaming[variable] = f"{variable} {fresh[variable]}"  # no GDL name has a space
        out.extend(_renamed(part, renaming) for part in helper_body)
        changed = True
    return tuple(out) if changed else None


def _renamed(term: RawTerm, renaming: dict[str, RawTerm]) -> RawTerm:
    if isinstance(term, str):
        return renaming.get(term, term)
    return tuple(_renamed(part, renaming) for part in term)


def _read(literal: RawTerm) -> RelationKey | None:
    """The relation a body literal reads (None for ``distinct``)."""
    read = read_atom(literal)
    return None if read is None else relation_key(read[0])


def _without_unread(
    clauses: list[Clause | None], dynamic: frozenset[RelationKey]
) -> list[Clause | None]:
    """``clauses`` with those of the static helpers nothing else reads set to None,
    until every helper left is read."""
    while True:
        read = {
            key
            for clause in clauses
            if clause is not None
            for key in map(_read, clause[1])
            if key is not None and key != relation_key(clause[0])
        }
        dropped = False
        for index, clause in enumerate(clauses):
            if clause is None:
                continue
            key = relation_key(clause[0])
            if key in dynamic or key[0] in KEYWORD_NAMES or key in read:
                continue
            clauses[index] = None
            dropped = True
        if not dropped:
            return clauses


__all__ = ["Clause", "unfold_helpers"]
