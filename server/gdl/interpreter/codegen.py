"""Turn each rule into a Python function that joins its body bottom-up.

A rule ``(<= (legal ?p (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?p)))``
becomes nested loops over hash indexes::

    def rule(db, add):
        I0 = db[K0].index(S0)          # true facts (cell _ _ b), keyed by nothing
        I1 = db[K1].index(S1)
        for f0 in I0:
            v0 = f0[0][1]; v1 = f0[0][2]
            for f1 in I1:
                v2 = f1[0][1]
                add((v2, ('mark', v0, v1)))

Body literals are ordered greedily: tests as soon as their variables are bound,
then the positive literal expected to yield the fewest matches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import GdlError
from ..terms import RawTerm, variables_of
from .program import FlatRule, RelationKey, key_name, literal_atom, relation_args, relation_key

Path = tuple[int, ...]


def _access(base: str, path: Path) -> str:
    return base + "".join(f"[{step}]" for step in path)


@dataclass(slots=True)
class IndexSpec:
    """How to index a relation for one literal: structure to match, values to key on."""

    structure: tuple[tuple[Path, str, int], ...]
    key_paths: tuple[Path, ...]
    name: str = ""
    build: Callable[[Sequence[tuple]], object] = field(default=lambda facts: None)

    def __post_init__(self) -> None:
        self.name = repr((self.structure, self.key_paths))
        self.build = _compile_index_builder(self.structure, self.key_paths)


_BUILDERS: dict[str, Callable] = {}


def _compile_index_builder(
    structure: tuple[tuple[Path, str, int], ...], key_paths: tuple[Path, ...]
) -> Callable:
    name = repr((structure, key_paths))
    cached = _BUILDERS.get(name)
    if cached is not None:
        return cached
    conditions = [
        f"{_access('f', path)}.__class__ is tuple and len({_access('f', path)}) == {arity + 1}"
        f" and {_access('f', path)}[0] == {functor!r}"
        for path, functor, arity in structure
    ]
    lines = ["def build(facts):"]
    if not key_paths:
        if not conditions:
            lines.append("    return list(facts)")
        else:
            lines.append(f"    return [f for f in facts if {' and '.join(conditions)}]")
    else:
        if len(key_paths) == 1:
            key = _access("f", key_paths[0])
        else:
            key = "(" + ", ".join(_access("f", path) for path in key_paths) + ",)"
        lines.append("    index = {}")
        lines.append("    get = index.get")
        lines.append("    for f in facts:")
        indent = "        "
        if conditions:
            lines.append(f"{indent}if not ({' and '.join(conditions)}): continue")
        lines.append(f"{indent}k = {key}")
        lines.append(f"{indent}bucket = get(k)")
        lines.append(f"{indent}if bucket is None: index[k] = [f]")
        lines.append(f"{indent}else: bucket.append(f)")
        lines.append("    return index")
    namespace: dict = {}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from parsed terms only
    builder = namespace["build"]
    _BUILDERS[name] = builder
    return builder


class Relation:
    """The facts of one relation (argument tuples) with lazily built indexes."""

    __slots__ = ("facts", "_indexes")

    def __init__(self, facts: set | None = None) -> None:
        self.facts: set = facts if facts is not None else set()
        self._indexes: dict[str, object] = {}

    def index(self, spec: IndexSpec) -> object:
        """The index of these facts for ``spec`` (built on first use)."""
        found = self._indexes.get(spec.name)
        if found is None:
            found = self._indexes[spec.name] = spec.build(self.facts)
        return found

    def invalidate(self) -> None:
        """Forget indexes after the facts changed."""
        self._indexes.clear()


class _Source:
    """Python source with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def add(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)


@dataclass(slots=True)
class _Pattern:
    """What matching one literal's arguments needs, given the variables bound so far."""

    structure: list[tuple[Path, str, int]]
    keys: list[tuple[Path, str]]  # path, expression of the expected value
    binds: list[tuple[Path, str]]  # path, variable
    equal: list[tuple[Path, Path]]  # repeated new variable: path equals path


