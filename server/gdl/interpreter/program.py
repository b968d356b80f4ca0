"""Analyse a rule set: disjunctions expanded, relations grouped into strata and layers.

A relation is named by its *key*: the bare name for a proposition (``terminal``),
``(name, arity)`` for a compound atom. ``p`` and ``(p)`` are different relations,
as in GGP-Base.

Every relation falls into one layer, computed at a different moment:

- ``static``: depends on neither ``true`` nor ``does`` (computed once per game);
- ``state``: depends on ``true`` but not on ``does`` (computed once per state);
- ``move``: depends on ``does`` (computed once per joint move).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from ..errors import GdlError
from ..graphs import strongly_connected_components
from ..parser import Rule
from ..terms import RawTerm

RelationKey = str | tuple[str, int]
Node = TypeVar("Node", bound=Hashable)
TRUE_KEY: RelationKey = ("true", 1)
DOES_KEY: RelationKey = ("does", 2)
INPUT_KEYS = (TRUE_KEY, DOES_KEY)
MAX_DISJUNCT_EXPANSION = 4096


def relation_key(atom: RawTerm) -> RelationKey:
    """The relation an atomic sentence belongs to."""
    if isinstance(atom, str):
        return atom
    return (atom[0], len(atom) - 1)


def relation_args(atom: RawTerm) -> tuple:
    """The arguments of an atomic sentence (``()`` for a proposition)."""
    if isinstance(atom, str):
        return ()
    return atom[1:]


def key_name(key: RelationKey) -> str:
    """Human-readable ``name/arity`` for messages."""
    if isinstance(key, str):
        return key
    return f"{key[0]}/{key[1]}"


@dataclass(frozen=True, slots=True)
class FlatRule:
    """A rule without disjunctions: literals are atoms, ``not``, ``distinct``."""

    head: RawTerm
    body: tuple[RawTerm, ...]
    source: Rule

    @property
    def head_key(self) -> RelationKey:
        return relation_key(self.head)


def literal_atom(literal: RawTerm) -> tuple[bool, RawTerm | None]:
    """``(positive, atom)`` for a sentence literal; ``atom`` is None for distinct, and for
    an ``or`` of distincts kept whole (see :func:`expand_disjunctions`)."""
    if isinstance(literal, tuple) and literal[0] in ("distinct", "or"):
        return True, None
    if isinstance(literal, tuple) and literal[0] == "not":
        inner = literal[1]
        if isinstance(inner, tuple) and inner[0] == "distinct":
            return False, None
        return False, inner
    return True, literal


def _alternatives(literal: RawTerm) -> list[RawTerm]:
    if isinstance(literal, tuple) and literal[0] == "or":
        result: list[RawTerm] = []
        for branch in literal[1:]:
            result.extend(_alternatives(branch))
        return result
    return [literal]


def _choices(literal: RawTerm) -> list[RawTerm]:
    """What a body literal may be in the rules a disjunction splits into: each branch of
    an ``or``; but an ``or`` whose every branch is a ``distinct`` stays one test, an
    ``or`` of those distincts (racer4's ``(or (distinct ?ndx p0) (distinct ?ndy p0))``
    split its rule of legal speeds in two that derived the same speeds twice)."""
    branches = _alternatives(literal)
    if len(branches) > 1 and all(
        isinstance(branch, tuple) and branch[0] == "distinct" and len(branch) == 3
        for branch in branches
    ):
        return [("or", *branches)]
    return branches


def expand_disjunctions(rules: Iterable[Rule]) -> list[FlatRule]:
    """Split every rule with ``or`` into one rule per combination of branches (an ``or``
    of distincts stays one literal, a test)."""
    flat: list[FlatRule] = []
    for rule in rules:
        choices = [_choices(literal) for literal in rule.body]
        count = 1
        for options in choices:
            count *= len(options)
        if count > MAX_DISJUNCT_EXPANSION:
            raise GdlError(f"{rule.where}: too many disjunct combinations ({count}) in {rule}")
        for body in itertools.product(*choices):
            flat.append(FlatRule(rule.head, tuple(body), rule))
    return flat


@dataclass(slots=True)
class Component:
    """A strongly connected component of the dependency graph: one stratum step."""

    index: int
    keys: frozenset[RelationKey]
    rules: list[FlatRule]
    layer: str
    recursive: bool
    depends_on: set[int] = field(default_factory=set)
    first_part: bool = True
    """False for the later parts of a relation split by rule-level stratification."""


@dataclass(slots=True)
class Program:
    """Rules grouped into components in evaluation order."""

    rules: list[FlatRule]
    components: list[Component]
    component_of: dict[RelationKey, int]
    layer_of: dict[RelationKey, str]

    def closure(self, keys: Iterable[RelationKey]) -> list[int]:
        """Components needed to compute ``keys``, in evaluation order."""
        needed: set[int] = set()
        stack = [self.component_of[key] for key in keys if key in self.component_of]
        while stack:
            index = stack.pop()
            if index in needed:
                continue
            needed.add(index)
            stack.extend(self.components[index].depends_on)
        return sorted(needed)


def body_relations(rule: FlatRule) -> Iterable[tuple[RelationKey, bool]]:
    """The relations ``rule``'s body reads, each with whether its literal is positive."""
    for literal in rule.body:
        positive, atom = literal_atom(literal)
        if atom is not None:
            yield relation_key(atom), positive


