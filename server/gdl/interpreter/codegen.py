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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeAlias, cast

from ..errors import GdlError
from ..terms import RawTerm, variables_of
from .program import FlatRule, RelationKey, literal_atom, relation_args, relation_key

Path = tuple[int, ...]
MAX_NESTED_LOOPS = 16
CANONICAL_FACTS = 1 << 15
"""A relation's table of canonical facts is emptied once it holds more (a game whose
moves never recur keeps at most this many alive through it)."""
DEMAND_UNBOUND_COST = 1e9
DEMAND_WAIT_FACTOR = 1e3
DEMAND_WAIT_LIMIT = 100.0
"""An on-demand literal waits for a literal that binds its unknowns only when that
literal is this cheap; enumerating a large domain (every ``succ`` pair) to ask fully
bound questions costs more than one question with an unknown."""


def _access(base: str, path: Path) -> str:
    return base + "".join(f"[{step}]" for step in path)


@dataclass(slots=True)
class IndexSpec:
    """How to index a relation for one literal: structure to match, values to key on."""

    structure: tuple[tuple[Path, str, int], ...]
    key_paths: tuple[Path, ...]
    name: str = ""
    build: Callable[[Iterable[tuple]], object] = field(default=lambda facts: None)
    patch: Callable[[dict, Iterable[tuple], Iterable[tuple]], dict] | None = None
    """For a keyed index: a copy of an index with facts taken out and others put in
    (made on first use, see :meth:`patcher`)."""
    head: str | None = None
    """The functor the first argument of a matching fact must have, if any: the index is
    built from the facts of that head only (see :meth:`Relation.group`)."""

    def __post_init__(self) -> None:
        self.name = repr((self.structure, self.key_paths))
        self.build = _compile_index_builder(self.structure, self.key_paths)
        self.head = next((functor for path, functor, _ in self.structure if path == (0,)), None)

    def patcher(self) -> Callable[[dict, Iterable[tuple], Iterable[tuple]], dict]:
        """:attr:`patch`, made now if not yet (keyed indexes only)."""
        if self.patch is None:
            self.patch = _compile_index_patcher(self.structure, self.key_paths)
        return self.patch


_BUILDERS: dict[str, Callable] = {}
_PATCHERS: dict[str, Callable] = {}


def _reader(structure: tuple[tuple[Path, str, int], ...], key_paths: tuple[Path, ...]) -> str:
    """How an index's code reads a fact ``f``: as ``a``, its first argument taken once,
    when every path the index reads lies inside that argument (a ``true`` fact's fluent),
    else as ``f`` itself."""
    paths = [path for path, _, _ in structure] + list(key_paths)
    return "a" if paths and all(path[:1] == (0,) for path in paths) else "f"


def _read(reader: str, path: Path) -> str:
    """The expression of the part of fact ``f`` at ``path``, read through ``reader``."""
    return _access(reader, path[1:] if reader == "a" else path)


def _conditions(structure: tuple[tuple[Path, str, int], ...], reader: str = "f") -> list[str]:
    """Tests of a fact ``f`` for the structure an index matches."""
    return [
        f"{_read(reader, path)}.__class__ is tuple and len({_read(reader, path)}) == {arity + 1}"
        f" and {_read(reader, path)}[0] == {functor!r}"
        for path, functor, arity in structure
    ]


def _key_expression(key_paths: tuple[Path, ...], reader: str = "f") -> str:
    if len(key_paths) == 1:
        return _read(reader, key_paths[0])
    return "(" + ", ".join(_read(reader, path) for path in key_paths) + ",)"


