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

from collections import Counter
from collections.abc import Collection

from ..terms import RawTerm
from .program import FlatRule, literal_atom, relation_args, relation_key

MAX_INLINED_RULES = 8
"""The rules a copy read by one literal alone may have to be written in (its reading rule
becomes as many rules)."""


def _is_variable(term: RawTerm) -> bool:
    return isinstance(term, str) and term.startswith("?")


def _walk(term: RawTerm, binding: dict[str, RawTerm]) -> RawTerm:
    while _is_variable(term) and term in binding:
        term = binding[term]
    return term


def _unify(left: RawTerm, right: RawTerm, binding: dict[str, RawTerm]) -> bool:
    """Extend ``binding`` to a unifier of the two terms (no occurs check: the terms of a
    rule are finite and its variables renamed apart), binding ``right``'s variables
    rather than ``left``'s where either would do; False when there is none."""
    stack = [(left, right)]
    while stack:
        first, second = stack.pop()
        first, second = _walk(first, binding), _walk(second, binding)
        if first == second:
            continue
        if _is_variable(second):  # the copy's variable takes the reader's term
            binding[second] = first  # type: ignore[index]
        elif _is_variable(first):
            binding[first] = second  # type: ignore[index]
        elif isinstance(first, tuple) and isinstance(second, tuple) and len(first) == len(second):
            stack.extend(zip(first, second, strict=True))
        else:
            return False
    return True


def _resolve(term: RawTerm, binding: dict[str, RawTerm]) -> RawTerm:
    term = _walk(term, binding)
    if isinstance(term, str):
        return term
    return tuple(_resolve(part, binding) for part in term)


def _renamed(term: RawTerm, suffix: str) -> RawTerm:
    if isinstance(term, str):
        return term + suffix if term.startswith("?") else term
    return tuple(_renamed(part, suffix) for part in term)


def _readers(rules: list[FlatRule], copies: Collection[str]) -> Counter[tuple[str, bool]]:
    """Per copy and sign: the body literals that read it."""
    found: Counter[tuple[str, bool]] = Counter()
    for rule in rules:
        for literal in rule.body:
            positive, atom = literal_atom(literal)
            if atom is not None:
                key = relation_key(atom)
                name = key if isinstance(key, str) else key[0]
                if name in copies:
                    found[(name, positive)] += 1
    return found


def _name(head: RawTerm) -> str:
    return head if isinstance(head, str) else head[0]


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
    renaming = [0]
    result: list[FlatRule] = []
    pending = [rule for rule in rules if _name(rule.head) not in inlined]
    while pending:
        rule = pending.pop(0)
        position = next(
            (
                index
                for index, literal in enumerate(rule.body)
                if literal_atom(literal)[0]
                and literal_atom(literal)[1] is not None
                and _name(literal) in inlined
            ),
            None,
        )
        if position is None:
            result.append(rule)
            continue
        literal = rule.body[position]
        unfolded: list[FlatRule] = []
        for own in by_name[_name(literal)]:
            renaming[0] += 1
            suffix = f"'{renaming[0]}"
            head = _renamed(own.head, suffix)
            binding: dict[str, RawTerm] = {}
            if not _unify(relation_args(literal), relation_args(head), binding):
                continue
            body = (
                *rule.body[:position],
                *(_renamed(part, suffix) for part in own.body),
                *rule.body[position + 1 :],
            )
            unfolded.append(
                FlatRule(
                    _resolve(rule.head, binding),
                    tuple(_resolve(part, binding) for part in body),
                    rule.source,
                )
            )
        pending[0:0] = unfolded  # copies the written-in bodies read are written in next
    return result
