"""Write a small copy's rules in place of the one literal that reads it.

The copies :mod:`.specialise` makes are relations of their own: the interpreter computes
each once a state, with the cost of a relation (its facts, its indexes, its call on demand)
for what is often a rule or two. chineseCheckers6's ``terminal`` reads a copy of ``goal``
for 100 (six rules, one a corner), each reading a copy of ``count`` for 100 (one rule)::

    (<= terminal (<goal with 1=100> ?player 100))
    (<= (<goal with 1=100> red 100) (<count with 4=100> h1 h2 i1 red 100))
    (<= (<count with 4=100> ?x ?y ?z ?player 100) (true (cell ?x ?player)) ...)

With the copies written in, ``terminal`` has six rules of three cell tests each::

    (<= terminal (true (cell h1 red)) (true (cell h2 red)) (true (cell i1 red)))

This is unfolding (one step of SLD resolution): a positive literal is replaced, for each
rule of its relation whose head unifies with it, by that rule's body, under the unifier,
the rule's variables renamed apart first; the reading rule becomes one rule per such rule
of the copy. It keeps the meaning of every program for a relation that is not recursive.

A copy is written in where it has one rule (in every literal that reads it), or where one
positive literal alone reads it and it has at most MAX_INLINED_RULES rules. A copy read
under ``not`` stays a relation. A copy no literal reads any more is left out.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection

from ..terms import RawTerm
from .program import (
    FlatRule,
    literal_atom,
    relation_args,
    rename_variables,
    resolve,
    unify,
)

MAX_INLINED_RULES = 8
"""The rules a copy read by one literal alone may have to be written in (its reading rule
becomes as many rules)."""


def _readers(rules: list[FlatRule], copies: Collection[str]) -> Counter[tuple[str, bool]]:
    """Per copy and sign: the body literals that read it."""
    found: Counter[tuple[str, bool]] = Counter()
    for rule in rules:
        for literal in rule.body:
            positive, atom = literal_atom(literal)
            if atom is None:
                continue
            name = _name(atom)
            if name in copies:
                found[(name, positive)] += 1
    return found


def _name(head: RawTerm) -> str:
    """The name of a relation from an atom (a head, a literal's atom)."""
    return head if isinstance(head, str) else head[0]


def _first_read(body: tuple[RawTerm, ...], copies: Collection[str]) -> int | None:
    """The position of the first positive literal of ``body`` that reads one of
    ``copies``, or None."""
    for position, literal in enumerate(body):
        positive, atom = literal_atom(literal)
        if positive and atom is not None and _name(atom) in copies:
            return position
    return None


def inline_small_copies(rules: list[FlatRule], copies: Collection[str]) -> list[FlatRule]:
    """The rules with each small copy (see the module) written in where it is read."""
    if not copies:
        return rules
    by_name: dict[str, list[FlatRule]] = {}
    for rule in rules:
        name = _name(rule.head)
        if name in copies:
            by_name.setdefault(name, []).append(rule)
    readers = _readers(rules, copies)
    inlined = {
        name
        for name, own in by_name.items()
        if not readers[(name, False)]
        and (len(own) == 1 or (readers[(name, True)] == 1 and len(own) <= MAX_INLINED_RULES))
    }
    if not inlined:
        return rules
    renamings = itertools.count(1)
    result: list[FlatRule] = []

    def unfold(rule: FlatRule) -> None:
        """Add ``rule`` to the result with its first literal that reads a copy to write in
        written in (each rule that makes unfolded in turn)."""
        position = _first_read(rule.body, inlined)
        if position is None:
            result.append(rule)
            return
        atom = rule.body[position]
        for own in by_name[_name(atom)]:
            suffix = f"'{next(renamings)}"
            head = rename_variables(own.head, suffix)
            binding: dict[str, RawTerm] = {}
            if not unify(relation_args(atom), relation_args(head), binding):
                continue
            body = (
                *rule.body[:position],
                *(rename_variables(part, suffix) for part in own.body),
                *rule.body[position + 1 :],
            )
            unfold(
                FlatRule(
                    resolve(rule.head, binding),
                    tuple(resolve(part, binding) for part in body),
                    rule.source,
                )
            )

    for rule in rules:
        if _name(rule.head) not in inlined:
            unfold(rule)
    return result
