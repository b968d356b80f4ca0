"""Fold a rule's negated ``true`` literals that differ in one constant into one test.

``(<= (emptycell ?x ?y) (cell ?x ?y) (not (true (cell ?x ?y white)))
(not (true (cell ?x ?y black))) (not (true (cell ?x ?y arrow))))`` tests three
fluents for every cell, each test building the fluent anew. The three literals say
together that the state holds none of them; the rewrite gives that a relation of its
own, derived once per state from the fluents present::

    (<= (emptycell ?x ?y) (cell ?x ?y) (not (<group> ?x ?y)))
    (<= (<group> ?x ?y) (true (cell ?x ?y white)))
    (<= (<group> ?x ?y) (true (cell ?x ?y black)))
    (<= (<group> ?x ?y) (true (cell ?x ?y arrow)))

The group holds a pair for each fluent of the state that matches one of the literals
(a sudoku's marks, the knights and arrows of knightazons), so the rule makes one test a
cell rather than one a literal. Rules with the same group share its relation.
"""

from __future__ import annotations

from ..terms import RawTerm, variables_of
from .program import TRUE_KEY, FlatRule, literal_atom, relation_key

MIN_GROUP = 2
"""Negated literals folded together at least: one is a single test already."""


def _is_constant(term: RawTerm) -> bool:
    return isinstance(term, str) and not term.startswith("?")


def _shape(
    term: RawTerm, path: tuple[int, ...] = ()
) -> tuple[RawTerm, tuple[tuple[int, ...], ...]]:
    """``term`` with each constant below a compound replaced by a hole, and the holes'
    paths (the functor at index 0 of a compound stays)."""
    if isinstance(term, str):
        return ("?", (path,)) if _is_constant(term) else (term, ())
    parts: list[RawTerm] = [term[0]]
    holes: list[tuple[int, ...]] = []
    for index, part in enumerate(term[1:], start=1):
        shaped, found = _shape(part, (*path, index))
        parts.append(shaped)
        holes.extend(found)
    return tuple(parts), tuple(holes)


def _at(term: RawTerm, path: tuple[int, ...]) -> RawTerm:
    for step in path:
        term = term[step]
    return term


def _grouping_key(atom: RawTerm) -> tuple | None:
    """What negated ``true`` literals share to fold together: their shape and every
    constant but one, for each choice of the one (None for a non-compound fluent)."""
    fluent = atom[1] if isinstance(atom, tuple) and len(atom) == 2 else None
    if not isinstance(fluent, tuple) or not variables_of(fluent):
        return None
    return _shape(fluent)


def _groups(rule: FlatRule) -> list[list[int]]:
    """The body positions of negated ``true`` literals whose fluents agree everywhere but
    at one path, a list per group (at least :data:`MIN_GROUP`, disjoint groups)."""
    candidates: dict[tuple, list[int]] = {}
    for position, literal in enumerate(rule.body):
        positive, atom = literal_atom(literal)
        if positive or atom is None or relation_key(atom) != TRUE_KEY:
            continue
        shape = _grouping_key(atom)
        if shape is None:
            continue
        fluent = atom[1]
        template, holes = shape
        for hole in holes:
            fixed = tuple(_at(fluent, other) for other in holes if other != hole)
            candidates.setdefault((template, holes, hole, fixed), []).append(position)
    taken: set[int] = set()
    groups = []
    for positions in sorted(candidates.values(), key=lambda found: (-len(found), found)):
        free = [position for position in positions if position not in taken]
        if len(free) >= MIN_GROUP:
            taken.update(free)
            groups.append(free)
    return groups


def group_name(fluents: list[RawTerm]) -> str:
    """The relation of a group: named by its fluents (no GDL symbol holds a space)."""
    return "none of " + " ".join(repr(fluent) for fluent in fluents)


def fold_negated_fluents(rules: list[FlatRule]) -> list[FlatRule]:
    """The rules with each group of negated ``true`` literals (see the module) replaced
    by one negated literal over a relation of the group's own."""
    folded: list[FlatRule] = []
    made: set[str] = set()
    for rule in rules:
        groups = _groups(rule)
        if not groups:
            folded.append(rule)
            continue
        replaced: dict[int, RawTerm | None] = {}
        for positions in groups:
            fluents = [rule.body[position][1][1] for position in positions]
            arguments = tuple(sorted(set().union(*(variables_of(f) for f in fluents))))
            name = group_name(fluents)
            head: RawTerm = (name, *arguments) if arguments else name
            if name not in made:
                made.add(name)
                folded.extend(
                    FlatRule(head, (("true", fluent),), rule.source) for fluent in fluents
                )
            replaced[positions[0]] = ("not", head)
            replaced.update((position, None) for position in positions[1:])
        body: list[RawTerm] = []
        for position, literal in enumerate(rule.body):
            if position not in replaced:
                body.append(literal)
            elif (kept := replaced[position]) is not None:
                body.append(kept)
        folded.append(FlatRule(rule.head, tuple(body), rule.source))
    return folded