def _analyse_pattern(args: tuple, bound: dict[str, str]) -> _Pattern:
    pattern = _Pattern([], [], [], [])
    first_seen: dict[str, Path] = {}

    def walk(term: RawTerm, path: Path) -> None:
        if isinstance(term, str):
            if term.startswith("?"):
                if term in bound:
                    pattern.keys.append((path, bound[term]))
                elif term in first_seen:
                    pattern.equal.append((path, first_seen[term]))
                else:
                    first_seen[term] = path
                    pattern.binds.append((path, term))
            else:
                pattern.keys.append((path, repr(term)))
            return
        pattern.structure.append((path, term[0], len(term) - 1))
        for position, argument in enumerate(term[1:], start=1):
            walk(argument, (*path, position))

    for position, argument in enumerate(args):
        walk(argument, (position,))
    return pattern


def term_expression(term: RawTerm, bound: dict[str, str]) -> str:
    """A Python expression building ``term`` from bound variables."""
    if isinstance(term, str):
        if term.startswith("?"):
            return bound[term]
        return repr(term)
    return "(" + "".join(term_expression(part, bound) + ", " for part in term) + ")"


def args_expression(args: tuple, bound: dict[str, str]) -> str:
    """A Python expression building an argument tuple."""
    return "(" + "".join(term_expression(arg, bound) + ", " for arg in args) + ")"


SizeEstimate = Callable[[RelationKey, IndexSpec | None], float]


@dataclass(slots=True)
class CompiledRule:
    """The functions evaluating one rule: naive, and one per recursive literal."""

    rule: FlatRule
    naive: Callable
    deltas: list[tuple[RelationKey, Callable]]


def _is_positive_atom(literal: RawTerm) -> bool:
    positive, atom = literal_atom(literal)
    return positive and atom is not None