def _strongly_connected(nodes: list[Node], edges: dict[Node, set[Node]]) -> list[list[Node]]:
    """Components of the dependency graph, dependencies first, in a stable order."""
    return strongly_connected_components(nodes, lambda node: sorted(edges.get(node, ()), key=repr))


def rename_variables(term: RawTerm, suffix: str) -> RawTerm:
    """``term`` with ``suffix`` added to each variable's name (to rename a rule apart)."""
    if isinstance(term, str):
        return term + suffix if term.startswith("?") else term
    return tuple(rename_variables(part, suffix) for part in term)


def _walk(term: RawTerm, binding: dict[str, RawTerm]) -> RawTerm:
    while isinstance(term, str) and term.startswith("?") and term in binding:
        term = binding[term]
    return term


def unify(left: RawTerm, right: RawTerm, binding: dict[str, RawTerm]) -> bool:
    """Extend ``binding`` to a unifier of two terms whose variables are renamed apart (no
    occurs check: a rule's terms are finite), binding ``right``'s variables rather than
    ``left``'s where either would do; False when there is none."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        a, b = _walk(a, binding), _walk(b, binding)
        if a == b:
            continue
        if isinstance(b, str) and b.startswith("?"):
            binding[b] = a
        elif isinstance(a, str) and a.startswith("?"):
            binding[a] = b
        elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            stack.extend(zip(a, b, strict=True))
        else:
            return False
    return True


def resolve(term: RawTerm, binding: dict[str, RawTerm]) -> RawTerm:
    """``term`` with the variables ``binding`` binds replaced, through chains of them."""
    term = _walk(term, binding)
    if isinstance(term, str):
        return term
    return tuple(resolve(part, binding) for part in term)


def unifiable(left: RawTerm, right: RawTerm) -> bool:
    """Whether two terms (variables renamed apart) have a common instance."""
    return unify(left, right, {})


def _rule_edges(rules: list[FlatRule], keys: frozenset) -> dict[int, set[tuple[int, bool]]]:
    """For each rule, the rules of the same component its body literals can use."""
    edges: dict[int, set[tuple[int, bool]]] = {}
    for number, rule in enumerate(rules):
        for literal in rule.body:
            positive, atom = literal_atom(literal)
            if atom is None or relation_key(atom) not in keys:
                continue
            renamed = rename_variables(atom, "'")
            for other, candidate in enumerate(rules):
                if candidate.head_key == relation_key(atom) and unifiable(renamed, candidate.head):
                    edges.setdefault(number, set()).add((other, positive))
    return edges


def _split_by_rules(rules: list[FlatRule], keys: frozenset) -> list[list[FlatRule]]:
    """Order the rules of a component whose relations negate each other.

    Relation-level stratification refuses ``(<= (goal r 100) (not (goal r 0)))``;
    looked at rule by rule, the negated atom only comes from other rules, which
    can be computed first. Raises when a rule-level cycle goes through negation.
    """
    edges = _rule_edges(rules, keys)
    plain = {number: {other for other, _ in targets} for number, targets in edges.items()}
    groups = _strongly_connected(list(range(len(rules))), plain)
    group_of = {member: index for index, group in enumerate(groups) for member in group}
    for number, targets in edges.items():
        for other, positive in targets:
            if not positive and group_of[number] == group_of[other]:
                raise GdlError(
                    f"{rules[number].source.where}: negation is not stratified: "
                    f"{rules[number].source} depends negatively on itself through a cycle"
                )
    return [[rules[member] for member in sorted(group)] for group in groups]


def _is_recursive_part(rules: list[FlatRule], keys: frozenset) -> bool:
    edges = _rule_edges(rules, keys)
    return any(edges.values())


def analyse(
    rules: Iterable[Rule], rewrite: Callable[[list[FlatRule]], list[FlatRule]] | None = None
) -> Program:
    """Expand disjunctions, find strata and layers; ``rewrite`` may first change the
    expanded rules (keeping what they derive for the engine's callers)."""
    flat = expand_disjunctions(rules)
    if rewrite is not None:
        flat = rewrite(flat)
    rules_by_head: dict[RelationKey, list[FlatRule]] = {}
    edges: dict[RelationKey, set[RelationKey]] = {}
    negative: set[tuple[RelationKey, RelationKey]] = set()
    nodes: list[RelationKey] = []
    seen: set[RelationKey] = set()

    def note(key: RelationKey) -> None:
        if key not in seen:
            seen.add(key)
            nodes.append(key)

    for rule in flat:
        head = rule.head_key
        if head in INPUT_KEYS:
            raise GdlError(f"{rule.source.where}: '{key_name(head)}' cannot be the head of a rule")
        note(head)
        rules_by_head.setdefault(head, []).append(rule)
        for key, positive in body_relations(rule):
            note(key)
            edges.setdefault(head, set()).add(key)
            if not positive:
                negative.add((head, key))

    groups = _strongly_connected(nodes, edges)
    layer_of: dict[RelationKey, str] = {}
    components: list[Component] = []
    rank = {"static": 0, "state": 1, "move": 2}
    final_component: dict[RelationKey, int] = {}
    for group in groups:
        keys = frozenset(group)
        member_rules = [rule for key in group for rule in rules_by_head.get(key, [])]
        depends: set[int] = set()
        layer = "static"
        internal_negation = False
        recursive = len(group) > 1
        for key in group:
            if key == TRUE_KEY:
                layer = max(layer, "state", key=rank.__getitem__)
            elif key == DOES_KEY:
                layer = "move"
            for child in edges.get(key, ()):
                if child in keys:
                    recursive = True
                    if (key, child) in negative:
                        internal_negation = True
                else:
                    depends.add(final_component[child])
                    layer = max(layer, layer_of[child], key=rank.__getitem__)
        for key in group:
            layer_of[key] = layer
        parts = _split_by_rules(member_rules, keys) if internal_negation else [member_rules]
        for number, part in enumerate(parts):
            index = len(components)
            part_recursive = recursive if len(parts) == 1 else _is_recursive_part(part, keys)
            component = Component(index, keys, part, layer, part_recursive, set(depends))
            component.first_part = number == 0
            if number:
                component.depends_on.add(index - 1)
            components.append(component)
        for key in group:
            final_component[key] = len(components) - 1

    component_of = final_component
    return Program(flat, components, component_of, layer_of)
