"""Specialise a helper relation to the constants a literal gives it, dropping the rules
those constants rule out.

chineseCheckers6 ends when a player has filled the corner across the board::

    (<= terminal (goal ?player 100))
    (<= (goal red ?payoff) (count h1 h2 i1 red ?payoff))
    (<= (count ?x ?y ?z ?player 100) (true (cell ?x ?player)) (true (cell ?y ?player))
        (true (cell ?z ?player)))
    (<= (count ?x ?y ?z ?player 50) (true (cell ?x ?player)) (true (cell ?y ?player))
        (devoid ?z ?player))
    ... six more rules of count, for 50, 25 and 0

Evaluated as written, every state works out each player's whole score (eight rules of
``count`` a player, with ``devoid`` tested for each of their corner's cells) to learn
whether one of them scored 100: 45 % of the game's time on the interpreter. Only the first
rule of ``count`` can give 100. The rewrite gives the terminal test a copy of ``goal``
kept to the payoff 100, whose rules read a copy of ``count`` kept to the payoff 100::

    (<= terminal (<goal with 1=100> ?player 100))
    (<= (<goal with 1=100> red 100) (<count with 4=100> h1 h2 i1 red 100))
    (<= (<count with 4=100> ?x ?y ?z ?player 100) (true (cell ?x ?player)) ...)

This is partial deduction (in the program transformations of logic programming): a copy
of a relation holds exactly its facts that have the given constants at the given
positions, so a literal that gives those constants (positive or negated) holds of the
copy exactly when it holds of the relation. A copy's rules are the relation's rules whose
heads match the constants, with the variables the match binds replaced by their values;
a ``distinct`` both of whose sides then are constants is decided there.

What is copied, and for which positions:

- only relations that depend on the state (the static ones are computed once a game)
  and that no cycle goes through (a copy of a recursive relation would need copies of
  its calls to itself, and the interpreter answers those top-down already);
- only the positions that can rule something out: a position where a rule's head has a
  constant or a compound, or a variable that a ``distinct`` compares with a constant or
  that goes on to such a position of another relation the rule reads. The copy is
  keyed by the constants at those positions only, so that the many uses that differ
  elsewhere share it (``count`` above: one copy for the six players' corners);
- only when the copy, with the relations (or their copies) it reads in turn, holds at
  most half the rules of the relation as written with those it reads (see
  MAX_COPY_SHARE): chineseCheckers6's copies of ``goal`` and ``count`` hold 7 of 16.

The relations the engine's callers ask for (``legal``, ``goal``, ...) stay as written:
a literal that reads one gets a copy of its own, under another name.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..graphs import strongly_connected_components
from ..terms import RawTerm, is_ground
from .inline import inline_small_copies
from .program import (
    INPUT_KEYS,
    FlatRule,
    RelationKey,
    literal_atom,
    relation_args,
    relation_key,
    resolve,
    unify,
)

MAX_COPY_SHARE = 0.5
"""A copy is made when it holds, with the relations and copies it reads in turn, at most
this share of the rules of its relation as written with those it reads: copying a chain
of relations to leave out a rule or two at its end (blobwars' counts along a line, whose
base cases name a direction) only doubles the work of a state."""

MAX_ADDED_SHARE = 1.0
"""The copies' rules, at most, as a share of the game's own rules (copies beyond that
are not made; the literals they would serve read the relation as written)."""

MIN_ADDED_RULES = 256
"""The copies' rules allowed whatever the game's size."""

Binding = tuple[tuple[int, RawTerm], ...]
"""Constants by argument position, in position order."""

_Node = tuple[RelationKey, Binding]
"""A relation as written (no binding) or its copy for a binding."""


def _is_variable(term: RawTerm) -> bool:
    return isinstance(term, str) and term.startswith("?")


def copy_name(key: RelationKey, binding: Binding) -> str:
    """The relation holding the facts of ``key`` that have ``binding``'s constants (no
    GDL symbol holds a space, so it names no relation of the game)."""
    name, arity = key if isinstance(key, tuple) else (key, 0)
    given = " ".join(f"{position}={value!r}" for position, value in binding)
    return f"{name}/{arity} with {given}"


class _Specialiser:
    """The copies made for one rule set (see the module)."""

    def __init__(self, rules: list[FlatRule]) -> None:
        self.rules = rules
        self.by_head: dict[RelationKey, list[FlatRule]] = {}
        for rule in rules:
            self.by_head.setdefault(rule.head_key, []).append(rule)
        self.copyable = self._copyable()
        self.useful = self._useful_positions()
        self.instances: dict[_Node, list[FlatRule]] = {}
        self.closures: dict[_Node, frozenset[_Node]] = {}
        self.worth: dict[_Node, bool] = {}
        self.made: dict[_Node, str] = {}
        self.added: list[FlatRule] = []
        self.reserved = 0
        """The copies' rules, made or about to be."""
        self.allowance = max(MIN_ADDED_RULES, int(len(rules) * MAX_ADDED_SHARE))

    def _copyable(self) -> frozenset[RelationKey]:
        """Relations with rules, depending on the state or the moves, on no cycle."""
        edges: dict[RelationKey, set[RelationKey]] = {}
        for rule in self.rules:
            edges.setdefault(rule.head_key, set()).update(_read_keys(rule.body))
        nodes = sorted(set(edges) | {key for keys in edges.values() for key in keys}, key=repr)
        dynamic: set[RelationKey] = set(INPUT_KEYS)
        recursive: set[RelationKey] = set()
        components = strongly_connected_components(
            nodes, lambda node: sorted(edges.get(node, ()), key=repr)
        )
        for component in components:  # dependencies first
            members = set(component)
            if len(component) > 1 or any(key in edges.get(key, ()) for key in component):
                recursive |= members
            if any(dynamic & edges.get(key, set()) for key in component):
                dynamic |= members
        return frozenset(
            key
            for key in self.by_head
            if key in dynamic and key not in recursive and key not in INPUT_KEYS
        )

    def _useful_positions(self) -> dict[RelationKey, frozenset[int]]:
        """Per copyable relation: the argument positions where a constant can rule out a
        rule, or decide a ``distinct``, of the relation or of one it reads (a fixpoint)."""
        useful: dict[RelationKey, set[int]] = {key: set() for key in self.copyable}
        changed = True
        while changed:
            changed = False
            for key in self.copyable:
                found = useful[key]
                for rule in self.by_head[key]:
                    for position, argument in enumerate(relation_args(rule.head)):
                        if position in found:
                            continue
                        if not _is_variable(argument) or self._decides(rule.body, argument, useful):
                            found.add(position)
                            changed = True
        return {key: frozenset(positions) for key, positions in useful.items()}

    def _decides(
        self, body: Iterable[RawTerm], variable: RawTerm, useful: dict[RelationKey, set[int]]
    ) -> bool:
        """Whether a value for ``variable`` can rule out something in ``body``."""
        for literal in body:
            _, atom = literal_atom(literal)
            if atom is None:
                sides = literal[1][1:] if literal[0] == "not" else literal[1:]
                if variable in sides and any(is_ground(side) for side in sides):
                    return True
                continue
            positions = useful.get(relation_key(atom))
            if positions and any(
                argument == variable and position in positions
                for position, argument in enumerate(relation_args(atom))
            ):
                return True
        return False

    def _binding(self, atom: RawTerm) -> Binding:
        """The constants ``atom`` gives at its relation's useful positions."""
        positions = self.useful.get(relation_key(atom))
        if not positions:
            return ()
        return tuple(
            (position, argument)
            for position, argument in enumerate(relation_args(atom))
            if position in positions and is_ground(argument)
        )

    def _instances(self, key: RelationKey, binding: Binding) -> list[FlatRule]:
        """The rules of ``key`` whose heads match ``binding``, each with the values it
        binds written in and its decided ``distinct`` literals left out (a rule with one
        that fails is dropped)."""
        kept: list[FlatRule] = []
        for rule in self.by_head[key]:
            arguments = relation_args(rule.head)
            bound: dict[str, RawTerm] = {}
            if not all(unify(value, arguments[position], bound) for position, value in binding):
                continue
            body: list[RawTerm] = []
            for literal in rule.body:
                literal = resolve(literal, bound)
                decided = _decided(literal)
                if decided is None:
                    body.append(literal)
                elif not decided:
                    break
            else:
                kept.append(FlatRule(resolve(rule.head, bound), tuple(body), rule.source))
        return kept

    def _rules_of(self, node: _Node) -> list[FlatRule]:
        """The rules of a relation as written (no binding) or of its copy."""
        key, binding = node
        if not binding:
            return self.by_head[key]
        found = self.instances.get(node)
        if found is None:
            found = self.instances[node] = self._instances(key, binding)
        return found

    def _node_for(self, atom: RawTerm) -> _Node:
        """What a literal reads: its relation's copy for the constants it gives when one
        is worth making, else the relation as written."""
        key = relation_key(atom)
        binding = self._binding(atom)
        if binding:
            worth = self.worth.get((key, binding))
            if worth is None:
                worth = self.worth[(key, binding)] = self._size(
                    (key, binding)
                ) <= MAX_COPY_SHARE * self._size((key, ()))
            if worth:
                return (key, binding)
        return (key, ())

    def _size(self, node: _Node) -> int:
        """The rules evaluated to answer ``node``, with those of the copyable relations
        (or copies) they read in turn, each counted once."""
        return sum(len(self._rules_of(member)) for member in self._closure(node))

    def _closure(self, node: _Node) -> frozenset[_Node]:
        """``node`` and the copyable relations (or copies) its rules read, in turn."""
        found = self.closures.get(node)
        if found is None:
            members = {node}
            for rule in self._rules_of(node):
                for literal in rule.body:
                    _, atom = literal_atom(literal)
                    if atom is not None and relation_key(atom) in self.copyable:
                        members |= self._closure(self._node_for(atom))
            found = self.closures[node] = frozenset(members)
        return found

    def rewrite_body(self, body: tuple[RawTerm, ...]) -> tuple[RawTerm, ...]:
        """``body`` with each literal worth it reading a copy (made on first use)."""
        changed: list[RawTerm] = []
        for literal in body:
            positive, atom = literal_atom(literal)
            name = None if atom is None else self._copy_for(atom)
            if name is None or atom is None:
                changed.append(literal)
                continue
            copied: RawTerm = (name, *relation_args(atom)) if relation_args(atom) else name
            changed.append(copied if positive else ("not", copied))
        return tuple(changed)

    def _copy_for(self, atom: RawTerm) -> str | None:
        """The name of the copy ``atom`` reads (its rules made now), or None."""
        node = self._node_for(atom)
        if not node[1]:
            return None
        name = self.made.get(node)
        if name is not None:
            return name
        instances = self._rules_of(node)
        if self.reserved + len(instances) > self.allowance:
            return None
        self.reserved += len(instances)
        name = self.made[node] = copy_name(*node)
        for rule in instances:  # the copies these read are made (and counted) here
            arguments = relation_args(rule.head)
            head: RawTerm = (name, *arguments) if arguments else name
            self.added.append(FlatRule(head, self.rewrite_body(rule.body), rule.source))
        return name


