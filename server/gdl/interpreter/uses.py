"""Restrict a helper relation read only as yes-or-no questions to the questions asked.

``(<= terminal (not (hasmove white)))`` reads ``hasmove`` with the constant ``white``
and nothing else does: facts of ``hasmove`` for any other argument (an arrow, a wall)
are never read. When every use of a relation is a ground atom, its rules need only
derive the atoms those uses name; a bottom-up evaluation that derives the rest does work
no rule reads (knightazons spent a third of its time deriving moves for its arrows).

Relations read with some arguments left open are not restricted: the interpreter asks
those top-down with the given arguments bound once they grow large (see
:class:`~.engine.DemandTable`), and the budget trials that such growth starts pick the
faster way to compute the game's state relations (chineseCheckers4's ``count``,
restricted to the questions its ``stones`` ask, never grew, and the game lost the
trial that made it a quarter faster).

The rewrite keeps every answer the engine gives: the relations a caller asks for
(``legal``, ``next``, ``goal``, ``terminal``, ``init``, ``role`` and the input
relations) are never restricted, and only facts that no rule body can match are
left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..terms import is_ground
from .program import FlatRule, RelationKey, literal_atom, relation_args, relation_key

KEPT_WHOLE = frozenset({"true", "does", "legal", "next", "goal", "terminal", "init", "role"})
"""Relations read by the engine's callers (or given by them): restricted, never."""


def _all_ground(args: tuple) -> bool:
    """Whether no argument holds a variable."""
    return all(map(is_ground, args))


def _uses(rules: Iterable[FlatRule]) -> dict[RelationKey, list[tuple]]:
    """Per relation: the arguments of each body literal that reads it."""
    uses: dict[RelationKey, list[tuple]] = {}
    for rule in rules:
        for literal in rule.body:
            _, atom = literal_atom(literal)
            if atom is not None:
                uses.setdefault(relation_key(atom), []).append(relation_args(atom))
    return uses


def use_filter_name(key: RelationKey) -> str:
    """The name of the relation listing what ``key``'s uses ask for (no GDL symbol
    holds a space, so it names no relation of the game)."""
    name, arity = key if isinstance(key, tuple) else (key, 0)
    return f"{name}/{arity} as used"


def restrict_to_uses(rules: list[FlatRule]) -> list[FlatRule]:
    """The rules, with each restrictable relation's rules limited to what it is used for.

    A relation is restrictable when every body literal that reads it is a ground atom.
    Its rules whose head is ground and named by no use are dropped; the others get one
    more body literal, over a static relation holding exactly the arguments the uses
    name.
    """
    wanted: dict[RelationKey, frozenset[tuple]] = {
        key: frozenset(calls)
        for key, calls in _uses(rules).items()
        if isinstance(key, tuple) and key[0] not in KEPT_WHOLE and all(map(_all_ground, calls))
    }
    if not wanted:
        return rules
    restricted: list[FlatRule] = []
    made: set[str] = set()
    for rule in rules:
        asked = wanted.get(rule.head_key)
        if asked is None:
            restricted.append(rule)
            continue
        args = relation_args(rule.head)
        if _all_ground(args):
            if args in asked:
                restricted.append(rule)
            continue
        name = use_filter_name(rule.head_key)
        if name not in made:
            made.add(name)
            restricted.extend(
                FlatRule((name, *question), (), rule.source) for question in sorted(asked, key=repr)
            )
        restricted.append(FlatRule(rule.head, ((name, *args), *rule.body), rule.source))
    return restricted
