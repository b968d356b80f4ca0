"""Check a parsed game description against the restrictions of the GDL specification.

The checks follow Love et al., "General Game Playing: Game Description Language
Specification": fixed arities, safe rules, stratified negation, the recursion
restriction and the placement of the GDL keywords. Problems that make a game
invalid are *errors*; questionable but legal style is reported as *warnings*.

A body literal is an atom, ``("not", literal)``, ``("distinct", a, b)`` or
``("or", literal, ...)``. An ``or`` stands for the rules obtained by choosing one
disjunct of every ``or`` (its disjunctive normal form); the checks below reason
about every such choice exactly, without building the product of the choices.

The bare proposition ``p`` and the zero-argument relation ``(p)`` are different
relations (as in GGP-Base); they share the name ``p`` and the arity 0.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import GdlValidationError, Problem
from .graphs import strongly_connected_components
from .parser import SENTENCE_ARITY, Rule
from .terms import RawTerm, is_ground, to_kif, variables_of

__all__ = ["ValidationReport", "validate", "check"]

Node = TypeVar("Node", bound=Hashable)

_SHOWN_RULE_LENGTH = 120
_USUAL_SYMBOL = re.compile(r"\??[A-Za-z0-9_\-]+")
_CONNECTIVES = frozenset({"not", "or", "distinct", "<="})
_KEYWORD_NAMES = frozenset(SENTENCE_ARITY) | {"random"} | _CONNECTIVES

_ONLY_IN_HEADS = ("init", "next", "base", "input")
_NEVER_IN_HEADS = ("true", "does")
_TURN_KEYWORDS = ("true", "does", "next", "legal", "goal", "terminal")
_NEVER_TURN_DEPENDENT = ("init", "base", "input")
_NEVER_MOVE_DEPENDENT = ("legal", "goal", "terminal")
_REQUIRED = ("legal", "goal", "terminal")
_PROVIDED = frozenset({"true", "does"})
"""Relations whose facts come from the game state and the moves, not from rules."""


@dataclass
class ValidationReport:
    """What the validator found: ``errors`` make the game invalid, ``warnings`` do not."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Each finding is a :class:`~server.gdl.errors.Problem`: its text starts with
    ``line L, column C:`` (the offending literal, else its rule) when it has a place,
    and ``line`` and ``column`` hold the same numbers."""

    @property
    def ok(self) -> bool:
        """True when there is no error."""
        return not self.errors


def validate(rules: list[Rule]) -> ValidationReport:
    """Check every restriction of the GDL specification; never raises on invalid GDL."""
    report = ValidationReport()
    program = _Program(rules)
    _check_arities(program, report)
    _check_safety(program, report)
    _check_stratification(program, report)
    _check_recursion_restriction(program, report)
    _check_roles(program, report)
    _check_keyword_placement(program, report)
    _check_keyword_dependencies(program, report)
    _check_goal_values(program, report)
    _warn_about_relation_use(program, report)
    _warn_about_symbols(program, report)
    return report


def check(rules: list[Rule]) -> ValidationReport:
    """Validate, raising :class:`GdlValidationError` with every error if there is one."""
    report = validate(rules)
    if report.errors:
        raise GdlValidationError(report.errors)
    return report


# --- the shape of rules --------------------------------------------------------------


def _name(atom: RawTerm) -> str:
    return atom if isinstance(atom, str) else atom[0]


def _arity(atom: RawTerm) -> int:
    return 0 if isinstance(atom, str) else len(atom) - 1


def _args(atom: RawTerm) -> tuple:
    return () if isinstance(atom, str) else atom[1:]


def relation_key(atom: RawTerm) -> str:
    """The relation an atom belongs to: ``p`` for ``p`` and ``(p x)``, ``(p)`` for ``(p)``."""
    if isinstance(atom, str):
        return atom
    return f"({atom[0]})" if len(atom) == 1 else atom[0]


def _is_connective(literal: RawTerm, connective: str) -> bool:
    return isinstance(literal, tuple) and literal[0] == connective


def _disjuncts(literal: RawTerm) -> list[RawTerm]:
    """The literals of an ``or``, nested ``or``\\ s flattened; any other literal alone."""
    if not _is_connective(literal, "or"):
        return [literal]
    found: list[RawTerm] = []
    for part in literal[1:]:
        found.extend(_disjuncts(part))
    return found


def _bound_by(literal: RawTerm) -> set[str]:
    """Variables a literal binds: those of a positive atom; nothing for the others."""
    if _is_connective(literal, "not") or _is_connective(literal, "distinct"):
        return set()
    return variables_of(literal)


def _needed_by(literal: RawTerm) -> set[str]:
    """Variables a literal needs bound elsewhere: those of a negation or a distinct."""
    if _is_connective(literal, "not") or _is_connective(literal, "distinct"):
        return variables_of(literal)
    return set()


def _atoms(literal: RawTerm, positive: bool = True) -> Iterator[tuple[RawTerm, bool]]:
    """Every atom inside a literal, with its polarity; distinct is not an atom."""
    if _is_connective(literal, "not"):
        yield from _atoms(literal[1], not positive)
    elif _is_connective(literal, "or"):
        for part in literal[1:]:
            yield from _atoms(part, positive)
    elif not _is_connective(literal, "distinct"):
        yield literal, positive


def _common(sets: Iterable[set]) -> set:
    """The intersection of the sets; empty when there are none (an empty ``or`` is false)."""
    found: set | None = None
    for item in sets:
        found = set(item) if found is None else found & item
    return found or set()


def _shown(rule: Rule) -> str:
    text = str(rule)
    if len(text) > _SHOWN_RULE_LENGTH:
        text = text[: _SHOWN_RULE_LENGTH - 3] + "..."
    return text


def _problem(rule: Rule, why: str, index: int | None = None) -> Problem:
    """A finding about ``rule``, placed at body literal ``index``, or where the rule
    starts (``index`` ``None``, or 0: the head, which the rule's place names)."""
    line, column = rule.place_of(index) if index else (rule.line, rule.column)
    return Problem(f"{why}, in {_shown(rule)}", line, column)


def _contains(term: RawTerm, part: RawTerm) -> bool:
    """True when ``part`` is ``term`` or one of its subterms."""
    stack = [term]
    while stack:
        current = stack.pop()
        if current == part:
            return True
        if isinstance(current, tuple):
            stack.extend(current[1:])
    return False


def _index_of(rule: Rule, part: RawTerm, *, in_head: bool = True) -> int | None:
    """The index (0 the head, then each body literal) of the first part of ``rule``
    holding ``part``; ``None`` when none does."""
    if in_head and _contains(rule.head, part):
        return 0
    for number, literal in enumerate(rule.body, start=1):
        if _contains(literal, part):
            return number
    return None


def _listing(items: Iterable[str]) -> str:
    return ", ".join(items)


@dataclass
class _Conjunction:
    """A rule body split into plain literals and ``or`` groups of flat disjuncts."""

    plain: list[RawTerm]
    groups: list[list[RawTerm]]

    @classmethod
    def of(cls, body: tuple[RawTerm, ...]) -> _Conjunction:
        plain: list[RawTerm] = []
        groups: list[list[RawTerm]] = []
        for literal in body:
            if _is_connective(literal, "or"):
                groups.append(_disjuncts(literal))
            else:
                plain.append(literal)
        return cls(plain, groups)

    def always_bound(self) -> set[str]:
        """Variables bound in every choice of disjuncts."""
        bound: set[str] = set()
        for literal in self.plain:
            bound |= _bound_by(literal)
        for group in self.groups:
            bound |= _common(_bound_by(literal) for literal in group)
        return bound

    def needed(self) -> Iterator[tuple[str, RawTerm]]:
        """Every (variable, literal) where a negation or distinct needs the variable."""
        for literal in self.plain:
            for variable in _needed_by(literal):
                yield variable, literal
        for group in self.groups:
            for literal in group:
                for variable in _needed_by(literal):
                    yield variable, literal


class _Program:
    """The rules with the relation dependency graph and its strongly connected components."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.heads: dict[str, list[Rule]] = {}
        self.edges: dict[str, dict[str, Rule]] = {}
        """head relation -> body relation -> the first rule making that dependency."""
        self.used_in_bodies: dict[str, Rule] = {}
        for rule in rules:
            head = relation_key(rule.head)
            self.heads.setdefault(head, []).append(rule)
            targets = self.edges.setdefault(head, {})
            for literal in rule.body:
                for atom, _positive in _atoms(literal):
                    key = relation_key(atom)
                    targets.setdefault(key, rule)
                    self.used_in_bodies.setdefault(key, rule)
        self.component = _strongly_connected_components(self.edges)

    def recursive(self, head: str, body: str) -> bool:
        """True when ``body`` is in the same strongly connected component as ``head``."""
        return body in self.edges and self.component.get(body) == self.component.get(head)

    def path(self, start: str, targets: Iterable[str]) -> list[tuple[str, Rule]] | None:
        """A shortest dependency path from ``start`` to one of ``targets``, as (relation,
        rule making the step) pairs, or None when no target is reachable."""
        wanted = set(targets)
        parent: dict[str, tuple[str, Rule] | None] = {start: None}
        queue = deque([start])
        while queue:
            current = queue.popleft()
            if current in wanted and current != start:
                steps: list[tuple[str, Rule]] = []
                node = current
                while (step := parent[node]) is not None:
                    steps.append((node, step[1]))
                    node = step[0]
                return steps[::-1]
            for target, rule in self.edges.get(current, {}).items():
                if target not in parent:
                    parent[target] = (current, rule)
                    queue.append(target)
        return None


def _strongly_connected_components(edges: Mapping[Node, Iterable[Node]]) -> dict[Node, int]:
    """The component number of every node (targets that are not keys included)."""
    nodes: dict[Node, None] = dict.fromkeys(edges)
    for targets in edges.values():
        nodes.update(dict.fromkeys(targets))
    components = strongly_connected_components(nodes, lambda node: edges.get(node, ()))
    return {member: number for number, group in enumerate(components) for member in group}


# --- errors --------------------------------------------------------------------------


def _sentences(rule: Rule) -> Iterator[tuple[int, RawTerm]]:
    """Every sentence of the rule, with its index (0 the head, then the body literals)."""
    yield 0, rule.head
    for number, literal in enumerate(rule.body, start=1):
        for atom, _positive in _atoms(literal):
            yield number, atom


def _argument_terms(rule: Rule) -> Iterator[tuple[int, RawTerm]]:
    """Every term in argument position (sentence and distinct arguments), with the
    index of the head or body literal it is in."""
    for number, sentence in _sentences(rule):
        for argument in _args(sentence):
            yield number, argument
    for number, literal in enumerate(rule.body, start=1):
        for part in _disjuncts(literal[1] if _is_connective(literal, "not") else literal):
            inner = part[1] if _is_connective(part, "not") else part
            if _is_connective(inner, "distinct"):
                for argument in inner[1:]:
                    yield number, argument


def _functions(term: RawTerm) -> Iterator[tuple]:
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, tuple):
            yield current
            stack.extend(current[1:])


def _check_arities(program: _Program, report: ValidationReport) -> None:
    """Each relation and each function name is used with one arity only."""
    relations: dict[str, tuple[int, Rule]] = {}
    functions: dict[str, tuple[int, Rule]] = {}
    reported: set[tuple[str, str, int]] = set()
    parenthesised_relations: dict[str, Rule] = {}
    parenthesised_functions: dict[str, Rule] = {}
    keyword_functions: dict[str, Rule] = {}

    def note(
        kind: str,
        seen: dict[str, tuple[int, Rule]],
        name: str,
        arity: int,
        rule: Rule,
        index: int,
    ) -> None:
        first = seen.setdefault(name, (arity, rule))
        if first[0] != arity and (kind, name, arity) not in reported:
            reported.add((kind, name, arity))
            report.errors.append(
                _problem(
                    rule,
                    f"the {kind} {name} is used here with {arity} argument(s), "
                    f"but with {first[0]} at {first[1].where}",
                    index,
                )
            )

    for rule in program.rules:
        for index, sentence in _sentences(rule):
            name, arity = _name(sentence), _arity(sentence)
            expected = SENTENCE_ARITY.get(name)
            if expected is not None and (
                arity != expected or (expected == 0 and isinstance(sentence, tuple))
            ):
                report.errors.append(
                    _problem(
                        rule, f"the keyword {name} takes {expected} argument(s), not {arity}", index
                    )
                )
                continue
            note("relation", relations, name, arity, rule, index)
            if isinstance(sentence, tuple) and arity == 0:
                parenthesised_relations.setdefault(name, rule)
        for index, term in _argument_terms(rule):
            for function in _functions(term):
                name = function[0]
                note("function", functions, name, len(function) - 1, rule, index)
                if len(function) == 1:
                    parenthesised_functions.setdefault(name, rule)
                if name in _KEYWORD_NAMES:
                    keyword_functions.setdefault(name, rule)

    for name, rule in parenthesised_relations.items():
        report.warnings.append(
            _problem(
                rule,
                f"unnecessary parentheses: ({name}) has no arguments and is a different "
                f"relation from the proposition {name}",
            )
        )
    for name, rule in parenthesised_functions.items():
        report.warnings.append(
            _problem(
                rule,
                f"unnecessary parentheses: the term ({name}) has no arguments and differs "
                f"from the constant {name}",
            )
        )
    for name, rule in keyword_functions.items():
        report.warnings.append(_problem(rule, f"the GDL keyword {name} is used as a function name"))
    for name in sorted(relations.keys() & functions.keys()):
        report.warnings.append(
            Problem(
                f"the name {name} is used both as a relation (first at "
                f"{relations[name][1].where}) and as a function (first at "
                f"{functions[name][1].where}); is 'true' used correctly?"
            )
        )


def _check_safety(program: _Program, report: ValidationReport) -> None:
    """Every variable of the head, of a negation and of a distinct is bound by a
    positive literal, in every choice of disjuncts."""
    for rule in program.rules:
        body = _Conjunction.of(rule.body)
        bound = body.always_bound()
        unbound: dict[str, list[str]] = {}
        first: int | None = None
        for variable in sorted(variables_of(rule.head) - bound):
            unbound.setdefault(variable, []).append("the head")
            first = 0
        for variable, literal in body.needed():
            if variable not in bound:
                places = unbound.setdefault(variable, [])
                place = to_kif(literal)
                if place not in places:
                    places.append(place)
                if first is None:
                    first = _index_of(rule, literal, in_head=False)
        if not unbound:
            continue
        details = "; ".join(
            f"{variable} in {' and '.join(places)}" for variable, places in unbound.items()
        )
        hint = (
            " (a variable bound in only some disjuncts of an 'or' is not bound)"
            if body.groups
            else ""
        )
        report.errors.append(
            _problem(
                rule,
                f"unsafe rule: these variables appear in no positive literal of the body{hint}: "
                f"{details}",
                first,
            )
        )


def _check_stratification(program: _Program, report: ValidationReport) -> None:
    """No atom depends negatively on itself: no recursion through negation.

    The specification states this on the relation dependency graph. Where that graph
    has a cycle through a negative edge, the rules on the cycle are examined one level
    finer, as GGP-Base accepts: ``(<= (goal r 100) (not (goal r 0)))`` is fine when no
    rule able to derive ``(goal r 0)`` depends on ``(goal r 100)``. A rule depends on
    another when one of its body atoms unifies with the other's head; a negative
    literal is an error when it unifies with the head of a rule on a cycle with its own
    rule. Programs passing this test are locally stratified, so their meaning is
    well defined.
    """
    suspicious: list[tuple[Rule, RawTerm]] = []
    for rule in program.rules:
        head = relation_key(rule.head)
        for literal in rule.body:
            for atom, positive in _atoms(literal):
                if not positive and program.recursive(head, relation_key(atom)):
                    suspicious.append((rule, atom))
    if not suspicious:
        return
    rules_of_component: dict[int, list[Rule]] = {}
    for rule in program.rules:
        number = program.component[relation_key(rule.head)]
        rules_of_component.setdefault(number, []).append(rule)
    rule_components: dict[int, dict[int, int]] = {}
    for rule, atom in suspicious:
        number = program.component[relation_key(rule.head)]
        if number not in rule_components:
            rule_components[number] = _rule_level_components(rules_of_component[number])
        components = rule_components[number]
        own = components[id(rule)]
        for other in rules_of_component[number]:
            if components[id(other)] == own and _unifiable(atom, other.head):
                head, key = relation_key(rule.head), relation_key(atom)
                report.errors.append(
                    _problem(
                        rule,
                        f"negation is not stratified: {to_kif(rule.head)} depends on "
                        f"(not {to_kif(atom)}), which the rule at {other.where} derives "
                        f"from {to_kif(rule.head)} in turn ({_cycle(program, head, key)})",
                        _index_of(rule, ("not", atom), in_head=False),
                    )
                )
                break


def _rule_level_components(rules: list[Rule]) -> dict[int, int]:
    """Strongly connected components of rules (by ``id``), where a rule depends on
    every rule whose head unifies with one of its body atoms."""
    by_relation: dict[str, list[Rule]] = {}
    for rule in rules:
        by_relation.setdefault(relation_key(rule.head), []).append(rule)
    edges: dict[int, list[int]] = {}
    for rule in rules:
        targets = edges.setdefault(id(rule), [])
        for literal in rule.body:
            for atom, _positive in _atoms(literal):
                for other in by_relation.get(relation_key(atom), ()):
                    if _unifiable(atom, other.head):
                        targets.append(id(other))
    return _strongly_connected_components(edges)


def _unifiable(left: RawTerm, right: RawTerm) -> bool:
    """True when the two terms unify, their variables taken as distinct."""
    bindings: dict[tuple[str, int], tuple[RawTerm, int]] = {}

    def walk(term: RawTerm, side: int) -> tuple[RawTerm, int]:
        while isinstance(term, str) and term.startswith("?") and (term, side) in bindings:
            term, side = bindings[(term, side)]
        return term, side

    def occurs(variable: tuple[str, int], term: RawTerm, side: int) -> bool:
        stack = [(term, side)]
        while stack:
            current, current_side = walk(*stack.pop())
            if isinstance(current, str):
                if (current, current_side) == variable:
                    return True
            else:
                stack.extend((part, current_side) for part in current[1:])
        return False

    pending = [((left, 0), (right, 1))]
    while pending:
        (a, side_a), (b, side_b) = pending.pop()
        a, side_a = walk(a, side_a)
        b, side_b = walk(b, side_b)
        if (
            isinstance(b, str)
            and b.startswith("?")
            and not (isinstance(a, str) and a.startswith("?"))
        ):
            (a, side_a), (b, side_b) = (b, side_b), (a, side_a)
        if isinstance(a, str) and a.startswith("?"):
            if (a, side_a) != (b, side_b):
                if occurs((a, side_a), b, side_b):
                    return False
                bindings[(a, side_a)] = (b, side_b)
        elif isinstance(a, str) or isinstance(b, str):
            if a != b:
                return False
        elif len(a) != len(b) or a[0] != b[0]:
            return False
        else:
            pending.extend(((x, side_a), (y, side_b)) for x, y in zip(a[1:], b[1:], strict=True))
    return True


def _cycle(program: _Program, head: str, key: str) -> str:
    if key == head:
        return f"{head} -> {head}"
    steps = program.path(key, [head]) or []
    return " -> ".join([head, key] + [step for step, _ in steps])


def _check_recursion_restriction(program: _Program, report: ValidationReport) -> None:
    """In a rule p(t...) with a positive body atom q(v...) recursive with p, each v is
    ground, one of the head's arguments, or an argument of a positive body atom whose
    relation is not recursive with p, in every choice of disjuncts."""
    for rule in program.rules:
        head = relation_key(rule.head)
        for literal, argument in _unrestricted_recursion(program, rule):
            report.errors.append(
                _problem(
                    rule,
                    f"recursion restriction violated: in {to_kif(literal)}, which is "
                    f"recursive with {head}, the argument {to_kif(argument)} is not ground, "
                    f"not an argument of the head, and not an argument of a positive "
                    f"literal outside the recursion",
                    _index_of(rule, literal, in_head=False),
                )
            )


def _unrestricted_recursion(program: _Program, rule: Rule) -> Iterator[tuple[RawTerm, RawTerm]]:
    """The (recursive literal, argument) pairs of a rule that break the restriction."""
    head = relation_key(rule.head)
    body = _Conjunction.of(rule.body)
    head_args = set(_args(rule.head))

    def is_positive_atom(literal: RawTerm) -> bool:
        return not (_is_connective(literal, "not") or _is_connective(literal, "distinct"))

    def support(literal: RawTerm) -> set:
        """Arguments a literal vouches for: those of a positive, non-recursive atom."""
        if is_positive_atom(literal) and not program.recursive(head, relation_key(literal)):
            return set(_args(literal))
        return set()

    plain_support: set = set()
    for literal in body.plain:
        plain_support |= support(literal)
    group_support = [_common(support(d) for d in group) for group in body.groups]

    candidates: list[tuple[RawTerm, int | None]] = [(literal, None) for literal in body.plain]
    candidates += [(d, number) for number, group in enumerate(body.groups) for d in group]
    for literal, own_group in candidates:
        if not is_positive_atom(literal) or not program.recursive(head, relation_key(literal)):
            continue
        for argument in _args(literal):
            if is_ground(argument) or argument in head_args or argument in plain_support:
                continue
            # Another or-group vouches for the argument only if each of its disjuncts does;
            # the literal's own group does not, since choosing this literal excludes the rest.
            if any(
                argument in vouched
                for number, vouched in enumerate(group_support)
                if number != own_group
            ):
                continue
            yield literal, argument


def _check_roles(program: _Program, report: ValidationReport) -> None:
    """Roles are ground facts naming constants, each declared once; there is at least one."""
    declared: dict[str, Rule] = {}
    for rule in program.heads.get("role", []):
        if rule.body:
            report.errors.append(_problem(rule, "role may only be declared by facts, not by rules"))
            continue
        role = _args(rule.head)[0] if _arity(rule.head) == 1 else None
        if not isinstance(role, str) or role.startswith("?"):
            report.errors.append(_problem(rule, "a role must be a constant name"))
        elif role in declared:
            report.errors.append(
                _problem(rule, f"role {role} is already declared at {declared[role].where}")
            )
        else:
            declared[role] = rule
    if not program.heads.get("role"):
        report.errors.append(Problem("the game declares no role: add facts such as (role white)"))
    for keyword in _REQUIRED:
        if keyword not in program.heads:
            report.errors.append(Problem(f"the game has no {keyword} rule"))
    for keyword in ("legal", "goal"):
        for rule in program.heads.get(keyword, []):
            role = _args(rule.head)[0] if _arity(rule.head) else None
            if isinstance(role, str) and not role.startswith("?") and role not in declared:
                report.warnings.append(_problem(rule, f"{role} is not a declared role"))


def _check_keyword_placement(program: _Program, report: ValidationReport) -> None:
    """``true`` and ``does`` are never heads; ``init``, ``next``, ``base`` and ``input``
    are never in bodies."""
    for keyword in _NEVER_IN_HEADS:
        for rule in program.heads.get(keyword, []):
            report.errors.append(
                _problem(rule, f"{keyword} may only appear in rule bodies, never as a head", 0)
            )
    for rule in program.rules:
        reported: set[str] = set()
        for number, literal in enumerate(rule.body, start=1):
            for atom, _positive in _atoms(literal):
                name = relation_key(atom)
                if name in _ONLY_IN_HEADS and name not in reported:
                    reported.add(name)
                    report.errors.append(
                        _problem(
                            rule, f"{name} may only appear as a head, never in a rule body", number
                        )
                    )


def _check_keyword_dependencies(program: _Program, report: ValidationReport) -> None:
    """``init``, ``base`` and ``input`` do not depend on the turn (true, does, next,
    legal, goal, terminal); ``legal``, ``goal`` and ``terminal`` do not depend on does."""

    def forbid(keyword: str, targets: tuple[str, ...]) -> None:
        steps = program.path(keyword, targets)
        if steps is None:
            return
        chain = " -> ".join([keyword] + [step for step, _ in steps])
        rule = steps[0][1]
        index = next(
            (
                number
                for number, atom in _sentences(rule)
                if number and relation_key(atom) == steps[0][0]
            ),
            None,
        )
        report.errors.append(
            _problem(
                rule, f"{keyword} must not depend on {steps[-1][0]}, but it does: {chain}", index
            )
        )

    for keyword in _NEVER_TURN_DEPENDENT:
        forbid(keyword, _TURN_KEYWORDS)
    for keyword in _NEVER_MOVE_DEPENDENT:
        forbid(keyword, ("does",))


def _check_goal_values(program: _Program, report: ValidationReport) -> None:
    """A goal value written in a goal head is an integer from 0 to 100."""
    for rule in program.heads.get("goal", []):
        if _arity(rule.head) != 2:
            continue
        value = rule.head[2]
        if is_ground(value) and not (
            isinstance(value, str)
            and value.isascii()
            and value.isdigit()
            and 0 <= int(value) <= 100
        ):
            report.errors.append(
                _problem(rule, f"the goal value {to_kif(value)} is not an integer from 0 to 100", 0)
            )


# --- warnings ------------------------------------------------------------------------


def _warn_about_relation_use(program: _Program, report: ValidationReport) -> None:
    """Relations defined but never used, and relations used but never defined."""
    for name, rules in program.heads.items():
        if name not in program.used_in_bodies and _name_of_key(name) not in _KEYWORD_NAMES:
            report.warnings.append(
                _problem(rules[0], f"the relation {name} is defined but never used")
            )
    for name, rule in program.used_in_bodies.items():
        if name not in program.heads and name not in _PROVIDED:
            report.warnings.append(
                _problem(
                    rule, f"the relation {name} is used but never defined, so it is never true"
                )
            )


def _name_of_key(key: str) -> str:
    return key[1:-1] if key.startswith("(") else key


def _symbols(term: RawTerm) -> Iterator[str]:
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        else:
            stack.extend(current)


def _warn_about_symbols(program: _Program, report: ValidationReport) -> None:
    """Unusual characters, and one constant spelt with different capitalisation."""
    spellings: dict[str, dict[str, Rule]] = {}
    unusual: dict[str, Rule] = {}
    for rule in program.rules:
        for part in (rule.head, *rule.body):
            for symbol in _symbols(part):
                if symbol in _CONNECTIVES:
                    continue
                if not _USUAL_SYMBOL.fullmatch(symbol):
                    unusual.setdefault(symbol, rule)
                if not symbol.startswith("?"):
                    spellings.setdefault(symbol.lower(), {}).setdefault(symbol, rule)
    for symbol, rule in unusual.items():
        report.warnings.append(
            _problem(rule, f"the symbol {symbol} has characters that some players may not handle")
        )
    for variants in spellings.values():
        if len(variants) > 1:
            listed = _listing(f"{spelling} ({rule.where})" for spelling, rule in variants.items())
            report.warnings.append(
                Problem(f"inconsistent capitalisation: {listed} are different constants in GDL")
            )
