"""Restrict a state relation to the arguments its readers can ask about.

chineseCheckers4 gives the legal moves of the player in control::

    (<= (legal ?player (move ?b ?e)) (true (control ?player)) (movable ?player ?b ?e))
    (<= (movable ?player ?b ?e) (true (cell ?b ?player)) (car ?player ?b ?c) ...)

Evaluated bottom-up, ``movable`` works out the jumps of all four players in every
state, where the only ones any rule reads are the player's in control: three quarters
of the work of the game's slowest relation is never read. The rewrite gives each such
relation an *asked* relation, holding the values its readers can ask about, and makes
each of its rules read it first::

    (<= (<movable/3 asked> ?player) (true (control ?player)))
    (<= (movable ?player ?b ?e) (<movable/3 asked> ?player) (true (cell ?b ?player)) ...)

This is the magic-set transformation of deductive databases, with one binding pattern a
relation (the argument positions every reader narrows) and the demand over-approximated:
a reader's demand rule keeps only the literals that bind those positions, so the asked
relation holds at least every value a reader's instance could ask about, and the
restricted relation holds exactly the facts of the original one that could be read.

A reading literal (positive or under ``not``) *narrows* a position when each variable of
the position's term is bound, by a *binding* literal of the same body (a positive literal
of a relation that depends on no restricted relation and on no move) or by the rule's
head at a position its own asked relation holds, and one of them comes from that head or
from a ``true`` literal over a fluent the initial state holds at most one of a role (whose
turn it is, a counter). A position narrowed only by static literals (``(role ?player)``)
asks about the whole domain, and one fixed by a ground term is what the copies kept to
constants (:mod:`.specialise`) and the restriction to uses (:mod:`.uses`) narrow already.
The binding literals depend on no restricted relation, so the asked relations sit below
every restricted one and the program stays stratified; they depend on no move, so a
relation of the state stays one of the state.

A relation whose rules each copy one relation derived whole anyway is left whole (it
costs no more to derive whole than to restrict), and asked relations defined alike are
merged into one.
"""

from __future__ import annotations

from ..terms import RawTerm, variables_of
from .program import (
    DOES_KEY,
    TRUE_KEY,
    FlatRule,
    RelationKey,
    body_relations,
    literal_atom,
    relation_args,
    relation_key,
)
from .uses import KEPT_WHOLE


def asked_name(key: RelationKey) -> str:
    """The name of the relation holding what the readers of ``key`` ask about (no GDL
    symbol holds a space, so it names no relation of the game)."""
    name, arity = key if isinstance(key, tuple) else (key, 0)
    return f"<{name}/{arity} asked>"


def is_asked(key: RelationKey) -> bool:
    """Whether ``key`` is an asked relation (see :func:`asked_name`)."""
    name = key[0] if isinstance(key, tuple) else key
    return name.startswith("<") and name.endswith(" asked>")


def _dependencies(rules: list[FlatRule]) -> dict[RelationKey, set[RelationKey]]:
    """Per relation: every relation it depends on, directly or not."""
    direct: dict[RelationKey, set[RelationKey]] = {}
    for rule in rules:
        direct.setdefault(rule.head_key, set()).update(key for key, _ in body_relations(rule))
    closed: dict[RelationKey, set[RelationKey]] = {}
    for key in direct:
        seen: set[RelationKey] = set()
        stack = list(direct[key])
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            stack.extend(direct.get(current, ()))
        closed[key] = seen
    return closed


def _fluent_head(atom: RawTerm) -> RawTerm | None:
    """The head of the fluent of a ``true`` or ``init`` atom (the fluent itself when it
    is a constant)."""
    if not isinstance(atom, tuple) or len(atom) != 2:
        return None
    fluent = atom[1]
    return fluent[0] if isinstance(fluent, tuple) else fluent


def _few_fluent_heads(rules: list[FlatRule]) -> set[RawTerm | None]:
    """The heads of the fluents the initial state holds at most one of per role (whose
    turn it is, a counter, each player's hand): those the asked values come from."""
    roles = sum(1 for rule in rules if not rule.body and relation_key(rule.head) == ("role", 1))
    counts: dict[RawTerm | None, int] = {}
    for rule in rules:
        if rule.head_key == ("init", 1):
            head = _fluent_head(rule.head)
            counts[head] = counts.get(head, 0) + (1 if not rule.body else roles + 1)
    return {head for head, count in counts.items() if count <= max(1, roles)}