def _compile_index_patcher(
    structure: tuple[tuple[Path, str, int], ...], key_paths: tuple[Path, ...]
) -> Callable:
    """``patch(index, removed, added)``: a keyed index of some facts made into the index of
    those facts without ``removed`` (facts among them) and with ``added`` (facts not among
    them), the given index left as it was."""
    name = repr((structure, key_paths))
    cached = _PATCHERS.get(name)
    if cached is not None:
        return cached
    conditions = _conditions(structure)
    test = f"        if not ({' and '.join(conditions)}): continue" if conditions else ""
    lines = [
        "def patch(index, removed, added):",
        "    index = index.copy()",
        "    get = index.get",
        "    for f in removed:",
        test,
        f"        k = {_key_expression(key_paths)}",
        "        bucket = index[k]",
        "        if len(bucket) == 1: del index[k]",
        "        else:",
        "            at = bucket.index(f)",
        "            index[k] = bucket[:at] + bucket[at + 1:]",
        "    for f in added:",
        test,
        f"        k = {_key_expression(key_paths)}",
        "        bucket = get(k)",
        "        index[k] = (f,) if bucket is None else bucket + (f,)",
        "    return index",
    ]
    namespace: dict = {}
    exec("\n".join(line for line in lines if line), namespace)  # noqa: S102 - from parsed terms only
    patcher = namespace["patch"]
    _PATCHERS[name] = patcher
    return patcher


def _compile_index_builder(
    structure: tuple[tuple[Path, str, int], ...], key_paths: tuple[Path, ...]
) -> Callable:
    name = repr((structure, key_paths))
    cached = _BUILDERS.get(name)
    if cached is not None:
        return cached
    lines = ["def build(facts):"]
    if not key_paths:
        conditions = _conditions(structure)
        if not conditions:
            lines.append("    return list(facts)")
        else:
            lines.append(f"    return [f for f in facts if {' and '.join(conditions)}]")
    else:
        reader = _reader(structure, key_paths)
        conditions = _conditions(structure, reader)
        key = _key_expression(key_paths, reader)
        lines.append("    index = {}")
        lines.append("    get = index.get")
        lines.append("    for f in facts:")
        indent = "        "
        if reader == "a":
            lines.append(f"{indent}a = f[0]")
        if conditions:
            lines.append(f"{indent}if not ({' and '.join(conditions)}): continue")
        lines.append(f"{indent}k = {key}")
        lines.append(f"{indent}bucket = get(k)")
        lines.append(f"{indent}if bucket is None: index[k] = [f]")
        lines.append(f"{indent}else: bucket.append(f)")
        lines.append("    for k, bucket in index.items(): index[k] = tuple(bucket)")
        lines.append("    return index")
    namespace: dict = {}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from parsed terms only
    builder = namespace["build"]
    _BUILDERS[name] = builder
    return builder


PATCH_SHARE = 4
"""A keyed index is made from the base relation's (see :attr:`Relation.base`) when the
facts that differ are at most one in this many of the relation's."""
PATCH_MIN_FACTS = 32
"""Smaller relations build their indexes (the interpreter gives them no base): comparing
the facts would cost about as much."""


FactGroups: TypeAlias = dict[RawTerm, list[tuple] | set[tuple] | frozenset[tuple]]
"""Facts grouped by the head of their first argument (see :meth:`Relation.group`)."""


