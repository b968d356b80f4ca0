"""Translate GDL rules into an ASP program that clingo can ground.

Names are encoded so that nothing of GDL's spelling is lost: every GDL constant
becomes an ASP string (``xPlayer`` -> ``"xPlayer"``, ``007`` -> ``"007"``), every
compound term a tuple (``(cell 1 b)`` -> ``("cell","1","b")``, the zero-argument
compound ``(p)`` -> ``("p",)``), and every relation a generated lower-case predicate
name, so the proposition ``p`` and the relation ``(p)`` stay different.

The state-dependent relations are left open with choice rules: ``true`` ranges over
``init`` and every derivable ``next``, ``does`` over every derivable ``legal``. Grounding
the result instantiates every rule over all states the rules can possibly reach.

In a rule that joins one move of some shape with literals on the state and leaves
several of the move's variables unused, the variables that occur only once are
written anonymous (``_``), so that clingo projects their literals onto the other
arguments before the join (:func:`_local_variables`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import clingo

from ..parser import Rule
from ..terms import RawTerm
from .complement import complement_move_test
from .demand import (
    DEMAND_PREFIX,
    demand_arguments,
    demand_body,
    demanded_positions,
    read_atom,
)
from .errors import CompileError
from .factor import FACTOR_PREFIX, factor_rule
from .relations import KEYWORD_PREDICATES, RelationKey, relation_key, term_variables
from .unfold import unfold_helpers

OPEN_INPUTS = """\
{ t(X) } :- i(X).
{ t(X) } :- n(X).
{ d(R, M) } :- l(R, M).
"""

MAX_DISJUNCTS = 4096
"""The largest number of rules one GDL rule with ``or`` may expand into."""


def encode_constant(name: str) -> str:
    """A GDL constant as an ASP string literal."""
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


_ASP_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([(),])')
_UNESCAPE = re.compile(r"\\(.)")


def decode_arguments(text: str) -> tuple[RawTerm, ...]:
    """The GDL terms encoded in the argument list of a printed ground atom.

    ``t(("cell","1","b"))`` gives ``(("cell", "1", "b"),)``; reading the printed form
    is much faster than walking clingo's symbol objects one call at a time.
    """
    start = text.find("(")
    if start < 0:
        return ()
    stack: list[list[RawTerm]] = []
    current: list[RawTerm] = []
    for match in _ASP_TOKEN.finditer(text, start + 1):
        string, mark = match.groups()
        if string is not None:
            if "\\" in string:
                string = _UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), string)
            current.append(string)
        elif mark == "(":
            stack.append(current)
            current = []
        elif mark == ")":
            if not stack:
                return tuple(current)
            inner = tuple(current)
            current = stack.pop()
            current.append(inner)
    raise CompileError(f"unexpected ground atom {text}")


def decode_symbol(symbol: clingo.Symbol) -> RawTerm:
    """Turn a grounded ASP term back into the GDL term it encodes."""
    if symbol.type == clingo.SymbolType.String:
        return symbol.string
    if symbol.type == clingo.SymbolType.Function and symbol.name == "":
        functor, *args = symbol.arguments
        return (functor.string, *(decode_symbol(arg) for arg in args))
    raise CompileError(f"unexpected ground term {symbol}")


class Translator:
    """Turns GDL rules into ASP text, remembering the predicate name of each relation."""

    dynamic: frozenset[RelationKey] = frozenset()
    """The relations that depend on the state or the moves (set by :meth:`program`)."""
    demand: dict[RelationKey, tuple[int, ...]] = {}
    """The demanded relations, with the argument positions their demand atoms hold
    (set by :meth:`program`)."""

    def __init__(self, factoring: bool = False, state_tests: bool | None = None) -> None:
        self.factoring = factoring
        """Whether rules are factored into smaller joins (:mod:`.factor`)."""
        self.state_tests = factoring if state_tests is None else state_tests
        """Whether move tests that read the state are complemented too (:mod:`.complement`);
        by default when the rules are factored."""
        self.state_tests_complemented = 0
        """The rule bodies complemented that only this mode complements."""
        self.factored = 0
        """The rules factored so far."""
        self.factored_relations = 0
        """The relations factoring has named so far (some for rules then left whole)."""
        self.complemented = 0
        """The rule bodies whose move tests were complemented (:mod:`.complement`)."""
        self.unfolded = 0
        """The rule bodies with static helpers unfolded (:mod:`.unfold`)."""
        self.dropped = 0
        """The rules of static helpers left out because no rule reads them any more."""
        self.guards: dict[str, int] = {}
        """The predicate names of their guard relations, with their numbers of
        arguments: read as true after grounding, like the demand atoms."""
        self.predicates: dict[RelationKey, str] = {}
        self.keys_by_predicate: dict[str, RelationKey] = {}
        for (name, arity), predicate in KEYWORD_PREDICATES.items():
            key = (name, arity, arity > 0)
            self.predicates[key] = predicate
            self.keys_by_predicate[predicate] = key

    def predicate(self, key: RelationKey) -> str:
        found = self.predicates.get(key)
        if found is None:
            found = f"r{len(self.predicates)}"
            self.predicates[key] = found
            self.keys_by_predicate[found] = key
        return found

    def program(self, rules: Iterable[Rule]) -> str:
        """The whole ASP program: the open inputs, then one or more rules per GDL rule
        (and the demand rules of the demanded relations, :mod:`.demand`).

        ``source_of[n]`` is the GDL rule that line ``n`` (1-based) comes from.
        """
        lines = OPEN_INPUTS.rstrip("\n").split("\n")
        self.source_of: dict[int, Rule] = {}
        kept = [rule for rule in rules if relation_key(rule.head)[0] not in ("base", "input")]
        expanded = [(rule, rule.head, body) for rule in kept for body in _bodies(rule)]
        dynamic = dynamic_relations(kept)
        expanded = self._complemented(self._unfolded(expanded, dynamic), dynamic)
        self.dynamic = dynamic_relations([Rule(head, body) for _, head, body in expanded])
        self.demand = demanded_positions([body for _, _, body in expanded], self.dynamic)
        for rule, head, body in expanded:
            for line in self.rule_lines(head, body):
                lines.append(line)
                self.source_of[len(lines)] = rule
        return "\n".join(lines)

    def _unfolded(
        self,
        expanded: list[tuple[Rule, RawTerm, tuple[RawTerm, ...]]],
        dynamic: frozenset[RelationKey],
    ) -> list[tuple[Rule, RawTerm, tuple[RawTerm, ...]]]:
        """The rules without the static helpers no rule reads, and, when the rules are
        factored, with the static helpers unfolded where that factors narrower
        (:mod:`.unfold`)."""
        clauses = unfold_helpers(
            [(head, body) for _, head, body in expanded],
            dynamic,
            lambda head, body: _local_variables(head, body, dynamic),
            unfolding=self.factoring,
        )
        out = []
        for (rule, _, body), clause in zip(expanded, clauses, strict=True):
            if clause is None:
                self.dropped += 1
                continue
            self.unfolded += clause[1] != body
            out.append((rule, *clause))
        return out

    def _complemented(
        self,
        expanded: list[tuple[Rule, RawTerm, tuple[RawTerm, ...]]],
        dynamic: frozenset[RelationKey],
    ) -> list[tuple[Rule, RawTerm, tuple[RawTerm, ...]]]:
        """The rules with their complemented move tests rewritten (:mod:`.complement`),
        each new rule kept with the GDL rule it comes from. A rule whose move's unused
        arguments are projected away (:func:`_local_variables`) is left to that: it
        grounds few rules already (sudoku's frame rules)."""
        out: list[tuple[Rule, RawTerm, tuple[RawTerm, ...]]] = []
        for rule, head, body in expanded:
            rewritten = None
            if not _local_variables(head, body, dynamic):
                rewritten = complement_move_test(head, body, self.new_factored_relation, dynamic)
                if rewritten is None and self.state_tests:
                    rewritten = complement_move_test(head, body, self.new_factored_relation)
                    self.state_tests_complemented += rewritten is not None
            if rewritten is None:
                out.append((rule, head, body))
                continue
            self.complemented += 1
            self.guards[self.predicate(relation_key(rewritten.guard))] = len(rewritten.guard) - 1
            out.extend((rule, new_head, new_body) for new_head, new_body in rewritten.rules)
        return out

    def demand_predicates(self) -> dict[str, int]:
        """The predicate names of the atoms read as true after grounding (the demand
        atoms and the guards of complemented move tests), with their numbers of
        arguments."""
        found = {
            DEMAND_PREFIX + self.predicate(key): len(positions)
            for key, positions in self.demand.items()
        }
        found.update(self.guards)
        return found

    def rule_lines(self, head: RawTerm, body: tuple[RawTerm, ...]) -> list[str]:
        """The ASP rule of a head and a body without ``or``, after the demand rules of
        the literals in it that read demanded relations."""
        names: dict[str, str] = {}
        head_text = self.atom(head, names)
        head_demand = self.demand_atom(head, names)
        out = []
        for index, literal in enumerate(body):
            found = read_atom(literal)
            positions = None if found is None else self.demand.get(relation_key(found[0]))
            if found is None or positions is None:
                continue
            read = found[0]
            arguments = demand_arguments(read, positions)
            binders = [
                self.literal(body[i], names)
                for i in demand_body(body, index, arguments, self.demand)
            ]
            if head_demand is not None:
                binders.insert(0, head_demand)
            demand = self.demand_text(relation_key(read), arguments, names)
            out.append(f"{demand} :- {', '.join(binders)}." if binders else f"{demand}.")
        local = _local_variables(head, body, self.dynamic)
        factored = (
            factor_rule(head, body, local, self.new_factored_relation) if self.factoring else None
        )
        if factored is not None:
            self.factored += 1
            for piece_head, piece_body in factored[:-1]:
                piece = ", ".join(self.literal(literal, names, local) for literal in piece_body)
                out.append(f"{self.atom(piece_head, names)} :- {piece}.")
            body = factored[-1][1]
        literals = [self.literal(literal, names, local) for literal in body]
        if head_demand is not None:
            literals.insert(0, head_demand)
        out.append(f"{head_text} :- {', '.join(literals)}." if literals else f"{head_text}.")
        return out

    def new_factored_relation(self) -> str:
        """The name of a new relation of factored literals (:mod:`.factor`)."""
        self.factored_relations += 1
        return f"{FACTOR_PREFIX}{self.factored_relations}"

    def demand_atom(self, sentence: RawTerm, names: dict[str, str]) -> str | None:
        """The demand atom that an instance of ``sentence`` requires; None when its
        relation is not demanded."""
        key = relation_key(sentence)
        positions = self.demand.get(key)
        if positions is None:
            return None
        return self.demand_text(key, demand_arguments(sentence, positions), names)

    def demand_text(
        self, key: RelationKey, arguments: Sequence[RawTerm], names: dict[str, str]
    ) -> str:
        terms = ", ".join(self.term(argument, names) for argument in arguments)
        return f"{DEMAND_PREFIX}{self.predicate(key)}({terms})"

    def literal(
        self, literal: RawTerm, names: dict[str, str], local: frozenset[str] = frozenset()
    ) -> str:
        """One body literal; the variables in ``local`` are written anonymous (``_``)."""
        if isinstance(literal, tuple) and literal[0] == "not" and len(literal) == 2:
            inner = literal[1]
            if isinstance(inner, tuple) and inner[0] == "distinct" and len(inner) == 3:
                return f"{self.term(inner[1], names)} = {self.term(inner[2], names)}"
            return "not " + self.atom(inner, names)
        if isinstance(literal, tuple) and literal[0] == "distinct" and len(literal) == 3:
            return f"{self.term(literal[1], names)} != {self.term(literal[2], names)}"
        return self.atom(literal, names, local)

    def atom(
        self, sentence: RawTerm, names: dict[str, str], local: frozenset[str] = frozenset()
    ) -> str:
        predicate = self.predicate(relation_key(sentence))
        if isinstance(sentence, str) or len(sentence) == 1:
            return predicate
        arguments = ", ".join(self.term(arg, names, local) for arg in sentence[1:])
        return f"{predicate}({arguments})"

    def term(
        self, term: RawTerm, names: dict[str, str], local: frozenset[str] = frozenset()
    ) -> str:
        if isinstance(term, str):
            if term.startswith("?"):
                if term in local:
                    return "_"
                found = names.get(term)
                if found is None:
                    found = names[term] = f"V{len(names)}"
                return found
            return encode_constant(term)
        parts = [encode_constant(term[0]), *(self.term(arg, names, local) for arg in term[1:])]
        if len(parts) == 1:
            return f"({parts[0]},)"
        return f"({','.join(parts)})"


def _literal_atoms(literal: RawTerm) -> list[RawTerm]:
    """The relation atoms a body literal reads (``or`` and ``not`` looked through)."""
    if isinstance(literal, tuple) and literal[0] in ("or", "not"):
        return [atom for part in literal[1:] for atom in _literal_atoms(part)]
    if isinstance(literal, tuple) and literal[0] == "distinct":
        return []
    return [literal]


DOES: RelationKey = ("does", 2, True)

MIN_PROJECTED_MOVE_ARGUMENTS = 3
"""The unused variables of a move that make a rule worth projecting (see
:func:`_local_variables`): sudoku's frame rules leave four, hallway's three to five."""


def dynamic_relations(rules: Sequence[Rule]) -> frozenset[RelationKey]:
    """The relations that depend on ``true`` or ``does``, through any rule body."""
    dynamic = {("true", 1, True), DOES}
    reads = [
        (
            relation_key(rule.head),
            {relation_key(atom) for lit in rule.body for atom in _literal_atoms(lit)},
        )
        for rule in rules
    ]
    changed = True
    while changed:
        changed = False
        for head, read in reads:
            if head not in dynamic and not read.isdisjoint(dynamic):
                dynamic.add(head)
                changed = True
    return frozenset(dynamic)


def _local_variables(
    head: RawTerm, body: Sequence[RawTerm], dynamic: frozenset[RelationKey]
) -> frozenset[str]:
    """The variables to write anonymous in a rule: those that occur once in it, in a
    positive relation literal, when the body joins one ``does`` literal that leaves
    at least :data:`MIN_PROJECTED_MOVE_ARGUMENTS` of its move's variables unused with
    literals on the state (``dynamic`` relations other than ``does``).

    Written anonymous, they let clingo project the literal onto its other arguments
    before joining it with the rest of the body (one ground rule per projected atom,
    not one per match of the whole literal). A frame rule that tests whether any move
    of some shape is played, like ``next(F) :- true(F), does(R, (mark S T U V Y)),
    distinct(S, I)``, grounds once per fluent and value of ``S`` instead of once per
    fluent and move: 2,430 ground rules instead of 590,000 for each such rule of
    sudokuGrade1, some 9,000 in all instead of 640,000. Other rules are left as they
    are: the projected atom stands between the moves and the rule, and where little
    is projected away the plan's code for the rule is slower than without it
    (tic-tac-toe variants, whose frame rules leave one argument of a move unused).
    The role of the move is never projected away, so the atom tests one role's moves.
    """
    occurrences: list[str] = []
    occurrences.extend(term_variables(head))
    candidates: set[str] = set()
    move: list[str] = []
    moves = state = 0
    for literal in body:
        found = term_variables(literal)
        occurrences.extend(found)
        if isinstance(literal, tuple) and literal[0] in ("not", "distinct"):
            continue
        key = relation_key(literal)
        if key == DOES:
            moves += 1
            role = found[:1] if found[:1] == [literal[1]] else []
            move = found[len(role) :]
            found = move
        elif key in dynamic:
            state += 1
        candidates.update(found)
    if moves != 1 or not state:
        return frozenset()
    counts = Counter(occurrences)
    if sum(counts[name] == 1 for name in move) < MIN_PROJECTED_MOVE_ARGUMENTS:
        return frozenset()
    return frozenset(name for name in candidates if counts[name] == 1)


def _bodies(rule: Rule) -> list[tuple[RawTerm, ...]]:
    """The bodies of a rule without ``or``: one per combination of alternatives."""
    alternatives = [_disjuncts(literal) for literal in rule.body]
    count = 1
    for options in alternatives:
        count *= len(options)
    if count > MAX_DISJUNCTS:
        raise CompileError(f"the rule at {rule.where} expands into {count} rules ('or')")
    return list(itertools.product(*alternatives))


def _disjuncts(literal: RawTerm) -> list[RawTerm]:
    """The alternatives of a body literal: several for ``or`` (flattened), else one."""
    if isinstance(literal, tuple) and literal[0] == "or":
        out: list[RawTerm] = []
        for option in literal[1:]:
            out.extend(_disjuncts(option))
        return out
    return [literal]