class _Analysis:
    """The relations to restrict and the positions their readers fix."""

    def __init__(self, rules: list[FlatRule]) -> None:
        self.depends = _dependencies(rules)
        self.of_state = {key for key, below in self.depends.items() if TRUE_KEY in below}
        self.of_moves = {key for key, below in self.depends.items() if DOES_KEY in below}
        self.few = _few_fluent_heads(rules)
        self.rules_of: dict[RelationKey, list[FlatRule]] = {}
        for rule in rules:
            self.rules_of.setdefault(rule.head_key, []).append(rule)
        self.readers: dict[RelationKey, list[tuple[FlatRule, int]]] = {}
        for rule in rules:
            for at, literal in enumerate(rule.body):
                _, atom = literal_atom(literal)
                if atom is not None:
                    self.readers.setdefault(relation_key(atom), []).append((rule, at))
        self.restricted: set[RelationKey] = {
            key
            for key in self.rules_of
            if isinstance(key, tuple)
            and key[0] not in KEPT_WHOLE
            and key in self.of_state
            and key not in self.of_moves
            and key in self.readers
        }
        self.fixed: dict[RelationKey, tuple[int, ...]] = {
            key: tuple(range(key[1])) for key in self.restricted if isinstance(key, tuple)
        }
        self._settle()

    def binds(self, key: RelationKey) -> bool:
        """Whether a positive literal of ``key`` may bind an asked relation's values."""
        if key == TRUE_KEY:
            return True
        if key == DOES_KEY or key in self.of_moves or key in self.restricted:
            return False
        return self.restricted.isdisjoint(self.depends.get(key, ()))

    def head_bound(self, rule: FlatRule) -> set[str]:
        """The variables of ``rule``'s head that its own asked relation gives."""
        positions = self.fixed.get(rule.head_key) if rule.head_key in self.restricted else None
        if not positions:
            return set()
        args = relation_args(rule.head)
        found: set[str] = set()
        for position in positions:
            found |= variables_of(args[position])
        return found

    def binding_literals(self, rule: FlatRule, at: int) -> list[RawTerm]:
        """The literals of ``rule``'s body, but the one at ``at``, that may bind values."""
        found = []
        for other, literal in enumerate(rule.body):
            if other == at:
                continue
            positive, atom = literal_atom(literal)
            if positive and atom is not None and self.binds(relation_key(atom)):
                found.append(atom)
        return found

    def reader_positions(self, rule: FlatRule, at: int) -> set[int]:
        """The positions the literal at ``at`` narrows: each variable of the position's
        term bound, one of them by the head's asked relation or a fluent of few facts."""
        _, atom = literal_atom(rule.body[at])
        assert atom is not None
        from_head = self.head_bound(rule)
        bound = set(from_head)
        narrowing = set(from_head)
        for literal in self.binding_literals(rule, at):
            names = variables_of(literal)
            bound |= names
            if relation_key(literal) == TRUE_KEY and _fluent_head(literal) in self.few:
                narrowing |= names
        narrows: set[int] = set()
        for position, term in enumerate(relation_args(atom)):
            names = variables_of(term)
            if names <= bound and names & narrowing:
                narrows.add(position)
        return narrows

    def copies(self, key: RelationKey) -> bool:
        """Whether each rule of ``key`` reads one relation, of the state and derived
        whole: a relation that only copies facts already there costs no more to derive
        whole than to restrict (merrills' ``count_role``), unless what it reads is
        restricted through it."""
        for rule in self.rules_of[key]:
            read = [
                relation_key(atom)
                for positive, atom in map(literal_atom, rule.body)
                if positive and atom is not None
            ]
            if len(read) != 1:
                return False
            (source,) = read
            if source != TRUE_KEY and (source not in self.of_state or source in self.restricted):
                return False
        return True

    def _settle(self) -> None:
        """Drop relations and positions until every reader narrows what is asked of it,
        and every relation restricted is worth it."""
        changed = True
        while changed:
            changed = False
            for key in sorted(self.restricted, key=repr):
                if self.copies(key):
                    self.restricted.discard(key)
                    del self.fixed[key]
                    changed = True
            for key in sorted(self.restricted, key=repr):
                positions = set(self.fixed[key])
                for rule, at in self.readers[key]:
                    positions &= self.reader_positions(rule, at)
                if not positions:
                    self.restricted.discard(key)
                    del self.fixed[key]
                    changed = True
                elif tuple(sorted(positions)) != self.fixed[key]:
                    self.fixed[key] = tuple(sorted(positions))
                    changed = True

    def asked_atom(self, key: RelationKey, args: tuple) -> RawTerm:
        return (asked_name(key), *(args[position] for position in self.fixed[key]))

    def demand_rule(self, rule: FlatRule, at: int) -> FlatRule:
        """The rule deriving what the literal at ``at`` of ``rule`` asks about."""
        _, atom = literal_atom(rule.body[at])
        assert atom is not None
        key = relation_key(atom)
        head = self.asked_atom(key, relation_args(atom))
        wanted = variables_of(head) - self.head_bound(rule)
        body: list[RawTerm] = []
        if rule.head_key in self.restricted:
            body.append(self.asked_atom(rule.head_key, relation_args(rule.head)))
        body.extend(_covering(self.binding_literals(rule, at), wanted))
        return FlatRule(head, tuple(body), rule.source)


