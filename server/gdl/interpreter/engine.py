"""The interpreter: bottom-up, stratified, semi-naive evaluation of GDL.

It is the oracle every other engine is checked against. Static relations are
computed once; state relations once per state (cached for the most recent
states); ``next`` and what depends on ``does`` once per joint move.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from ..errors import GdlError
from ..parser import Rule
from ..state import State
from ..terms import RawTerm, sort_key
from .codegen import CompiledRule, IndexSpec, Relation, RuleCompiler
from .program import DOES_KEY, TRUE_KEY, Component, Program, RelationKey, analyse, key_name

LEGAL_KEY: RelationKey = ("legal", 2)
NEXT_KEY: RelationKey = ("next", 1)
GOAL_KEY: RelationKey = ("goal", 2)
INIT_KEY: RelationKey = ("init", 1)
ROLE_KEY: RelationKey = ("role", 1)
TERMINAL_KEY: RelationKey = "terminal"
DYNAMIC_GUESS = 64.0
CACHED_STATES = 32


class _StateContext:
    """Relations computed for one state."""

    __slots__ = ("db", "done", "legal")

    def __init__(self, db: dict[RelationKey, Relation]) -> None:
        self.db = db
        self.done: set[int] = set()
        self.legal: dict[str, list[RawTerm]] | None = None


class Interpreter:
    """A GDL reasoner over plain terms, implementing :class:`server.gdl.engine.Engine`."""

    name = "interpreter"

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.program: Program = analyse(rules)
        self._compiled: dict[int, list[CompiledRule]] = {}
        self._static: dict[RelationKey, Relation] = {}
        self._compiler = RuleCompiler(self._estimate)
        self._contexts: OrderedDict[State, _StateContext] = OrderedDict()

        for key in (LEGAL_KEY, GOAL_KEY, TERMINAL_KEY):
            if self.program.layer_of.get(key) == "move":
                raise GdlError(f"'{key_name(key)}' must not depend on 'does'")
        for key in (INIT_KEY, ROLE_KEY):
            if self.program.layer_of.get(key, "static") != "static":
                raise GdlError(f"'{key_name(key)}' must not depend on 'true' or 'does'")

        for component in self.program.components:
            for key in component.keys:
                if component.layer == "static":
                    self._static.setdefault(key, Relation())

        targets = (LEGAL_KEY, NEXT_KEY, GOAL_KEY, TERMINAL_KEY, INIT_KEY, ROLE_KEY)
        self._plans = {
            key: [self.program.components[i] for i in self.program.closure([key])]
            for key in targets
        }
        for plan in self._plans.values():
            for component in plan:
                if component.layer == "static" and component.index not in self._compiled:
                    self._evaluate(component, self._static)

        self.roles: list[str] = self._roles(rules)
        if not self.roles:
            raise GdlError("the game declares no role")
        self._initial = State(args[0] for args in self._static.get(INIT_KEY, Relation()).facts)

    # -- set-up -----------------------------------------------------------------------

    @staticmethod
    def _roles(rules: Sequence[Rule]) -> list[str]:
        roles: list[str] = []
        for rule in rules:
            head = rule.head
            if isinstance(head, tuple) and head[0] == "role" and len(head) == 2 and not rule.body:
                role = head[1]
                if not isinstance(role, str) or role.startswith("?"):
                    raise GdlError(f"{rule.where}: a role must be a constant, not {role}")
                if role not in roles:
                    roles.append(role)
        return roles

    def _estimate(self, key: RelationKey, spec: IndexSpec | None) -> float:
        relation = self._static.get(key)
        if relation is None or self.program.layer_of.get(key) != "static":
            keys = len(spec.key_paths) if spec is not None else 0
            return DYNAMIC_GUESS / (8.0**keys)
        if spec is None:
            return float(len(relation.facts))
        index = relation.index(spec)
        if isinstance(index, list):
            return float(len(index))
        return len(relation.facts) / max(1, len(index))  # type: ignore[arg-type]

    def _rules_of(self, component: Component) -> list[CompiledRule]:
        compiled = self._compiled.get(component.index)
        if compiled is None:
            recursive = component.keys if component.recursive else frozenset()
            compiled = [self._compiler.compile(rule, recursive) for rule in component.rules]
            self._compiled[component.index] = compiled
        return compiled

    # -- evaluation -------------------------------------------------------------------

    def _evaluate(self, component: Component, db: dict[RelationKey, Relation]) -> None:
        """Compute the relations of one component into ``db``."""
        if component.keys <= {TRUE_KEY} or component.keys <= {DOES_KEY}:
            return
        rules = self._rules_of(component)
        relations = {key: Relation() for key in component.keys}
        db.update(relations)
        if not component.recursive:
            for compiled in rules:
                compiled.naive(db, relations[compiled.rule.head_key].facts.add)
            return
        delta: dict[RelationKey, set] = {key: set() for key in component.keys}
        for compiled in rules:
            if not compiled.deltas:
                compiled.naive(db, delta[compiled.rule.head_key].add)
        for key, facts in delta.items():
            relations[key].facts |= facts
        while any(delta.values()):
            for relation in relations.values():
                relation.invalidate()
            found: dict[RelationKey, set] = {key: set() for key in component.keys}
            delta_lists = {key: list(facts) for key, facts in delta.items()}
            for compiled in rules:
                add = found[compiled.rule.head_key].add
                for key, variant in compiled.deltas:
                    if delta_lists[key]:
                        variant(db, delta_lists[key], add)
            delta = {key: facts - relations[key].facts for key, facts in found.items()}
            for key, facts in delta.items():
                relations[key].facts |= facts
        for relation in relations.values():
            relation.invalidate()

    def _context(self, state: State) -> _StateContext:
        context = self._contexts.get(state)
        if context is not None:
            self._contexts.move_to_end(state)
            return context
        db = dict(self._static)
        db[TRUE_KEY] = Relation({(fact,) for fact in state.facts})
        context = _StateContext(db)
        self._contexts[state] = context
        if len(self._contexts) > CACHED_STATES:
            self._contexts.popitem(last=False)
        return context

    def _derive(self, state: State, key: RelationKey) -> Relation:
        context = self._context(state)
        for component in self._plans[key]:
            if component.layer == "state" and component.index not in context.done:
                self._evaluate(component, context.db)
                context.done.add(component.index)
        return context.db.get(key) or Relation()

    # -- the engine contract ----------------------------------------------------------

    def initial_state(self) -> State:
        return self._initial

    def legal_moves(self, state: State, role: str) -> list[RawTerm]:
        context = self._context(state)
        if context.legal is None:
            grouped: dict[str, list[RawTerm]] = {}
            for who, move in self._derive(state, LEGAL_KEY).facts:
                grouped.setdefault(who, []).append(move)
            for moves in grouped.values():
                moves.sort(key=sort_key)
            context.legal = grouped
        return context.legal.get(role, [])

    def next_state(self, state: State, moves: Sequence[RawTerm]) -> State:
        if len(moves) != len(self.roles):
            raise GdlError(f"expected {len(self.roles)} moves (one per role), got {len(moves)}")
        context = self._context(state)
        for component in self._plans[NEXT_KEY]:
            if component.layer == "state" and component.index not in context.done:
                self._evaluate(component, context.db)
                context.done.add(component.index)
        db = dict(context.db)
        db[DOES_KEY] = Relation(set(zip(self.roles, moves, strict=True)))
        for component in self._plans[NEXT_KEY]:
            if component.layer == "move":
                self._evaluate(component, db)
        following = db.get(NEXT_KEY)
        return State(args[0] for args in following.facts) if following else State(())

    def is_terminal(self, state: State) -> bool:
        return bool(self._derive(state, TERMINAL_KEY).facts)

    def goal_values(self, state: State, role: str) -> list[RawTerm]:
        values = [value for who, value in self._derive(state, GOAL_KEY).facts if who == role]
        return sorted(values, key=sort_key)