class RuleCompiler:
    """Generates join functions; shares index specs between rules."""

    def __init__(self, estimate: SizeEstimate) -> None:
        self.estimate = estimate
        self.specs: dict[str, IndexSpec] = {}

    def spec(self, structure: list, key_paths: list) -> IndexSpec:
        candidate = IndexSpec(tuple(structure), tuple(key_paths))
        return self.specs.setdefault(candidate.name, candidate)

    def compile(self, rule: FlatRule, recursive_keys: frozenset[RelationKey]) -> CompiledRule:
        """Compile ``rule``; literals over ``recursive_keys`` get semi-naive variants."""
        naive = self._generate(rule, delta_position=None)
        deltas = []
        for position, literal in enumerate(rule.body):
            positive, atom = literal_atom(literal)
            if positive and atom is not None and relation_key(atom) in recursive_keys:
                deltas.append((relation_key(atom), self._generate(rule, delta_position=position)))
        return CompiledRule(rule, naive, deltas)

    def _plan(self, rule: FlatRule, delta_position: int | None) -> list[int]:
        """Order of body literals: tests early, then cheapest positive literal."""
        remaining = list(range(len(rule.body)))
        bound: set[str] = set()
        order: list[int] = []

        def place_tests() -> None:
            for position in list(remaining):
                literal = rule.body[position]
                positive, atom = literal_atom(literal)
                if positive and atom is not None:
                    continue
                if variables_of(literal) <= bound:
                    order.append(position)
                    remaining.remove(position)

        if delta_position is not None:
            order.append(delta_position)
            remaining.remove(delta_position)
            bound |= variables_of(rule.body[delta_position])
        place_tests()
        while True:
            positives = [p for p in remaining if _is_positive_atom(rule.body[p])]
            if not positives:
                break
            best = min(positives, key=lambda p: (self._cost(rule.body[p], bound), p))
            order.append(best)
            remaining.remove(best)
            bound |= variables_of(rule.body[best])
            place_tests()
        if remaining:
            unbound = sorted(set().union(*(variables_of(rule.body[p]) for p in remaining)) - bound)
            raise GdlError(
                f"{rule.source.where}: unsafe rule {rule.source}: "
                f"variable(s) {', '.join(unbound)} not bound by a positive literal"
            )
        return order

    def _cost(self, atom: RawTerm, bound: set[str]) -> float:
        args = relation_args(atom)
        if variables_of(atom) <= bound:
            return -1.0
        pattern = _analyse_pattern(args, {name: name for name in bound})
        spec = self.spec(pattern.structure, [path for path, _ in pattern.keys])
        return self.estimate(relation_key(atom), spec)

    def _generate(self, rule: FlatRule, delta_position: int | None) -> Callable:
        order = self._plan(rule, delta_position)
        source = _Source()
        prelude: list[str] = []
        namespace: dict[str, object] = {}
        bound: dict[str, str] = {}
        variable_count = 0

        def constant(value: object, prefix: str) -> str:
            name = f"{prefix}{len(namespace)}"
            namespace[name] = value
            return name

        def new_variable(variable: str) -> str:
            nonlocal variable_count
            name = f"v{variable_count}"
            variable_count += 1
            bound[variable] = name
            return name

        fact_count = 0
        for position in order:
            literal = rule.body[position]
            positive, atom = literal_atom(literal)
            if atom is None:  # distinct, or not distinct
                inner = literal if positive else literal[1]
                left = term_expression(inner[1], bound)
                right = term_expression(inner[2], bound)
                operator = "!=" if positive else "=="
                source.add(f"if {left} {operator} {right}:")
                source.depth += 1
                continue
            key = relation_key(atom)
            args = relation_args(atom)
            key_name_ = constant(key, "K")
            if not positive:
                facts = f"N{position}"
                prelude.append(f"{facts} = db[{key_name_}].facts")
                source.add(f"if {args_expression(args, bound)} not in {facts}:")
                source.depth += 1
                continue
            if variables_of(atom) <= set(bound) and position != delta_position:
                facts = f"F{position}"
                prelude.append(f"{facts} = db[{key_name_}].facts")
                source.add(f"if {args_expression(args, bound)} in {facts}:")
                source.depth += 1
                continue
            pattern = _analyse_pattern(args, bound)
            fact = f"f{fact_count}"
            fact_count += 1
            later_variables: set[str] = set(variables_of(rule.head))
            for other in order[order.index(position) + 1 :]:
                later_variables |= variables_of(rule.body[other])
            new_names = [variable for _, variable in pattern.binds]
            if position == delta_position:
                checks = [
                    f"{_access(fact, path)}.__class__ is tuple and "
                    f"len({_access(fact, path)}) == {arity + 1} and "
                    f"{_access(fact, path)}[0] == {functor!r}"
                    for path, functor, arity in pattern.structure
                ]
                checks += [f"{_access(fact, path)} == {value}" for path, value in pattern.keys]
                source.add(f"for {fact} in delta:")
                source.depth += 1
                if checks:
                    source.add(f"if not ({' and '.join(checks)}): continue")
            else:
                spec = self.spec(pattern.structure, [path for path, _ in pattern.keys])
                spec_name = constant(spec, "S")
                index = f"I{position}"
                prelude.append(f"{index} = db[{key_name_}].index({spec_name})")
                if not pattern.keys:
                    lookup = index
                elif len(pattern.keys) == 1:
                    lookup = f"{index}.get({pattern.keys[0][1]}, ())"
                else:
                    lookup = f"{index}.get(({', '.join(v for _, v in pattern.keys)},), ())"
                existential = not pattern.equal and not (set(new_names) & later_variables)
                if existential:
                    source.add(f"if {lookup}:")
                    source.depth += 1
                    continue
                source.add(f"for {fact} in {lookup}:")
                source.depth += 1
            for path, other in pattern.equal:
                source.add(f"if {_access(fact, path)} != {_access(fact, other)}: continue")
            for path, variable in pattern.binds:
                source.add(f"{new_variable(variable)} = {_access(fact, path)}")
        unbound_head = sorted(variables_of(rule.head) - set(bound))
        if unbound_head:
            raise GdlError(
                f"{rule.source.where}: unsafe rule {rule.source}: head variable(s) "
                f"{', '.join(unbound_head)} not bound by a positive literal"
            )
        head_args = args_expression(relation_args(rule.head), bound)
        source.add(f"add({head_args})")

        signature = "db, delta, add" if delta_position is not None else "db, add"
        text = [f"def rule({signature}):"]
        text += ["    " + line for line in prelude]
        text += source.lines
        try:
            exec("\n".join(text), namespace)  # noqa: S102 - generated from parsed terms only
        except (SyntaxError, KeyError) as error:  # pragma: no cover - a bug, not bad input
            raise GdlError(f"cannot compile {rule.source}: {error}") from error
        return namespace["rule"]  # type: ignore[return-value]


def describe(rule: FlatRule) -> str:
    """The rule's head relation, for messages."""
    return key_name(rule.head_key)