def _read_keys(body: Iterable[RawTerm]) -> set[RelationKey]:
    keys: set[RelationKey] = set()
    for literal in body:
        _, atom = literal_atom(literal)
        if atom is not None:
            keys.add(relation_key(atom))
    return keys


def _decided(literal: RawTerm) -> bool | None:
    """Whether a ``distinct`` literal (or its negation) over two ground sides holds; None
    for any other literal, or one with a variable left."""
    negated = isinstance(literal, tuple) and literal[0] == "not"
    inner = literal[1] if negated else literal
    if not (isinstance(inner, tuple) and inner[0] == "distinct" and len(inner) == 3):
        return None
    if not (is_ground(inner[1]) and is_ground(inner[2])):
        return None
    holds = inner[1] != inner[2]
    return not holds if negated else holds


def specialise_to_constants(rules: list[FlatRule], inline: bool = True) -> list[FlatRule]:
    """The rules with each literal that gives constants ruling out some of its relation's
    rules reading a copy of the relation kept to those constants (see the module); with
    ``inline``, the small copies written in where they are read (see :mod:`.inline`)."""
    specialiser = _Specialiser(rules)
    if not specialiser.copyable:
        return rules
    rewritten = [
        FlatRule(rule.head, specialiser.rewrite_body(rule.body), rule.source) for rule in rules
    ]
    copied = rewritten + specialiser.added
    if not inline:
        return copied
    return inline_small_copies(copied, set(specialiser.made.values()))