class Relation:
    """The facts of one relation (argument tuples) with lazily built indexes."""

    __slots__ = ("facts", "_indexes", "base", "_groups")

    def __init__(self, facts: set | None = None, groups: FactGroups | None = None) -> None:
        """``groups``: the facts already grouped as :meth:`group` groups them, if known."""
        self.facts: set = facts if facts is not None else set()
        self._indexes: dict[str, object] = {}
        self._groups: FactGroups | None = groups
        self.base: Relation | None = None
        """The same relation in a state like this one (the one before, in a game), whose
        keyed indexes are patched with the facts that differ rather than built anew when
        few differ. Any relation gives the right indexes; a similar one, faster ones."""

    def index(self, spec: IndexSpec) -> object:
        """The index of these facts for ``spec`` (built on first use)."""
        found = self._indexes.get(spec.name)
        if found is None:
            base = self.base
            facts = self.facts
            if base is not None:
                known = base._indexes.get(spec.name)
                if known.__class__ is dict:  # keyed, and built
                    before = base.facts
                    most = len(facts) // PATCH_SHARE
                    added = facts - before
                    if len(added) <= most:
                        removed = before - facts
                        if len(added) + len(removed) <= most:
                            found = spec.patcher()(known, removed, added)
            if found is None:
                head = spec.head
                found = spec.build(facts if head is None else self.group(head))
            self._indexes[spec.name] = found
        return found

    def group(self, head: str) -> list[tuple] | set[tuple] | frozenset[tuple] | tuple:
        """The facts whose first argument is a compound with functor ``head`` or the
        constant ``head`` (the facts grouped so on first use): each index of a structure
        reads its own group, not every fact (``true`` facts of many kinds)."""
        groups = self._groups
        if groups is None:
            built: dict[RawTerm, list[tuple]] = {}
            get = built.get
            for fact in self.facts:
                first = fact[0]
                key = first[0] if first.__class__ is tuple else first
                found = get(key)
                if found is None:
                    built[key] = [fact]
                else:
                    found.append(fact)
            groups = self._groups = cast(FactGroups, built)
        return groups.get(head, ())

    def follow(self, base: Relation | None) -> None:
        """Take ``base`` as the relation to patch indexes from; ``base`` lets go of its own
        (so that relations do not chain back through every state)."""
        if base is not None:
            base.base = None
        self.base = base

    def invalidate(self) -> None:
        """Forget indexes after the facts changed."""
        self._indexes.clear()
        self._groups = None


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


WHOLE_ARGS: RawTerm = ("",)
"""Marks an argument tuple among the terms a rule knows (no term has an empty functor)."""


def term_expression(
    term: RawTerm, bound: dict[str, str], known: dict[RawTerm, str] | None = None
) -> str:
    """A Python expression building ``term`` from bound variables; a compound in
    ``known`` (a part of a matched fact equal to it) is taken as it is, not rebuilt."""
    if isinstance(term, str):
        if term.startswith("?"):
            return bound[term]
        return repr(term)
    if known:
        found = known.get(term)
        if found is not None:
            return found
    return "(" + "".join(term_expression(part, bound, known) + ", " for part in term) + ")"


def args_expression(
    args: tuple, bound: dict[str, str], known: dict[RawTerm, str] | None = None
) -> str:
    """A Python expression building an argument tuple (``known`` as for
    :func:`term_expression`; an argument tuple equal to a matched fact's is that fact)."""
    if known:
        found = known.get((WHOLE_ARGS, *args))
        if found is not None:
            return found
    return "(" + "".join(term_expression(arg, bound, known) + ", " for arg in args) + ")"


def _note_matched(args: tuple, fact: str, known: dict[RawTerm, str]) -> None:
    """Remember that ``fact`` matched ``args``: its parts equal the compounds of ``args``
    (under the bindings made so far), so later terms built of them can reuse them."""
    known.setdefault((WHOLE_ARGS, *args), fact)

    def walk(term: RawTerm, path: Path) -> None:
        if isinstance(term, tuple):
            known.setdefault(term, _access(fact, path))
            for position, part in enumerate(term[1:], start=1):
                walk(part, (*path, position))

    for position, argument in enumerate(args):
        walk(argument, (position,))


SizeEstimate = Callable[[RelationKey, IndexSpec | None, tuple | None], float]
"""Expected matches of a literal: its relation, index, and its keys' values when all
are constants (else None)."""


@dataclass(slots=True)
class CompiledRule:
    """The functions evaluating one rule: naive, and one per recursive literal."""

    rule: FlatRule
    naive: Callable
    deltas: list[tuple[RelationKey, Callable]]
    head_key: RelationKey = ""
    """The relation of the rule's head (``rule.head_key``, worked out once)."""

    def __post_init__(self) -> None:
        self.head_key = self.rule.head_key