def _covering(literals: list[RawTerm], wanted: set[str]) -> list[RawTerm]:
    """Literals of ``literals`` that bind every variable of ``wanted``: greedily the one
    binding the most still unbound, with the fewest others; then every literal over
    bound variables alone, as a filter (a demand rule joins no more than it needs)."""
    chosen: list[RawTerm] = []
    bound: set[str] = set()
    left = list(literals)
    while wanted - bound:
        best = max(
            left,
            key=lambda literal: (
                len(variables_of(literal) & (wanted - bound)),
                -len(variables_of(literal) - wanted),
            ),
        )
        left.remove(best)
        chosen.append(best)
        bound |= variables_of(best)
    chosen.extend(literal for literal in left if variables_of(literal) <= bound)
    return chosen


def restrict_to_asked(rules: list[FlatRule]) -> list[FlatRule]:
    """The rules, with each state relation that every reader narrows restricted to
    what its readers can ask about (see the module's description)."""
    analysis = _Analysis(rules)
    if not analysis.restricted:
        return rules
    rewritten: list[FlatRule] = []
    demands: dict[tuple, FlatRule] = {}
    for rule in rules:
        key = rule.head_key
        if key in analysis.restricted:
            asked = analysis.asked_atom(key, relation_args(rule.head))
            rewritten.append(FlatRule(rule.head, (asked, *rule.body), rule.source))
        else:
            rewritten.append(rule)
        for at, literal in enumerate(rule.body):
            _, atom = literal_atom(literal)
            if atom is not None and relation_key(atom) in analysis.restricted:
                demand = analysis.demand_rule(rule, at)
                if demand.body != (demand.head,):  # a recursive reader asks what it was asked
                    demands.setdefault((demand.head, demand.body), demand)
    return _merge_alike(rewritten + list(demands.values()))


def _renamed(term: RawTerm, names: dict[str, str]) -> RawTerm:
    """``term`` with its variables named in order of first occurrence across calls."""
    if isinstance(term, str):
        if term.startswith("?"):
            return names.setdefault(term, f"?{len(names)}")
        return term
    return tuple(_renamed(part, names) for part in term)


def _merge_alike(rules: list[FlatRule]) -> list[FlatRule]:
    """The rules, with asked relations defined alike from other relations than asked
    ones (chess asks six relations about ``(true (control ?player))``) made one: one
    relation a state to compute rather than one each."""
    definitions: dict[str, list[tuple]] = {}
    for rule in rules:
        if isinstance(rule.head, tuple) and is_asked(rule.head_key):
            names: dict[str, str] = {}
            definitions.setdefault(rule.head[0], []).append(
                (_renamed(rule.head[1:], names), _renamed(rule.body, names))
            )
    same: dict[tuple, str] = {}
    renaming: dict[str, str] = {}
    for name, definition in definitions.items():
        if any(_reads_asked(literal) for _, body in definition for literal in body):
            continue  # alike only once those it reads are: left apart
        signature = tuple(sorted(definition, key=repr))
        first = same.setdefault(signature, name)
        if first != name:
            renaming[name] = first
    if not renaming:
        return rules
    merged: list[FlatRule] = []
    for rule in rules:
        if isinstance(rule.head, tuple) and rule.head[0] in renaming:
            continue  # the first of its kind derives it
        body = tuple(_asked_renamed(literal, renaming) for literal in rule.body)
        merged.append(FlatRule(rule.head, body, rule.source))
    return merged


def _reads_asked(literal: RawTerm) -> bool:
    _, atom = literal_atom(literal)
    return atom is not None and is_asked(relation_key(atom))


def _asked_renamed(literal: RawTerm, renaming: dict[str, str]) -> RawTerm:
    positive, atom = literal_atom(literal)
    if atom is None or not isinstance(atom, tuple) or atom[0] not in renaming:
        return literal
    renamed = (renaming[atom[0]], *atom[1:])
    return renamed if positive else ("not", renamed)


__all__ = ["asked_name", "is_asked", "restrict_to_asked"]