def _checks(fact: str, structure: list, keys: list) -> list[str]:
    """Conditions a fact must meet to match a pattern's structure and known values."""
    checks = [
        f"{_access(fact, path)}.__class__ is tuple and "
        f"len({_access(fact, path)}) == {arity + 1} and "
        f"{_access(fact, path)}[0] == {functor!r}"
        for path, functor, arity in structure
    ]
    checks += [f"{_access(fact, path)} == {value}" for path, value in keys]
    return checks


def _constant_keys(args: tuple, bound: set[str]) -> tuple | None:
    """The values :func:`_analyse_pattern` keys a literal on, in its order, when all are
    constants (no variable bound before); else None."""
    found: list[str] = []
    for term in _walk_leaves(args):
        if not term.startswith("?"):
            found.append(term)
        elif term in bound:
            return None
    return tuple(found) or None


def _walk_leaves(args: tuple) -> Iterable[str]:
    """The constants and variables of argument terms, depth first (functors left out)."""
    for term in args:
        if isinstance(term, str):
            yield term
        else:
            yield from _walk_leaves(term[1:])


def _is_positive_atom(literal: RawTerm) -> bool:
    positive, atom = literal_atom(literal)
    return positive and atom is not None


class RuleCompiler:
    """Generates join functions; shares index specs between rules."""

    def __init__(
        self,
        estimate: SizeEstimate,
        on_demand: Callable[[RelationKey], bool] = lambda key: False,
        canonical: frozenset[RelationKey] = frozenset(),
    ) -> None:
        """``canonical``: the relations whose facts are made canonical as they are
        derived (see :meth:`canonical_table`)."""
        self.estimate = estimate
        self.on_demand = on_demand
        self.specs: dict[str, IndexSpec] = {}
        self.canonical = canonical
        self._tables: dict[RelationKey, dict[tuple, tuple]] = {}

    def canonical_table(self, key: RelationKey) -> dict[tuple, tuple]:
        """The facts of a canonical relation met so far, each its own key (emptied once
        past :data:`CANONICAL_FACTS`): a derived fact equal to one of them is replaced by
        it, and the tuples just made die at once.

        A state's facts live as long as its context (the last states asked about), and
        a game with hundreds of legal moves a state made that many new tuples a state
        for the cyclic collector to walk, each several times before it died (sudoku: a
        quarter of its time, young collections and the promotions they lead to). Made
        canonical, the moves that live on are old objects the collector has already set
        aside, and the new tuples are freed before any collection sees them."""
        return self._tables.setdefault(key, {})

    def compile_demand(self, rule: FlatRule, positions: tuple[int, ...]) -> Callable:
        """What derives the head facts of ``rule`` whose arguments at ``positions``
        equal given values: ``bind(db)`` looks up once the relations and indexes the
        rule reads in ``db`` and returns them after the deriving function, as ``env``:
        ``env[0](db, [values], add, env)`` is asked many times (once per call of a
        relation computed on demand)."""
        head_args = relation_args(rule.head)
        given = ("$given", *(head_args[position] for position in positions))
        return self._generate(
            FlatRule(rule.head, (given, *rule.body), rule.source), 0, bind_db=True
        )

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
        """Order of body literals: tests early, then cheapest positive literal. A negated
        relation computed on demand is a costly test: it waits for the cheap filters
        whose variables are bound (tests, and positive literals over materialised
        relations with every variable bound), which may spare asking it."""
        remaining = list(range(len(rule.body)))
        bound: set[str] = set()
        order: list[int] = []

        def place_tests() -> None:
            costly = []
            for position in list(remaining):
                literal = rule.body[position]
                positive, atom = literal_atom(literal)
                if positive and atom is not None or not variables_of(literal) <= bound:
                    continue
                if atom is not None and self.on_demand(relation_key(atom)):
                    costly.append(position)
                    continue
                order.append(position)
                remaining.remove(position)
            if any(self._is_cheap_filter(rule.body[p], bound) for p in remaining):
                return  # placed first; the costly tests come after
            for position in costly:
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
            best = min(
                positives,
                key=lambda p: (self._cost(rule.body[p], bound, rule.body, remaining), p),
            )
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

    def _is_cheap_filter(self, literal: RawTerm, bound: set[str]) -> bool:
        """A positive literal over a materialised relation with every variable bound."""
        positive, atom = literal_atom(literal)
        return (
            positive
            and atom is not None
            and variables_of(atom) <= bound
            and not self.on_demand(relation_key(atom))
        )

    def _cost(
        self,
        atom: RawTerm,
        bound: set[str],
        body: tuple[RawTerm, ...] = (),
        remaining: list[int] | None = None,
    ) -> float:
        args = relation_args(atom)
        if variables_of(atom) <= bound:  # a filter: a set membership before a question
            return -0.5 if self.on_demand(relation_key(atom)) else -1.0
        if self.on_demand(relation_key(atom)):
            # Asked top-down: the fewer unknown arguments the better, and wait for
            # other literals that can bind them.
            unknown = [arg for arg in args if not variables_of(arg) <= bound]
            if len(unknown) == len(args):
                return DEMAND_UNBOUND_COST
            missing = variables_of(atom) - bound
            waiting = False
            for position in remaining or ():
                other = body[position]
                if (
                    other is not atom
                    and _is_positive_atom(other)
                    and not self.on_demand(relation_key(other))
                    and missing & variables_of(other)
                    and self._cost(other, bound) <= DEMAND_WAIT_LIMIT
                ):
                    waiting = True
                    break
            return 10.0 ** len(unknown) * (DEMAND_WAIT_FACTOR if waiting else 1.0)
        pattern = _analyse_pattern(args, {name: name for name in bound})
        spec = self.spec(pattern.structure, [path for path, _ in pattern.keys])
        return self.estimate(relation_key(atom), spec, _constant_keys(args, bound))

    def _generate(
        self, rule: FlatRule, delta_position: int | None, bind_db: bool = False
    ) -> Callable:
        """The function joining ``rule``'s body: ``rule(db, [delta,] add)``; with
        ``bind_db``, ``bind(db)`` returning ``env``: ``rule`` and what ``rule(db, delta,
        add, env)`` reads of ``db`` (its relations and indexes)."""
        order = self._plan(rule, delta_position)
        namespace: dict[str, object] = {}
        canonical = rule.head_key in self.canonical and bool(variables_of(rule.head))
        if canonical:  # (a head without variables is a constant: no tuple is made)
            table = self.canonical_table(rule.head_key)
            namespace["_canonical"], namespace["_canonical_table"] = table.setdefault, table
        functions: list[str] = []
        counters = {"variable": 0, "function": 0, "fact": 0}
        extra = ["delta"] if delta_position is not None else []

        def constant(value: object, prefix: str) -> str:
            name = f"{prefix}{len(namespace)}"
            namespace[name] = value
            return name

        def build(name: str, params: list[str], start: int, bound: dict[str, str]) -> None:
            """Write one function evaluating ``order[start:]``; very deep joins continue
            in another function, since Python limits nested blocks."""
            prelude: list[str] = []
            lines: list[str] = []
            loops = 0
            known: dict[RawTerm, str] = {}  # terms equal to parts of matched facts

            def emit(line: str) -> None:
                lines.append("    " * (loops + 1) + line)

            if canonical and not start:  # (a continuation runs inside the rule's loops)
                emit(f"if len(_canonical_table) > {CANONICAL_FACTS}: _canonical_table.clear()")

            def guard(condition: str) -> None:
                emit(f"if not ({condition}): {'continue' if loops else 'return'}")

            def open_loop(fact: str, source: str) -> None:
                """Loop over ``source``; the outermost loop first returns when it is empty,
                before what the literals after it read is looked up."""
                if loops or bind_db:
                    emit(f"for {fact} in {source}:")
                    return
                emit(f"L{fact} = {source}")
                emit(f"if not L{fact}: return")
                emit(f"for {fact} in L{fact}:")

            def fetch(line: str) -> None:
                """Look up what a literal reads of ``db``: where the literal is tested
                when that is outside every loop (so that a rule that returns early looks
                up, and indexes, nothing more), else before the first loop."""
                if loops or bind_db:
                    prelude.append(line)
                else:
                    emit(line)

            def needed_after(step: int) -> set[str]:
                """Variables the head or the literals after ``step`` still use."""
                needed = set(variables_of(rule.head))
                for other in order[step + 1 :]:
                    needed |= variables_of(rule.body[other])
                return needed

            def new_variable(variable: str) -> str:
                local = f"v{counters['variable']}"
                counters["variable"] += 1
                bound[variable] = local
                return local

            for step in range(start, len(order)):
                if loops >= MAX_NESTED_LOOPS:
                    continuation = f"more{counters['function']}"
                    counters["function"] += 1
                    arguments = ["db", "add", *extra, *bound.values()]
                    emit(f"{continuation}({', '.join(arguments)})")
                    build(continuation, arguments, step, dict(bound))
                    break
                position = order[step]
                literal = rule.body[position]
                positive, atom = literal_atom(literal)
                if atom is None and literal[0] == "or":  # distincts, one of which holds
                    tests = [
                        f"{term_expression(branch[1], bound, known)} != "
                        f"{term_expression(branch[2], bound, known)}"
                        for branch in literal[1:]
                    ]
                    guard(" or ".join(tests))
                    continue
                if atom is None:  # distinct, or not distinct
                    inner = literal if positive else literal[1]
                    left = term_expression(inner[1], bound, known)
                    right = term_expression(inner[2], bound, known)
                    guard(f"{left} {'!=' if positive else '=='} {right}")
                    continue
                key = constant(relation_key(atom), "K")
                args = relation_args(atom)
                if self.on_demand(relation_key(atom)) and position != delta_position:
                    given = tuple(
                        index for index, arg in enumerate(args) if variables_of(arg) <= set(bound)
                    )
                    values = (
                        "("
                        + "".join(
                            term_expression(args[index], bound, known) + ", " for index in given
                        )
                        + ")"
                    )
                    # the answers found already, read before the table is asked
                    asker, memo, found = f"A{position}", f"M{position}", f"R{position}"
                    fetch(f"{asker} = db[{key}].call_for({given!r})")
                    fetch(f"{memo} = {asker}.memo")
                    known_answers = f"({found} := {memo}.get({values})) is not None"
                    lookup = f"({found} if {known_answers} else {asker}.ask({values}))"
                    exists = f"({found} if {known_answers} else {asker}.ask({values}, True))"
                    if len(given) == len(args):
                        guard(exists if positive else f"not {exists}")
                        continue
                    pattern = _analyse_pattern(args, bound)
                    fact = f"f{counters['fact']}"
                    counters["fact"] += 1
                    later = needed_after(step)
                    new_names = {variable for _, variable in pattern.binds}
                    free_paths = [item for item in pattern.structure if item[0][0] not in given]
                    checks = _checks(
                        fact, free_paths, [item for item in pattern.keys if item[0][0] not in given]
                    )
                    if not pattern.equal and not checks and not (new_names & later):
                        guard(exists)
                        continue
                    open_loop(fact, lookup)
                    loops += 1
                    if checks:
                        guard(" and ".join(checks))
                    for path, other_path in pattern.equal:
                        guard(f"{_access(fact, path)} == {_access(fact, other_path)}")
                    for path, variable in pattern.binds:
                        emit(f"{new_variable(variable)} = {_access(fact, path)}")
                    _note_matched(args, fact, known)
                    continue
                if not positive:
                    facts = f"N{position}"
                    fetch(f"{facts} = db[{key}].facts")
                    guard(f"{args_expression(args, bound, known)} not in {facts}")
                    continue
                if variables_of(atom) <= set(bound) and position != delta_position:
                    facts = f"F{position}"
                    fetch(f"{facts} = db[{key}].facts")
                    guard(f"{args_expression(args, bound, known)} in {facts}")
                    continue
                pattern = _analyse_pattern(args, bound)
                fact = f"f{counters['fact']}"
                counters["fact"] += 1
                later = needed_after(step)
                if position == delta_position:
                    checks = _checks(fact, pattern.structure, pattern.keys)
                    emit(f"for {fact} in delta:")
                    loops += 1
                    if checks:
                        guard(" and ".join(checks))
                else:
                    spec = self.spec(pattern.structure, [path for path, _ in pattern.keys])
                    index = f"I{position}"
                    cached = f"db[{key}]._indexes.get({constant(spec.name, 'C')})"
                    fetch(f"{index} = {cached} or db[{key}].index({constant(spec, 'S')})")
                    if not pattern.keys:
                        lookup = index
                    elif len(pattern.keys) == 1:
                        lookup = f"{index}.get({pattern.keys[0][1]}, ())"
                    else:
                        values = ", ".join(value for _, value in pattern.keys)
                        lookup = f"{index}.get(({values},), ())"
                    new_names = {variable for _, variable in pattern.binds}
                    if not pattern.equal and not (new_names & later):
                        guard(lookup)  # only existence matters
                        continue
                    open_loop(fact, lookup)
                    loops += 1
                for path, other_path in pattern.equal:
                    guard(f"{_access(fact, path)} == {_access(fact, other_path)}")
                for path, variable in pattern.binds:
                    emit(f"{new_variable(variable)} = {_access(fact, path)}")
                _note_matched(args, fact, known)
            else:
                unbound_head = sorted(variables_of(rule.head) - set(bound))
                if unbound_head:
                    raise GdlError(
                        f"{rule.source.where}: unsafe rule {rule.source}: head variable(s) "
                        f"{', '.join(unbound_head)} not bound by a positive literal"
                    )
                fact = args_expression(relation_args(rule.head), bound, known)
                if canonical and fact.startswith("("):  # a tuple made here, not a read fact
                    fact = f"_canonical(_made := {fact}, _made)"
                emit(f"add({fact})")
            if bind_db:
                body = ["    " + line for line in prelude] + lines
            else:  # before the first loop
                first_loop = next(
                    (at for at, line in enumerate(lines) if line.startswith("    for ")), 0
                )
                body = [*lines[:first_loop], *("    " + line for line in prelude)]
                body += lines[first_loop:]
            if bind_db and name == "rule":  # the indexes are looked up once per db
                names = [line.split(" = ", 1)[0].strip() for line in prelude]
                bind = ["    " + line for line in prelude]
                bind.append(f"    return (rule, {''.join(name + ', ' for name in names)})")
                functions.append("def bind(db):\n" + "\n".join(bind))
                params = [*params, "env"]
                if names:
                    body = [f"    _, {', '.join(names)}, = env", *lines]
            functions.append(
                f"def {name}({', '.join(params)}):\n" + "\n".join(body or ["    pass"])
            )

        build("rule", ["db", *extra, "add"] if extra else ["db", "add"], 0, {})
        try:
            exec("\n\n".join(functions), namespace)  # noqa: S102 - generated from parsed terms only
        except (SyntaxError, KeyError) as error:  # pragma: no cover - a bug, not bad input
            raise GdlError(f"cannot compile {rule.source}: {error}") from error
        return namespace["bind" if bind_db else "rule"]  # type: ignore[return-value]
