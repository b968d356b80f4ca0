"""The interpreter: bottom-up, stratified, semi-naive evaluation of GDL.

It is the oracle every other engine is checked against. Static relations are
computed once; state relations once per state (cached for the most recent
states); ``next`` and what depends on ``does`` once per joint move.
"""

from __future__ import annotations

import operator
import os
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from types import FrameType
from typing import Any

from ..errors import GdlError
from ..gc_pause import garbage_collection_paused
from ..parser import Rule
from ..state import State
from ..terms import RawTerm, sort_key, unwrap
from .asked import is_asked, restrict_to_asked
from .codegen import (
    PATCH_MIN_FACTS,
    CompiledRule,
    FactGroups,
    IndexSpec,
    Relation,
    RuleCompiler,
)
from .move_order import MoveOrder
from .negation_groups import fold_negated_fluents
from .program import (
    DOES_KEY,
    TRUE_KEY,
    Component,
    FlatRule,
    Program,
    RelationKey,
    analyse,
    key_name,
    literal_atom,
    relation_args,
    relation_key,
)
from .specialise import specialise_to_constants
from .state_memo import StateAnswers, StateMemo
from .uses import restrict_to_uses

LEGAL_KEY: RelationKey = ("legal", 2)
NEXT_KEY: RelationKey = ("next", 1)
GOAL_KEY: RelationKey = ("goal", 2)
INIT_KEY: RelationKey = ("init", 1)
ROLE_KEY: RelationKey = ("role", 1)
TERMINAL_KEY: RelationKey = "terminal"
DYNAMIC_GUESS = 64.0
CACHED_STATES = 32
MOVE_CACHE = 100_000
"""Moves and joint moves whose matched ``does`` patterns are kept (see
:meth:`Interpreter._joint_bits`) before those caches start again empty."""
MATERIALISE_BUDGET = 30_000
"""Facts a relation may reach before it is computed on demand instead."""
STATIC_MATERIALISE_BUDGET = 100_000
"""The same for static relations, computed once per game: materialised, they are read
through indexes with any arguments known, where on demand a rule that knows few of them
waits for cheap literals that bind the rest and asks each combination (four_way_battle's
``valid_move`` of 65,000 facts: 3,300 transitions a second on demand, 5,000
materialised). A relation past it costs the set-up up to 0.25 s before it goes on demand
(laikLee_hex)."""
STATE_MATERIALISE_BUDGET = 300
"""The same for relations that depend on the state (not on the moves): recomputed for
every state, while a move usually asks only a few facts of a large helper relation
(chess's diagonals, a maze's paths). Games whose state relations of a few hundred facts
are asked with many different arguments run faster with MATERIALISE_BUDGET instead, and
games whose smaller state relations are asked for a few arguments only (the moves of
the player in control, among those of six players) with no budget at all: the first
time a state relation passes this budget, trials (:class:`_BudgetTrial`) time the
budget kept so far against each of OTHER_STATE_BUDGETS in turn, and keep the faster; a
watch (:class:`_BudgetWatch`) times them again when the one kept grows much slower."""
LIGHT_AFTER = 16
"""Evaluations in a row within a LIGHT_SHARE of the budget after which a component that
may be computed on demand is computed without counting its derivations one by one."""
LIGHT_SHARE = 2
"""The share of the budget a light component's relations stay within (see LIGHT_AFTER):
one that reaches it is counted again, one past the budget is computed on demand. Half:
knightazons's moves of a state (32 to 159 facts, small budget 300) and crossers3's (18
to 104) passed a quarter often enough to be counted fact by fact in every state."""
NO_STATE_BUDGET = 0
"""Every state relation that no query asks for in full is computed on demand."""
OTHER_STATE_BUDGETS: tuple[int, ...] = (MATERIALISE_BUDGET, NO_STATE_BUDGET)
"""The budgets the trials time against the one kept so far, in this order."""
BUDGET_NAMES = {
    STATE_MATERIALISE_BUDGET: "small",
    MATERIALISE_BUDGET: "full",
    NO_STATE_BUDGET: "none",
}
"""What :attr:`Interpreter.budget_choice` calls each budget."""
TRIAL_TRANSITIONS = 44
"""Transitions (``next_state`` calls) a budget trial times at most before it decides."""
TRIAL_LEAD = 6
"""Votes by which one budget may lead the other to win before TRIAL_TRANSITIONS: a budget
much faster wins nearly every vote, while two about as fast seldom part by so many (and
then either choice costs little)."""
TRIAL_SETTLED = 4
"""Transitions after which the trial's sums start: the first states cost more with
either budget (indexes of static relations are built, the heap grows)."""
TRIAL_SETTLED_STEPS = 4
"""Whole transitions (every call of them timed, none compiling rules) the sums from
TRIAL_SETTLED on must hold before they end a trial: they hold the goals timed at
TRIAL_SETTLED too, asked once a playout. Amazons' goals cost 73 ms with no budget and
6 ms with the full one, its transitions 25 ms and 135 ms: with one transition besides
(the first of a playout, answered from the states met before), the goals kept the full
budget, at a fifth of the speed, in one trial of three."""
TRIAL_VOTES_FROM = 16
"""Transitions after which the trial's votes start. The budget the trial brings in warms
up for longer than TRIAL_SETTLED transitions (its own rules, indexes and demand memos,
and derivations counted one by one until its relations are light), while the one kept
is warm: from the fifth transition on, chineseCheckers6's budget none won about half
the votes against full, though it runs the opening 1.4 times as fast alone, and lost
the trial one time in three when both cores were busy (none of twelve from the 17th)."""
TRIAL_CLEAR_FACTOR = 4
TRIAL_CLEAR_NS = 30_000_000
"""The trial ends early once one budget has taken TRIAL_CLEAR_FACTOR times the CPU time
of the other and TRIAL_CLEAR_NS more, from TRIAL_SETTLED transitions on (over all its
calls, TRIAL_CUT_NS more): chess must not spend long in full materialisation."""
TRIAL_CUT_NS = 250_000_000
"""A call with the other budget of a trial is cut once that budget has taken
TRIAL_CLEAR_FACTOR times the CPU time of the interpreter's own and this much more
(compiling included)."""
TRIAL_CUT_REPEAT_S = 0.02
"""Once the cut is due, the alarm rings again every this many seconds of CPU time until
the call stops: it raises only in the interpreter's own code (see :func:`_may_cut_in`),
not where Python would ignore it (a garbage collector callback, a ``__del__``)."""
TRIAL_MAX_NS = 2_000_000_000
"""CPU time a trial (a revision too) spends at most, both budgets' calls summed, before
it decides on the sums (from TRIAL_SETTLED transitions on once those hold
TRIAL_SETTLED_STEPS whole transitions, else over all its calls that compiled nothing).
Most games' trials end well within it; amazons timed small against full (180 and 135 ms
a transition) for 22 transitions, 7.7 s of CPU time in which every call ran twice,
before none (25 ms) ended the next trial at once."""
REVISION_TRANSITIONS = 256
"""Transitions a trial started by the watch (see :class:`_BudgetWatch`) times at most; it
decides on the sums of CPU time, not on votes, so that a rare expensive call counts (a
goal evaluated at the end of each playout)."""
WATCH_STRIDE = 16
"""Transitions between two readings of the clock while the budget kept is watched."""
WATCH_WINDOW = 128
"""Transitions over which the watch averages the CPU time per transition."""
WATCH_FACTOR = 4
WATCH_SLACK_NS = 1_000_000
"""The budgets are tried again once a window's CPU time per transition passes
WATCH_FACTOR times what the trials measured for the budget kept and this much more."""
REVISIONS = 2
"""Times the budgets are tried again at most, per interpreter."""
TARGET_KEYS = (LEGAL_KEY, NEXT_KEY, GOAL_KEY, TERMINAL_KEY, INIT_KEY, ROLE_KEY)
SHARE_TRIAL = 64
"""States after which a state relation stops being shared between states when fewer
than one in SHARE_MIN_HIT_RATE of them found it computed already."""
SHARE_MIN_HIT_RATE = 4
SMALL_STRIKES = 8
"""States in which a state component's relations may be found too small to patch indexes
from (see :data:`PATCH_MIN_FACTS`) before the interpreter stops checking them."""
EAGER_DEPTH = 32
"""Calls into a recursive relation evaluated at once, nested in one another, at most
(see :class:`_Tabling`): deeper ones wait their turn, and Python's stack stays short."""
TOP_DOWN_DEPTH = 48
"""Calls nested in one another at most in a plain top-down evaluation of a recursive
relation (see :meth:`_Tabling.top_down`); a deeper chain is evaluated by the fixpoint."""
TOP_DOWN_STRIKES = 8
"""Calls of a recursive relation found to depend on themselves (or nested too deep)
after which its calls go straight to the fixpoint."""


_first = operator.itemgetter(0)


def _fact_head(fact: RawTerm) -> str:
    """What a ``true`` fact is grouped by: a constant, or the functor of a compound."""
    return fact[0] if fact.__class__ is tuple else fact  # type: ignore[return-value]


def true_heads(program: Program) -> dict[int, tuple[str, ...]]:
    """For each state component whose relations can be shared between states: the heads
    of the ``true`` facts its relations depend on (through other components too).

    Two states with the same facts of these heads give these relations the same facts,
    so they are computed once for both. Left out: components that ask ``(true ?x)``
    (every fact), and relations split by rule-level stratification (a later part adds
    to the relations of an earlier one).
    """
    split = _split_keys(program)
    heads = _state_heads(program)
    shared: dict[int, tuple[str, ...]] = {}
    for component in program.components:
        needed = heads.get(component.index)
        if (
            needed is not None
            and component.first_part
            and not component.keys & split
            and not component.keys <= {TRUE_KEY}
        ):
            shared[component.index] = tuple(sorted(needed))
    return shared


def move_rule_heads(program: Program) -> dict[tuple[int, int], tuple[str, ...]]:
    """For each rule of a move component (by component and rule number) that depends on
    no move: the heads of the ``true`` facts it depends on. Such a rule (a frame rule
    ``(<= (next (cell ?x ?y)) (true (cell ?x ?y)))``) derives the same facts in two states
    with the same facts of these heads, whatever the moves."""
    split = _split_keys(program)
    heads = _state_heads(program)
    found: dict[tuple[int, int], tuple[str, ...]] = {}
    for component in program.components:
        if (
            component.layer != "move"
            or component.recursive
            or not component.first_part
            or component.keys & split
        ):
            continue
        for number, rule in enumerate(component.rules):
            needed: set[str] | None = set()
            for literal in rule.body:
                _, atom = literal_atom(literal)
                if atom is None or needed is None:
                    continue
                key = relation_key(atom)
                layer = program.layer_of.get(key, "static")
                if key == TRUE_KEY:
                    fluent = atom[1]
                    if isinstance(fluent, str) and fluent.startswith("?"):
                        needed = None
                    else:
                        needed.add(_fact_head(fluent))
                elif layer == "move":
                    needed = None
                elif layer == "state":
                    inherited = heads.get(program.component_of[key])
                    needed = None if inherited is None else needed | inherited
            if needed is not None:
                found[(component.index, number)] = tuple(sorted(needed))
    return found


def does_patterns(program: Program) -> dict[int, tuple[tuple[tuple, ...], ...]]:
    """For each non-recursive move component: per rule, the arguments of its positive
    ``does`` literals. A rule whose pattern matches none of a joint move's ``does`` facts
    derives nothing for that joint move (see :func:`may_match`)."""
    found: dict[int, tuple[tuple[tuple, ...], ...]] = {}
    for component in program.components:
        if (
            component.layer != "move"
            or component.recursive
            or not component.first_part
            or component.keys <= {DOES_KEY}
        ):
            continue
        found[component.index] = tuple(
            tuple(
                relation_args(atom)
                for positive, atom in map(literal_atom, rule.body)
                if positive and atom is not None and relation_key(atom) == DOES_KEY
            )
            for rule in component.rules
        )
    return found


def may_match(pattern: RawTerm, term: RawTerm) -> bool:
    """Whether ``term`` is an instance of ``pattern``, each variable taken on its own
    (a repeated variable may stand for different values: a test that lets more through)."""
    if pattern.__class__ is str:
        return pattern == term or pattern.startswith("?")
    return (
        term.__class__ is tuple and len(term) == len(pattern) and all(map(may_match, pattern, term))
    )


def fixed_rules(program: Program) -> set[tuple[int, int]]:
    """The rules (by component and rule number) of components that depend on the state
    whose body reads static relations only: such a rule (``(<= (clear_row ?u ?x ?v)
    (next_file ?u ?x) (coordinate ?v))`` among recursive rules that read the board)
    derives the same facts in every state and for every joint move."""
    found: set[tuple[int, int]] = set()
    for component in program.components:
        if component.layer == "static":
            continue
        for number, rule in enumerate(component.rules):
            keys = [relation_key(atom) for _, atom in map(literal_atom, rule.body) if atom]
            if all(program.layer_of.get(key, "static") == "static" for key in keys):
                found.add((component.index, number))
    return found


def _split_keys(program: Program) -> set[RelationKey]:
    """Relations split by rule-level stratification."""
    return {
        key
        for component in program.components
        if not component.first_part
        for key in component.keys
    }


def _state_heads(program: Program) -> dict[int, frozenset[str] | None]:
    """For each state component: the heads of the ``true`` facts it depends on, or None
    when it asks ``(true ?x)``."""
    heads: dict[int, frozenset[str] | None] = {}
    for component in program.components:
        if component.layer != "state":
            continue
        found: set[str] | None = set()
        for dependency in component.depends_on:
            inherited = heads.get(dependency, frozenset())
            if inherited is None or found is None:
                found = None
                break
            found |= inherited
        for rule in component.rules:
            for literal in rule.body:
                _, atom = literal_atom(literal)
                if found is None or atom is None or relation_key(atom) != TRUE_KEY:
                    continue
                fluent = atom[1]
                if isinstance(fluent, str) and fluent.startswith("?"):
                    found = None
                else:
                    found.add(_fact_head(fluent))
        heads[component.index] = None if found is None else frozenset(found)
    return heads


class _Sharing:
    """Results of work that later states repeat: kept by the facts of the ``true`` heads
    the work depends on, per key (a component, or a rule), and given to any state with
    the same facts of those heads. A key whose results are seldom found again (by fewer
    than one in SHARE_MIN_HIT_RATE of its first SHARE_TRIAL states) stops being shared."""

    def __init__(self, heads: dict[Any, tuple[str, ...]]) -> None:
        self.heads = heads
        """Per key still shared: the heads of the ``true`` facts its work depends on."""
        self.results: dict[Any, dict[tuple, Any]] = {}
        self.counts: dict[Any, list[int]] = {}
        """Per key: states asked, and states that found the result kept."""

    def fresh(self) -> _Sharing:
        """The same keys, with nothing kept or counted yet."""
        return _Sharing(dict(self.heads))

    def find(self, key: Any, facts: tuple) -> Any:
        """The result kept for ``facts`` (the state's facts of the key's heads), or None."""
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = [0, 0]
        counts[0] += 1
        results = self.results.get(key)
        if results is None:
            return None
        found = results.get(facts)
        if found is not None:
            counts[1] += 1
        return found

    def keep(self, key: Any, facts: tuple, result: Any) -> None:
        """Keep ``result`` for ``facts``, unless the key is not worth sharing any more."""
        asked, found = self.counts[key]
        if asked >= SHARE_TRIAL and found * SHARE_MIN_HIT_RATE < asked:
            del self.heads[key]  # seldom the same: not worth the keys
            self.results.pop(key, None)
            return
        entries = self.results.get(key)
        if entries is None:
            entries = self.results[key] = {}
        if len(entries) >= CACHED_STATES:
            entries.clear()
        entries[facts] = result


class _TooLarge(Exception):
    """A relation grew past the budget for materialising it."""


class _Cyclic(Exception):
    """A call asked itself (or was nested too deep): a plain top-down evaluation
    cannot answer it."""


class _TrialTimeout(Exception):
    """The other budget took so long on one call of the trial that the own one wins."""


def _can_time_out() -> bool:
    """Whether a call can be cut by a CPU-time alarm here (the main thread, on Unix)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


_INTERPRETER_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_GENERATED_CODE = "<string>"
"""The file name of the rules' generated code (``exec`` of the interpreter's codegen)."""


def _may_cut_in(frame: FrameType | None) -> bool:
    """Whether a trial's alarm that interrupted ``frame`` may raise there: only in the
    interpreter's own code (its modules, the rules' generated code), where the exception
    unwinds the call being cut.  Elsewhere (a finalizer or a collector callback run in
    between, the standard library) Python would swallow it and print it as an exception
    ignored; the alarm rings again a moment later, back in the rules' code."""
    if frame is None or frame.f_code.co_name == "__del__":
        return False
    file = frame.f_code.co_filename
    return file == _GENERATED_CODE or file.startswith(_INTERPRETER_FOLDER)


class DemandTable:
    """A relation computed on demand: facts matching given arguments, memoised.

    Used for relations too large to materialise (for example "is square A
    threatened from square B" over every pair), which the rules only ever
    ask about with some arguments known. Tables of one recursive component
    share a :class:`_Tabling` solver.
    """

    __slots__ = ("engine", "key", "arity", "db", "solver", "shared", "calls")

    def __init__(
        self, engine: Interpreter, key: RelationKey, db: dict, solver: _Tabling | None = None
    ) -> None:
        self.engine = engine
        self.key = key
        self.arity = 0 if isinstance(key, str) else key[1]
        """A call that knows this many arguments has one answer at most: once found,
        the rules left need not be asked."""
        self.db = db
        self.solver = solver
        self.shared = False
        """Whether states other than the one of ``db`` use the table too."""
        self.calls: dict[tuple[int, ...], DemandCall] = {}
        """Per set of given positions: what asks the table with values there, with the
        answers found and the functions deriving them."""

    def release(self) -> None:
        """Drop the references to ``db`` and to the tables of ``db`` (``db`` holds the
        table: a cycle only the cyclic garbage collector would free, with every relation of
        the state); the table must not be asked again."""
        self.db = {}
        self.solver = None
        for call in self.calls.values():
            call.functions = None
        self.calls = {}

    def call_for(self, positions: tuple[int, ...]) -> DemandCall:
        """What asks this table with values given at ``positions`` (made on first use;
        the generated rules look it up once per state, not per question)."""
        call = self.calls.get(positions)
        if call is None:
            call = self.calls[positions] = DemandCall(self, positions)
        return call

    def keep(self, positions: tuple[int, ...], values: tuple, answers: set) -> tuple:
        """Keep ``answers`` as the complete answers of a call; returns them as kept."""
        found = self.call_for(positions).memo[values] = tuple(answers) if answers else ()
        return found

    def lookup(self, positions: tuple[int, ...], values: tuple, first: bool = False) -> tuple:
        """Every fact whose arguments at ``positions`` equal ``values``.

        With ``first``, the caller only asks whether one exists: a recursive
        search may then stop at the first answer.
        """
        call = self.call_for(positions)
        found = call.memo.get(values)
        if found is not None:
            return found
        return call.ask(values, first)

    def derive(self, positions: tuple[int, ...], values: tuple, facts: set) -> None:
        """Run the rules for the call with ``values`` at ``positions``, adding its answers
        to ``facts``; a call that knows every argument stops at its one answer."""
        self.call_for(positions).derive(values, facts)


class DemandCall:
    """A table computed on demand asked with values at given positions: its memo of
    answers and the functions deriving them, found once rather than per question (a
    chess position asks some 400 questions, most with every argument known)."""

    __slots__ = ("table", "positions", "memo", "complete", "functions")

    def __init__(self, table: DemandTable, positions: tuple[int, ...]) -> None:
        self.table = table
        self.positions = positions
        self.memo: dict[tuple, tuple] = {}
        """The answers found, by the values given. The generated rules read it before
        asking: most questions of a relation asked with a few known arguments repeat
        (four_way_battle: 99 % of 850 a transition)."""
        self.complete = len(positions) == table.arity
        """Whether every argument is given: one answer at most."""
        self.functions: tuple[tuple, ...] | None = None
        """Per rule, an ``env`` whose ``env[0](db, [values], add, env)`` derives answers:
        its function, and the relations and indexes it reads, looked up in ``db`` once
        (see :meth:`derivers`)."""

    def derivers(self) -> tuple[tuple, ...]:
        """:attr:`functions`, made on first use."""
        found = self.functions
        if found is None:
            table = self.table
            binders = table.engine._demand_functions(table.key, self.positions)
            found = self.functions = tuple(bind(table.db) for bind in binders)
        return found

    def ask(self, values: tuple, first: bool = False) -> tuple:
        """The answers for ``values``, not in :attr:`memo` yet (the caller looked)."""
        table = self.table
        solver = table.solver
        if solver is not None:
            asking = solver.asking
            if asking is not None:  # nested in a top-down evaluation: straight there
                return solver.top_down_call(self, values, asking)
            return solver.lookup(table, (self.positions, values), first)
        facts: set = set()
        self.derive(values, facts)
        found = self.memo[values] = tuple(facts) if facts else ()
        return found

    def derive(self, values: tuple, facts: set) -> None:
        """Run the rules for ``values``, adding their answers to ``facts``; a call that
        knows every argument stops at its one answer."""
        table = self.table
        engine = table.engine
        add = facts.add if engine._budget is None else engine._counted(facts)
        given = [values]
        db = table.db
        functions = self.functions
        if functions is None:
            functions = self.derivers()
        if self.complete:
            for env in functions:
                env[0](db, given, add, env)
                if facts:
                    break
        else:
            for env in functions:
                env[0](db, given, add, env)


def release_tables(db: dict, keys: Iterable[RelationKey]) -> None:
    """Release the tables computed on demand into ``db`` (see :meth:`DemandTable.release`)
    that no other state uses: ``db`` is done with. ``keys``: the relations computed on
    demand (any others of ``db`` are left as they are)."""
    get = db.get
    for key in keys:
        value = get(key)
        if value.__class__ is DemandTable and value.db is db and not value.shared:
            value.release()


class _Tabling:
    """Answers calls into a recursive component by iterating to a fixpoint.

    While a fixpoint runs, a call returns the answers found so far and records
    who asked; a call is evaluated again only when a call it consulted gained
    answers. A new call is evaluated at once, as a top-down prover would (up to
    EAGER_DEPTH calls deep; deeper ones wait in a queue, newest first): along a
    chain of calls (is the row clear from here to there) each call then finds the
    answers of the next one the first time it asks, instead of being evaluated
    again once they are found.
    """

    __slots__ = (
        "engine",
        "active",
        "answers",
        "tables",
        "consumers",
        "pending",
        "queued",
        "current",
        "depth",
        "asking",
    )

    def __init__(self, engine: Interpreter) -> None:
        self.engine = engine
        self.active = False
        self.answers: dict[tuple, set] = {}
        self.tables: dict[tuple, DemandTable] = {}
        self.consumers: dict[tuple, list[tuple]] = {}
        self.pending: list[tuple] = []
        self.queued: set[tuple] = set()
        self.current: tuple = ()
        """The call being evaluated (while a fixpoint runs)."""
        self.depth = 0
        """Calls evaluated at once that are under way (nested in one another)."""
        self.asking: set[tuple] | None = None
        """While a plain top-down evaluation runs (:meth:`top_down`): the calls under way."""

    def lookup(self, table: DemandTable, memo_key: tuple, first: bool = False) -> tuple:
        """Answer a call not yet answered (calls nested in a top-down evaluation go to
        :meth:`top_down` straight from :meth:`DemandTable.lookup`)."""
        strikes = self.engine._cyclic_strikes
        if not self.active and strikes.get(table.key, 0) < TOP_DOWN_STRIKES:
            asking: set[tuple] = set()
            self.asking = asking
            try:
                positions, values = memo_key
                return self.top_down(table, positions, values, asking)
            except _Cyclic:
                strikes[table.key] = strikes.get(table.key, 0) + 1
            finally:
                self.asking = None
        call = (table.key, memo_key)
        answers_of = self.answers
        if self.active:  # asked by self.current while a fixpoint runs
            answers = answers_of.get(call)
            if answers is None:
                answers = answers_of[call] = set()
                self.tables[call] = table
                asker = self.current
                self.consumers[call] = [asker]
                if self.depth < EAGER_DEPTH:
                    self._evaluate_now(call, table, answers, asker, 1)
                    return tuple(answers) if answers else ()
                self.pending.append(call)
                self.queued.add(call)
                return ()
            self.consumers[call].append(self.current)
            return tuple(answers) if answers else ()
        self.active = True
        tables, consumers = self.tables, self.consumers
        pending, queued = self.pending, self.queued
        try:
            root = answers_of[call] = set()
            tables[call] = table
            consumers[call] = []
            self._evaluate_now(call, table, root, (), 0)
            while pending:
                if first and root:
                    return tuple(root)  # enough for the caller; not complete, so not kept
                current = pending.pop()
                queued.discard(current)
                caller = tables[current]
                positions, values = current[1]
                answers = answers_of[current]
                before = len(answers)
                complete = len(positions) == caller.arity
                if complete and before:
                    continue  # its one answer found: asking again finds nothing new
                self.current = current
                caller.derive(positions, values, answers)
                if len(answers) != before:
                    for consumer in consumers[current]:
                        if consumer not in queued:
                            queued.add(consumer)
                            pending.append(consumer)
            if len(answers_of) == 1:  # the call asked no other
                return table.keep(memo_key[0], memo_key[1], root)
            for done, answers in answers_of.items():
                tables[done].keep(done[1][0], done[1][1], answers)
        finally:
            self.active = False
            self.current = ()
            self.depth = 0
            answers_of.clear()  # emptied for the next fixpoint, not made anew
            tables.clear()
            consumers.clear()
            pending.clear()
            queued.clear()
        return table.call_for(memo_key[0]).memo[memo_key[1]]

    def top_down(
        self, table: DemandTable, positions: tuple[int, ...], values: tuple, asking: set[tuple]
    ) -> tuple:
        """Answer a call by evaluating its rules at once, the calls they ask nested in
        it, each kept as soon as it is answered, as a top-down prover would: most
        recursions (a row clear from here to there, counting along a line) never ask a
        call that is under way. One that does (or a chain nested past TOP_DOWN_DEPTH)
        raises :class:`_Cyclic`, and the first call is then answered by the fixpoint;
        the calls answered meanwhile stay kept, complete, as none of them asked a call
        under way."""
        return self.top_down_call(table.call_for(positions), values, asking)

    def top_down_call(self, call: DemandCall, values: tuple, asking: set[tuple]) -> tuple:
        """:meth:`top_down` for ``call`` asked with ``values``."""
        under_way = (call, values)  # (a call hashes by identity, at once)
        depth = len(asking)
        asking.add(under_way)
        if len(asking) == depth or depth >= TOP_DOWN_DEPTH:  # under way already, or deep
            raise _Cyclic()
        answers: set = set()
        call.derive(values, answers)
        asking.discard(under_way)
        found = call.memo[values] = tuple(answers) if answers else ()
        return found

    def _evaluate_now(
        self, call: tuple, table: DemandTable, answers: set, caller: tuple, skip: int
    ) -> None:
        """Evaluate a new call while a fixpoint runs. Its caller (the first ``skip`` of its
        consumers) gets the answers found now when the call returns; the calls that asked
        it meanwhile (through a cycle) are evaluated again if it gained answers."""
        self.current = call
        self.depth += 1
        try:
            positions, values = call[1]
            table.derive(positions, values, answers)
        finally:
            self.depth -= 1
            self.current = caller
        if answers:
            consumers = self.consumers[call]
            queued, pending = self.queued, self.pending
            for consumer in consumers[skip:] if skip else consumers:
                if consumer not in queued:
                    queued.add(consumer)
                    pending.append(consumer)


class _StateContext:
    """Relations computed for one state."""

    __slots__ = ("db", "done", "derived", "legal", "legal_facts", "frozen")

    def __init__(self, db: dict[RelationKey, Any]) -> None:
        self.db = db
        self.done: set[int] = set()
        self.derived: set[RelationKey] = set()
        """The relations whose state components are all in ``done``."""
        self.legal: dict[str, list[RawTerm]] | None = None
        self.legal_facts: set[tuple] | frozenset[tuple] = frozenset()
        """The facts of ``legal`` (role and move), once :attr:`legal` is worked out."""
        self.frozen: dict[str, frozenset[tuple]] = {}

    def facts_of(self, heads: tuple[str, ...]) -> tuple[frozenset[tuple], ...]:
        """The state's ``true`` facts of each head (a constant, or the functor of a
        compound), from the grouping the ``true`` relation's indexes read too. A group
        that is a frozenset already is the set of facts a rule took from an earlier
        state (see :meth:`Interpreter._materialise_move`): the same object, its hash
        known and its equality to the key kept with it at once."""
        frozen = self.frozen
        found = []
        for head in heads:
            facts = frozen.get(head)
            if facts is None:
                group = self.db[TRUE_KEY].group(head)
                facts = group if group.__class__ is frozenset else frozenset(group)
                frozen[head] = facts
            found.append(facts)
        return tuple(found)


class _BudgetTrial:
    """Runs each engine call with two budgets for state relations and keeps the faster.

    ``own`` is the interpreter itself (with the budget it has kept so far), ``other`` a
    copy with another budget. Both answer every call (in turns, which first) and their
    CPU time is summed over the calls during which neither compiled rules (compiling is a
    one-off cost of the first states); the answers are the same, so the interpreter's is
    returned. When one is clearly slower in sum, the interpreter keeps the other at once;
    else it keeps the one faster on more of the transitions up to TRIAL_TRANSITIONS
    (counted from TRIAL_VOTES_FROM on: a vote, so that a garbage collection during one of
    them does not decide), as soon as it leads by TRIAL_LEAD votes or the votes still to
    come cannot turn the choice. The copy is then dropped.

    A revision (a trial started by the watch, see :class:`_BudgetWatch`) ends early only
    when one budget is clearly slower in sum; else it times REVISION_TRANSITIONS and keeps
    the one faster in sum.
    """

    __slots__ = (
        "own",
        "other",
        "clock",
        "revision",
        "calls",
        "transitions",
        "spent",
        "settled",
        "step",
        "votes",
        "other_votes",
        "raw",
        "whole_steps",
        "step_whole",
        "floor",
    )

    def __init__(
        self, own: Interpreter, budget: int, clock: Callable[[], int], revision: bool = False
    ) -> None:
        self.own = own
        self.other = own._with_state_budget(budget)
        self.clock = clock
        self.revision = revision
        self.calls = 0
        self.transitions = 0
        self.spent = [0, 0]  # CPU ns of own and other over the calls that compiled nothing
        self.settled = [0, 0]  # the same from TRIAL_SETTLED transitions on
        self.step = [0, 0]  # the same since the last transition
        self.votes = 0  # transitions compared, from TRIAL_VOTES_FROM on
        self.other_votes = 0  # those on which the other budget was faster
        self.raw = [0, 0]  # CPU ns of own and other over all calls
        self.whole_steps = 0  # transitions in the settled sums with every call timed
        self.step_whole = True  # whether every call since the last transition was timed
        self.floor = own._transition_cost()
        """CPU ns a transition of the budget kept took when last timed (0: not yet): a
        call of the other budget is cut only once past TRIAL_CLEAR_FACTOR times that too.
        Amazons' trial of no budget against full began at a state full had met (its call
        took nothing) and none had not: 260 to 310 ms, cut after 250, where a transition
        of full costs 120 ms."""

    def call(self, method: str, *args: object) -> object:
        clock = self.clock
        own, other = self.own, self.other
        compiled = own._compilations + other._compilations
        self.calls += 1
        if self.calls & 1:
            start = clock()
            found = getattr(own, method)(*args)
            own_took = clock() - start
            timed_out, other_took = self._other_call(method, args, own_took)
        else:
            timed_out, other_took = self._other_call(method, args, 0)
            start = clock()
            found = getattr(own, method)(*args)
            own_took = clock() - start
        took = (own_took, other_took)
        self.raw[0] += took[0]
        self.raw[1] += took[1]
        if timed_out:
            own._end_trial(other_won=False)
            return found
        if own._compilations + other._compilations == compiled:
            self.spent[0] += took[0]
            self.spent[1] += took[1]
            if self.transitions >= TRIAL_SETTLED:
                self.settled[0] += took[0]
                self.settled[1] += took[1]
            self.step[0] += took[0]
            self.step[1] += took[1]
        else:
            self.step_whole = False
        if method == "_next_state":
            self.transitions += 1
            if self.step_whole and self.transitions > TRIAL_SETTLED:
                self.whole_steps += 1
            self.step_whole = True
            own_step, other_step = self.step
            if self.transitions > TRIAL_VOTES_FROM and own_step + other_step > 0:
                self.votes += 1
                self.other_votes += other_step < own_step
            self.step = [0, 0]
            if self.transitions == TRIAL_SETTLED and self._probe_goals(found):
                return found
        self._maybe_decide()
        return found

    def _probe_goals(self, state: State) -> bool:
        """Time every role's goals in ``state`` with both budgets, added to the sums: a
        playout asks them only at its end, past the trial's first transitions, and with
        one budget they may cost more than the rest of the playout (merrills' goals count
        the pieces: 0.1 ms materialised, 0.9 s on demand, in any state). Compiling is
        counted too (the first goals compile their rules), and the other budget's call is
        cut once the sums would end the trial anyway. Whether it was (the trial is then
        over)."""
        clock = self.clock
        for role in self.own.roles:
            start = clock()
            self.own._goal_values(state, role)
            own_took = clock() - start
            own, other = self.settled
            allowed = TRIAL_CLEAR_FACTOR * (own + own_took) + TRIAL_CLEAR_NS - other
            timed_out, other_took = self._other_call(
                "_goal_values", (state, role), own_took, max(allowed, 1)
            )
            self.raw[0] += own_took
            self.raw[1] += other_took
            if timed_out:
                self.own._end_trial(other_won=False)
                return True
            for sums in (self.spent, self.settled):
                sums[0] += own_took
                sums[1] += other_took
        return False

    def _other_call(
        self, method: str, args: tuple, own_now: int, allowed: int | None = None
    ) -> tuple[bool, int]:
        """Run the call with the other budget: whether it ran past the time that would end
        the trial anyway (a single call may otherwise take minutes: laikLee_hex with the
        full budget), cut by a CPU-time alarm (the copy is then dropped; shared static
        tables and indexes are only stored once complete), and the CPU time of the call
        alone (setting the alarm takes as long as a call answered from a cached state).
        ``allowed``: the CPU ns after which to cut, when not the trial's own bound."""
        if allowed is None:
            own_time, other_time = self.raw
            own_time = max(own_time + own_now, self.floor)
            allowed = TRIAL_CLEAR_FACTOR * own_time + TRIAL_CUT_NS - other_time
        if allowed <= 0 or not _can_time_out():
            return True, 0
        armed = [True]
        other = self.other
        compiled_before = other.compiling_ns()
        started = time.process_time()
        cut_at = started + allowed / 1e9

        def alarm(signum: int, frame: FrameType | None) -> None:
            # compiling rules is a one-off cost of a budget's first states, which the sums
            # leave out: the cut waits for it (the alarm rings again TRIAL_CUT_REPEAT_S
            # later). Amazons' first call with no budget compiled 40 rules in 190 ms.
            if not armed[0] or not _may_cut_in(frame):
                return
            if time.process_time() < cut_at + (other.compiling_ns() - compiled_before) / 1e9:
                return
            raise _TrialTimeout()

        previous = signal.signal(signal.SIGPROF, alarm)
        outer_delay, outer_interval = signal.setitimer(
            signal.ITIMER_PROF, allowed / 1e9, TRIAL_CUT_REPEAT_S
        )
        if outer_delay and outer_delay <= allowed / 1e9:
            # the caller's own CPU-time alarm (a rules worker's step budget) would ring
            # first: leave it as it is, and keep the own budget rather than risk it
            signal.setitimer(signal.ITIMER_PROF, outer_delay, outer_interval)
            signal.signal(signal.SIGPROF, previous)
            return True, 0
        start = self.clock()
        try:
            getattr(other, method)(*args)
            armed[0] = False
            took = self.clock() - start
        except _TrialTimeout:
            armed[0] = False
            return True, self.clock() - start
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
            if outer_delay:  # the caller's alarm goes on, less the CPU time spent here
                left = max(outer_delay - (time.process_time() - started), 1e-6)
                signal.setitimer(signal.ITIMER_PROF, left, outer_interval)
        return False, took

    def _maybe_decide(self) -> None:
        # one-off costs of the first states (ad_game_2x2's full budget materialises
        # relations it then shares between states: 100 ms against 15 ms over its first
        # transitions, then 3 to 10 times faster) end the trial only when the sums are as
        # far apart as a call that is cut; the sums from TRIAL_SETTLED on, by less
        own, other = self.spent
        # the settled sums count once they hold TRIAL_SETTLED_STEPS whole transitions
        # besides the goals timed at TRIAL_SETTLED
        settled = self.whole_steps >= TRIAL_SETTLED_STEPS
        settled_own, settled_other = self.settled if settled else (0, 0)
        if (
            other > TRIAL_CLEAR_FACTOR * own + TRIAL_CUT_NS
            or settled_other > TRIAL_CLEAR_FACTOR * settled_own + TRIAL_CLEAR_NS
        ):
            self.own._end_trial(other_won=False)
        elif (
            own > TRIAL_CLEAR_FACTOR * other + TRIAL_CUT_NS
            or settled_own > TRIAL_CLEAR_FACTOR * settled_other + TRIAL_CLEAR_NS
        ):
            self.own._end_trial(other_won=True)
        elif self.raw[0] + self.raw[1] >= TRIAL_MAX_NS:
            if settled:
                own, other = settled_own, settled_other
            self.own._end_trial(other_won=other < own)
        elif self.revision:
            if self.transitions >= REVISION_TRANSITIONS:
                self.own._end_trial(other_won=settled_other < settled_own)
        else:
            # votes still to come: the choice is made once they cannot turn it
            left = max(TRIAL_TRANSITIONS - self.transitions, 0)
            lead = 2 * self.other_votes - self.votes  # the other's votes less the own's
            if lead > left or lead >= TRIAL_LEAD:
                self.own._end_trial(other_won=True)
            elif lead <= -left or lead <= -TRIAL_LEAD:
                self.own._end_trial(other_won=False)

    def cost(self, which: int) -> int:
        """CPU ns per transition of the own budget (0) or the other (1), as timed so far;
        0 (not known) when the trial ended before its first transition: what it timed
        then is a call or two, not a transition (chess, where the other budget's first
        call is cut: a few microseconds against 3 ms a transition)."""
        if not self.transitions:
            return 0
        return self.spent[which] // self.transitions


class _BudgetWatch:
    """The CPU time per transition once the trials have kept a budget, read from the
    trials' clock every WATCH_STRIDE transitions (the hot path only counts down) and
    averaged over WATCH_WINDOW; a window past ``limit`` ns a transition asks for the
    budgets to be tried again. What the caller does between transitions counts too: a
    revision that keeps the budget raises the limit past that window. When the trials
    timed no transition (``expected_ns`` 0), the first window sets the limit."""

    __slots__ = ("clock", "limit", "countdown", "since", "spent", "transitions")

    def __init__(self, clock: Callable[[], int], expected_ns: int) -> None:
        self.clock = clock
        self.limit = WATCH_FACTOR * expected_ns + WATCH_SLACK_NS if expected_ns > 0 else 0
        self.countdown = WATCH_STRIDE
        self.since = clock()
        self.spent = 0
        self.transitions = 0

    def tick(self) -> int | None:
        """Read the clock: the CPU ns per transition of a window past the limit, if any."""
        now = self.clock()
        took, self.since = now - self.since, now
        self.countdown = WATCH_STRIDE
        if took < 0:  # read from another thread: start the window again
            self.spent = self.transitions = 0
            return None
        self.spent += took
        self.transitions += WATCH_STRIDE
        if not self.limit:  # nothing expected yet: the first window is the measure
            if self.transitions >= WATCH_WINDOW:
                per = self.spent // self.transitions
                self.limit = WATCH_FACTOR * per + WATCH_SLACK_NS
                self.spent = self.transitions = 0
            return None
        if self.transitions < WATCH_WINDOW and self.spent <= self.limit * WATCH_WINDOW:
            return None  # (past that, the whole window is past the limit whatever comes)
        per = self.spent // self.transitions
        self.spent = self.transitions = 0
        return per if per > self.limit else None


_BUDGET_STATE = (
    "_state_budget",
    "_compilations",
    "_compiling_ns",
    "_demand",
    "_compiled",
    "_demand_compiled",
    "_contexts",
    "_last_state",
    "_last_context",
    "_next_facts",
    "_previous",
    "_followed",
    "_legal_groups",
    "_state_sharing",
    "_rule_sharing",
    "_tried",
    "_light",
    "_light_counts",
    "_plain",
    "_fixed_facts",
)
"""What a copy with another budget has of its own (see :meth:`Interpreter._with_state_budget`),
taken from it when it wins its trial."""


def canonical_relations(program: Program) -> frozenset[RelationKey]:
    """``legal``, and the relations that depend on the state and that a ``legal`` rule
    takes its move from whole (``(<= (legal ?p ?m) (true (control ?p)) (feasible ?p
    ?m))``): a state's legal moves live as long as the state's context, and games with
    hundreds of them make as many new tuples a state (see
    :meth:`RuleCompiler.canonical_table`). Other relations gain less than the look-up
    costs (a run that made every relation canonical: chess faster, merrills and sudoku
    slower)."""
    found = {LEGAL_KEY}
    for rule in program.rules:
        arguments = relation_args(rule.head)
        if rule.head_key != LEGAL_KEY or len(arguments) != 2:
            continue
        move = arguments[1]
        if not (isinstance(move, str) and move.startswith("?")):
            continue
        for literal in rule.body:
            positive, atom = literal_atom(literal)
            if not positive or atom is None or move not in relation_args(atom):
                continue
            key = relation_key(atom)
            if key not in (TRUE_KEY, DOES_KEY) and program.layer_of.get(key) != "static":
                found.add(key)
    return frozenset(found)


def _rewrite(rules: list[FlatRule]) -> list[FlatRule]:
    """The rules as the interpreter evaluates them: literals that give constants read
    copies of their relations kept to those constants, each relation restricted to what
    its uses ask for, each state relation that every reader narrows restricted to what
    its readers can ask about, negated fluents folded into groups (all four keep every
    answer)."""
    restricted = restrict_to_asked(restrict_to_uses(specialise_to_constants(rules)))
    return fold_negated_fluents(restricted)


TRIAL_CLOCK: Callable[[], int] = time.thread_time_ns
"""The clock of the budget trials: CPU time of the calling thread (the main one), in ns.
Not the process's: once a CPU-time alarm has been armed, Linux advances that clock by
whole scheduler ticks (4 ms), longer than most calls, so calls timed 0 or a tick."""


def _copy_attributes(source: object, target: object) -> None:
    """Give ``target`` every attribute of ``source`` (a shallow copy). ``copy.copy``
    cannot copy an instance of a class compiled by mypyc, which lists its attributes in
    ``__mypyc_attrs__`` instead of keeping a ``__dict__``."""
    names = getattr(type(source), "__mypyc_attrs__", None)
    for name in vars(source) if names is None else names:
        try:
            value = getattr(source, name)
        except AttributeError:  # never set
            continue
        setattr(target, name, value)


class Interpreter:
    """A GDL reasoner over plain terms, implementing :class:`server.gdl.engine.Engine`."""

    name = "interpreter"

    def __init__(
        self, rules: Sequence[Rule], *, memo: bool = True, _copy_of: Interpreter | None = None
    ) -> None:
        """``memo``: keep the answers of states met before while states recur (see
        :mod:`.state_memo`); off, every call asks the rules. ``_copy_of``: make a
        shallow copy of that interpreter instead (``rules`` unused; see
        :meth:`_with_state_budget`)."""
        if _copy_of is not None:
            _copy_attributes(_copy_of, self)
            return
        self.trial_clock: Callable[[], int] = TRIAL_CLOCK
        """The clock of the budget trials (see :data:`TRIAL_CLOCK`)."""
        self.program: Program = analyse(rules, _rewrite)
        self._canonical = canonical_relations(self.program)
        """The relations whose derived facts are made canonical (see
        :meth:`RuleCompiler.canonical_table`)."""
        self._compiled: dict[int, list[CompiledRule]] = {}
        self._demand_candidates = frozenset(
            component.index
            for component in self.program.components
            if self._may_be_on_demand_in(component)
        )
        self._input_components = frozenset(
            component.index
            for component in self.program.components
            if component.keys <= {TRUE_KEY} or component.keys <= {DOES_KEY}
        )
        """The components of ``true`` or ``does`` alone: given, never evaluated."""
        self._static: dict[RelationKey, Any] = {}
        self._demand: set[RelationKey] = set()
        self._cyclic_strikes: dict[RelationKey, int] = {}
        """Per recursive relation: its calls that a plain top-down evaluation could not
        answer (see :meth:`_Tabling.top_down`)."""
        self._state_budget = STATE_MATERIALISE_BUDGET
        self._compilations = 0
        self._compiling_ns = 0
        """CPU time (ns, of the calling thread) spent compiling rules so far."""
        self._compiling_since = 0
        """The thread's CPU time (ns) when the compiling under way began; 0: none is."""
        self._trial: _BudgetTrial | None = None
        self._may_try_budgets = True
        self.budget_choice: str | None = None
        """After the budget trials: "small", "full" or "none" (see BUDGET_NAMES; None: no
        trial was needed yet, or one still runs)."""
        self._budgets_to_try: list[int] = []
        """The budgets still to time against the one kept, once the trials have begun."""
        self._tried: set[int] = set()
        self._light: set[int] = set()
        """Components that may be computed on demand whose evaluations have stayed well
        within the budget (see :meth:`_count_light`): computed without counting each
        derivation against it (a Python call per fact), their sizes checked afterwards."""
        self._light_counts: dict[int, int] = {}
        """Per such component not light yet: its evaluations in a row that were."""
        self._plain: dict[int, tuple[RelationKey, tuple[Callable, ...], int | None]] = {}
        """State components computed afresh in every state by the same rules, with no
        sharing, patching or count to keep (light ones checked against a LIGHT_SHARE of
        their budget): one relation, its rules' functions, and that budget (None when
        none runs). Their evaluation skips the checks of :meth:`_evaluate`; forgotten
        whenever what those checks read changes (a relation switched to demand, a light
        one no longer light)."""
        self._watch: _BudgetWatch | None = None
        """After the trials: the watch over the budget kept (see :class:`_BudgetWatch`)."""
        self._revisions_left = REVISIONS
        self._revising = False
        self._kept_cost = 0
        """CPU ns per transition of the budget kept, as the trial that kept it timed it."""
        self._watch_floor = 0
        """CPU ns per transition of the window that started the revisions under way, while
        they keep the same budget: the watch after them expects at least that much."""
        self._budget: int | None = None
        self._demand_compiled: dict[tuple, list] = {}
        self._compiler = self._rule_compiler()
        self._memo = StateMemo(enabled=memo)
        """Answers for states met before, and successors of transitions met before."""
        self._contexts: OrderedDict[State, _StateContext] = OrderedDict()
        self._last_state: State | None = None
        self._last_context: _StateContext | None = None
        """The state asked last and its context (the latest of ``_contexts``): one step
        of a match or a playout asks the same state several times in a row."""
        self._next_facts: dict[State, tuple[set, FactGroups | None]] = {}
        """The ``next`` facts each recent successor state was made of (its ``true``
        facts), grouped by head when the rules that made them tell the heads (see
        :meth:`_materialise_move`)."""
        self._next_heads: dict[int, tuple[RawTerm | None, ...] | None] = {}
        """Per move component that holds ``next``: the head of the fluent each of its
        rules makes (None for a rule of another relation), or None when some ``next``
        rule's fluent is a variable (the rules' own, whatever the budget: shared with a
        copy that tries another)."""
        self._plain_moves: dict[RawTerm, RawTerm] = {}
        """Moves met in public terms, each kept as plain values (see :meth:`_plain_move`;
        shared with a copy that tries another budget)."""
        self._move_order = MoveOrder()
        """Per legal move seen: its rank in the public order and its public term (legal
        moves recur from state to state; building both anew took half the public API's
        time on some games, sorting by sort keys a sixth on others)."""
        self._legal_groups: dict[int, tuple[Relation, dict[str, list[RawTerm]]]] = {}
        """Legal moves grouped by role and sorted, by the ``legal`` relation (by its id;
        the relation is kept, so the id is not reused): states share relations."""
        self._state_sharing = _Sharing(true_heads(self.program))
        """State components' relations, by component (see :func:`true_heads`)."""
        self._rule_sharing = _Sharing(move_rule_heads(self.program))
        """The facts of move rules that depend on no move, by (component, rule number)."""
        self._does_patterns = does_patterns(self.program)
        """Per non-recursive move component: the ``does`` literals of each rule."""
        self._pattern_bits: dict[tuple, int] = {}
        """Each distinct ``does`` literal of those rules, as one bit."""
        self._rule_needs: dict[int, tuple[int, ...]] = {}
        """Per such component: per rule, the bits of its ``does`` literals."""
        for index, rule_patterns in self._does_patterns.items():
            needs = []
            for patterns in rule_patterns:
                need = 0
                for pattern in patterns:
                    bit = self._pattern_bits.get(pattern)
                    if bit is None:
                        bit = self._pattern_bits[pattern] = 1 << len(self._pattern_bits)
                    need |= bit
                needs.append(need)
            self._rule_needs[index] = tuple(needs)
        self._move_bits: dict[tuple[str, RawTerm], int] = {}
        """Per move of a role (``does`` fact): the bits of the ``does`` literals it matches."""
        self._joint_bits_known: dict[tuple, int] = {}
        """The same per joint move (joint moves recur in most games)."""
        self._rule_choices: dict[int, dict[int, tuple[int, ...]]] = {
            index: {} for index in self._does_patterns
        }
        """Per such component: by the bits a joint move matches, the numbers of the rules
        that may derive anything for it (whose ``does`` literals each match a move of it)."""
        self._fixed_numbers: dict[int, frozenset[int]] = {}
        """Per component: the numbers of its rules among :func:`fixed_rules`."""
        for index, number in fixed_rules(self.program):
            self._fixed_numbers[index] = self._fixed_numbers.get(index, frozenset()) | {number}
        self._fixed_facts: dict[tuple[int, int], tuple[frozenset, int]] = {}
        """Per rule of :func:`fixed_rules` derived once: its facts and the number of its
        derivations (what a budget spends on it)."""
        self._true_sample: Relation | None = None
        split = _split_keys(self.program)
        self._followed = {
            component.index: SMALL_STRIKES
            for component in self.program.components
            if component.layer == "state"
            and not component.keys & split
            and not component.keys <= {TRUE_KEY, DOES_KEY}
        }
        """State components whose relations patch their indexes from the last ones made
        (see :attr:`Relation.base`), with the times they may still be found too small to;
        left out: relations later strata add to."""
        self._previous: dict[RelationKey, Any] = {}
        """Per relation of those components and ``true``: the one made last."""

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

        self._plans = {
            key: [self.program.components[i] for i in self.program.closure([key])]
            for key in TARGET_KEYS
        }
        inputs = self._input_components  # given, so left out of the plans of a step
        self._move_plan = [
            component
            for component in self._plans[NEXT_KEY]
            if component.layer == "move" and component.index not in inputs
        ]
        self._state_plans = {
            key: [
                component
                for component in plan
                if component.layer == "state" and component.index not in inputs
            ]
            for key, plan in self._plans.items()
        }
        with garbage_collection_paused():  # the static tables: many tuples, kept
            for plan in self._plans.values():
                for component in plan:
                    if component.layer == "static" and component.index not in self._compiled:
                        self._evaluate(component, self._static)

        self.roles: list[str] = self._roles(rules)
        if not self.roles:
            raise GdlError("the game declares no role")
        self._initial = State(args[0] for args in self._static.get(INIT_KEY, Relation()).facts)
        self._static_demand = frozenset(self._demand)

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

    def _estimate(
        self, key: RelationKey, spec: IndexSpec | None, constants: tuple | None = None
    ) -> float:
        """Expected matches of a literal: measured for static relations and for
        ``true`` (on the initial state), guessed for the rest. ``constants``: the values
        of the literal's keys when they are all constants."""
        if key == DOES_KEY or is_asked(key):
            return 1.0  # a joint move; the few values readers ask a relation about
        relation: Relation | DemandTable | None
        if key == TRUE_KEY:
            if self._true_sample is None:
                init = self._static.get(INIT_KEY, Relation())
                self._true_sample = Relation({(args[0],) for args in init.facts})
            relation = self._true_sample
        else:
            relation = self._static.get(key)
        if (
            relation is None
            or not isinstance(relation, Relation)
            or (key != TRUE_KEY and self.program.layer_of.get(key) != "static")
        ):
            keys = len(spec.key_paths) if spec is not None else 0
            return DYNAMIC_GUESS / (8.0**keys)
        if spec is None:
            return float(len(relation.facts))
        index = relation.index(spec)
        if isinstance(index, list):
            return float(len(index))
        # the facts that match the literal's structure, per value of its keys
        average = len(relation.facts) / max(1, len(index))  # type: ignore[arg-type]
        if constants is not None:  # the facts under these very values, when fewer (a
            # value rare on the initial state may grow common: the average stays the bound)
            bucket = index.get(constants[0] if len(constants) == 1 else constants)  # type: ignore[attr-defined]
            return min(average, max(1.0, float(len(bucket or ()))))
        return average

    def _rule_compiler(self) -> RuleCompiler:
        """A compiler of rules for this interpreter's relations on demand (a new one
        whenever they change) and its canonical relations."""
        return RuleCompiler(self._estimate, self._demand.__contains__, self._canonical)

    def _rules_of(self, component: Component) -> list[CompiledRule]:
        compiled = self._compiled.get(component.index)
        if compiled is None:
            started = self._start_compiling()
            try:
                recursive = component.keys if component.recursive else frozenset()
                compiled = [self._compiler.compile(rule, recursive) for rule in component.rules]
            finally:
                self._stop_compiling(started)
            self._compiled[component.index] = compiled
            self._compilations += 1
        return compiled

    def _start_compiling(self) -> bool:
        """Start counting the CPU time spent compiling rules, unless counting already (a
        compile within a compile): whether it started."""
        if self._compiling_since:
            return False
        self._compiling_since = time.thread_time_ns()
        return True

    def _stop_compiling(self, started: bool) -> None:
        """Stop the count that :meth:`_start_compiling` ``started``."""
        if started:
            self._compiling_ns += time.thread_time_ns() - self._compiling_since
            self._compiling_since = 0

    def compiling_ns(self) -> int:
        """CPU time (ns) spent compiling rules so far, the compiling under way included."""
        since = self._compiling_since
        return self._compiling_ns + (time.thread_time_ns() - since if since else 0)

    def _demand_functions(self, key: RelationKey, positions: tuple[int, ...]) -> list:
        functions = self._demand_compiled.get((key, positions))
        if functions is None:
            started = self._start_compiling()
            try:
                component = self.program.components[self.program.component_of[key]]
                functions = [
                    self._compiler.compile_demand(rule, positions)
                    for rule in component.rules
                    if rule.head_key == key
                ]
            finally:
                self._stop_compiling(started)
            self._demand_compiled[(key, positions)] = functions
            self._compilations += 1
        return functions

    def _may_be_on_demand(self, component: Component) -> bool:
        """Relations that no query asks for in full, not split into rule-level strata."""
        return component.index in self._demand_candidates

    def _may_be_on_demand_in(self, component: Component) -> bool:
        """:meth:`_may_be_on_demand`, worked out from the program."""
        if not component.first_part:
            return False
        for key in component.keys:
            if key in TARGET_KEYS or key in (TRUE_KEY, DOES_KEY):
                return False
            if self.program.component_of.get(key) != component.index:
                return False
        return True

    # -- evaluation -------------------------------------------------------------------

    def _evaluate(self, component: Component, db: dict[RelationKey, Any]) -> None:
        """Compute the relations of one component into ``db``."""
        if component.index in self._input_components:
            return
        demand = self._demand
        if demand and not demand.isdisjoint(component.keys):
            self._install_tables(component, db)
            return
        if self._may_be_on_demand(component) and (
            component.layer != "static" or component.index not in self._tried
        ):
            index = component.index
            self._tried.add(index)
            layer = component.layer
            if layer == "state":
                budget = self._state_budget
            else:
                budget = STATIC_MATERIALISE_BUDGET if layer == "static" else MATERIALISE_BUDGET
            light = index in self._light
            outer_budget = self._budget
            self._budget = None if light else budget
            try:
                self._materialise(component, db)
                if light:
                    self._check_light(component, db, budget)
                else:
                    self._count_light(index, budget - self._budget, budget)  # type: ignore[operator]
            except _TooLarge:
                self._light.discard(index)
                self._switch_to_demand(component, db)  # forgets the plain components
                return
            finally:
                self._budget = outer_budget
        else:
            self._materialise(component, db)
        index = component.index
        if index in self._followed and not self._follow_previous(component.keys, db):
            self._followed[index] -= 1  # small: soon not worth asking
            if not self._followed[index]:
                del self._followed[index]

    def _count_light(self, index: int, spent: int, budget: int) -> None:
        """Count an evaluation of a component within ``budget`` that spent ``spent``
        derivations: after LIGHT_AFTER in a row that spent at most a LIGHT_SHARE of it,
        the component is light (see :attr:`_light`)."""
        if spent * LIGHT_SHARE > budget:
            self._light_counts.pop(index, None)
            return
        count = self._light_counts.get(index, 0) + 1
        if count >= LIGHT_AFTER:
            self._light.add(index)
            self._light_counts.pop(index, None)
        else:
            self._light_counts[index] = count

    def _check_light(self, component: Component, db: dict, budget: int) -> None:
        """After a light component was computed without counting: past ``budget`` facts
        it is too large (as if the count had passed it), past a LIGHT_SHARE of it no
        longer light (counted again from its next evaluation)."""
        for key in component.keys:
            if self._outgrown(component.index, len(db[key].facts), budget):
                raise _TooLarge()

    def _outgrown(self, index: int, size: int, budget: int) -> bool:
        """Whether a light component's relation of ``size`` facts is past ``budget``;
        past a LIGHT_SHARE of it, the component is no longer light (nor plain)."""
        if size * LIGHT_SHARE > budget:
            self._light.discard(index)
            self._plain.pop(index, None)
        return size > budget

    def _follow_previous(self, keys: Iterable[RelationKey], db: dict) -> bool:
        """Let the relations of ``keys`` just made into ``db`` patch their indexes from the
        ones made last (see :attr:`Relation.base`), when large enough to gain by it;
        whether any was."""
        previous = self._previous
        large = False
        for key in keys:
            relation = db.get(key)
            if relation.__class__ is Relation and len(relation.facts) >= PATCH_MIN_FACTS:
                relation.follow(previous.get(key))
                previous[key] = relation
                large = True
        return large

    def _counted(self, target: set) -> Callable[[tuple], None]:
        """``target.add``, or while a budget runs, an add that spends it."""
        if self._budget is None:
            return target.add
        store = target.add

        def add(fact: tuple) -> None:
            store(fact)
            self._budget -= 1  # type: ignore[operator]
            if self._budget < 0:
                raise _TooLarge()

        return add

    def _switch_to_demand(self, component: Component, db: dict) -> None:
        """From now on compute ``component`` on demand; recompile whatever uses it."""
        self._demand.update(component.keys)
        self._plain.clear()
        for number in range(len(component.rules)):  # no longer derived: not kept alive
            self._fixed_facts.pop((component.index, number), None)
        for user in self._users_of(component.keys):
            self._compiled.pop(user, None)
        self._demand_compiled.clear()
        # Cached states hold the relation materialised; rules now expect a table.
        self._contexts.clear()
        self._last_state = self._last_context = None
        self._state_sharing.results.clear()
        self._install_tables(component, db)
        if (
            component.layer == "state"
            and self._may_try_budgets
            and self._state_budget < MATERIALISE_BUDGET
            and _can_time_out()
        ):
            self._may_try_budgets = False
            self._budgets_to_try = list(OTHER_STATE_BUDGETS)
            self._next_trial()

    # -- the budget for state relations -------------------------------------------------

    def _next_trial(self) -> None:
        """Time the next budget still to try against the one kept, or end the trials."""
        while self._budgets_to_try:
            budget = self._budgets_to_try.pop(0)
            if budget != self._state_budget:
                self._trial = _BudgetTrial(self, budget, self.trial_clock, self._revising)
                return
        self._trial = None
        self.budget_choice = BUDGET_NAMES[self._state_budget]
        self._revising = False
        self._watch = None
        if self._revisions_left > 0:
            self._watch = _BudgetWatch(self.trial_clock, self._transition_cost())

    def _transition_cost(self) -> int:
        """CPU ns a transition of the budget kept is expected to take: as its trial timed
        it, or as the window that started the revisions under way (0: not known)."""
        return max(self._kept_cost, self._watch_floor)

    def _watch_tick(self, watch: _BudgetWatch) -> None:
        """Read the watch's clock; try the budgets again when the kept one grew slow."""
        per = watch.tick()
        if per is not None and _can_time_out():
            self._revise(per)

    def _revise(self, per_transition: int) -> None:
        """Time the budget kept against each other one again, over REVISION_TRANSITIONS
        (the states the game is at now, its terminal states included)."""
        self._watch = None
        self._revisions_left -= 1
        self._revising = True
        self._watch_floor = per_transition
        self.budget_choice = None
        every = (STATE_MATERIALISE_BUDGET, *OTHER_STATE_BUDGETS)
        self._budgets_to_try = [budget for budget in every if budget != self._state_budget]
        self._next_trial()

    def _with_state_budget(self, budget: int) -> Interpreter:
        """A copy that shares the static relations and materialises state relations up
        to ``budget`` (its own compiled rules and cached states)."""
        other = Interpreter((), _copy_of=self)
        other._state_budget = budget
        other._may_try_budgets = False
        other._budgets_to_try = []
        other._trial = None
        other._watch = None
        other._revisions_left = 0
        other._revising = False
        other._budget = None
        other._compilations = 0
        other._compiling_ns = other._compiling_since = 0
        other._demand = self._demand_with(budget)
        other._compiled = self._static_rules()
        other._demand_compiled = {}
        other._compiler = other._rule_compiler()
        other._contexts = OrderedDict()
        other._last_state = other._last_context = None
        other._next_facts = {}
        other._memo = StateMemo(enabled=self._memo.enabled)
        other._previous = {}
        other._followed = dict(self._followed)
        other._legal_groups = {}
        other._state_sharing = self._state_sharing.fresh()
        other._rule_sharing = self._rule_sharing.fresh()
        other._tried = set(self._tried)
        other._light = set()
        other._light_counts = {}
        other._plain = {}
        other._fixed_facts = {}  # dropped with the copy (the full budget keeps large ones)
        return other

    def _demand_with(self, budget: int) -> set[RelationKey]:
        """The relations computed on demand from the start with this budget for state
        relations: with none, every state relation that may be (rather than switching
        them one by one, each switch recompiling what uses it)."""
        demand = set(self._static_demand)
        if budget == NO_STATE_BUDGET:
            for component in self.program.components:
                if component.layer == "state" and self._may_be_on_demand(component):
                    demand.update(component.keys)
        return demand

    def _static_rules(self) -> dict[int, list[CompiledRule]]:
        components = self.program.components
        return {i: rules for i, rules in self._compiled.items() if components[i].layer == "static"}

    def _end_trial(self, other_won: bool) -> None:
        """Keep the budget kept so far, or from now on the other one of the trial; then
        start the next trial, if any."""
        trial = self._trial
        self._trial = None
        if trial is not None:
            self._kept_cost = trial.cost(1 if other_won else 0)
            if other_won:
                self._drop_contexts()  # free its states now, not at a later collection
                self._adopt(trial.other)
                self._watch_floor = 0
            else:
                trial.other._drop_contexts()
        self._next_trial()

    def _adopt(self, winner: Interpreter) -> None:
        """Go on with the state of the copy that won a trial (its compiled rules, cached
        states and relations shared between states), warm, instead of computing it all
        again: ad_game_2x2's first states cost 10 to 100 times the later ones. Its tables
        computed on demand answer for this interpreter from now on."""
        for name in _BUDGET_STATE:
            setattr(self, name, getattr(winner, name))
        self._compiler = self._rule_compiler()
        dbs: list[dict[Any, Any]] = [context.db for context in self._contexts.values()]
        for entries in self._state_sharing.results.values():
            dbs.extend(entries.values())
        for db in dbs:
            for value in db.values():
                if value.__class__ is DemandTable and value.engine is winner:
                    value.engine = self
                    if value.solver is not None:
                        value.solver.engine = self

    def _drop_contexts(self) -> None:
        """Forget the cached states, releasing their tables (when none is in use)."""
        for context in self._contexts.values():
            release_tables(context.db, self._demand)
        self._contexts.clear()
        self._last_state = self._last_context = None

    def _users_of(self, keys: frozenset) -> set[int]:
        users: set[int] = set()
        for other in self.program.components:
            for rule in other.rules:
                for literal in rule.body:
                    _, atom = literal_atom(literal)
                    if atom is not None and relation_key(atom) in keys:
                        users.add(other.index)
        return users

    def _install_tables(self, component: Component, db: dict) -> None:
        solver = _Tabling(self) if component.recursive else None
        for key in component.keys:
            db[key] = DemandTable(self, key, db, solver)

    def _materialise(self, component: Component, db: dict) -> None:
        """Bottom-up, semi-naive; while a budget runs, give up past that many derivations."""
        rules = self._rules_of(component)
        index = component.index
        fixed = self._fixed_numbers.get(index)
        if fixed is None and not component.recursive and component.first_part:
            keys = component.keys
            if len(keys) == 1:  # the most common: one relation, computed afresh
                (key,) = keys
                relation = db[key] = Relation()
                add = self._counted(relation.facts)
                for compiled in rules:
                    compiled.naive(db, add)
                return
        if component.first_part:
            relations = {key: Relation() for key in component.keys}
            db.update(relations)
        else:  # a later rule-level stratum adds to the relations of the earlier ones
            relations = {key: db[key] for key in component.keys}
            for relation in relations.values():
                relation.invalidate()
        adder = self._counted
        if not component.recursive:
            if fixed is None:
                for compiled in rules:
                    compiled.naive(db, adder(relations[compiled.head_key].facts))
                return
            for number, compiled in enumerate(rules):
                target = relations[compiled.head_key].facts
                if number in fixed:
                    self._add_fixed(index, number, compiled, db, target)
                else:
                    compiled.naive(db, adder(target))
            return
        delta: dict[RelationKey, set] = {key: set() for key in component.keys}
        for number, compiled in enumerate(rules):
            if fixed is not None and number in fixed:
                self._add_fixed(index, number, compiled, db, delta[compiled.head_key])
            else:
                compiled.naive(db, adder(delta[compiled.head_key]))
        delta = {key: facts - relations[key].facts for key, facts in delta.items()}
        for key, facts in delta.items():
            relations[key].facts |= facts
        while any(delta.values()):
            for relation in relations.values():
                relation.invalidate()
            found: dict[RelationKey, set] = {key: set() for key in component.keys}
            delta_lists = {key: list(facts) for key, facts in delta.items()}
            for compiled in rules:
                add = adder(found[compiled.head_key])
                for key, variant in compiled.deltas:
                    if delta_lists[key]:
                        variant(db, delta_lists[key], add)
            delta = {key: facts - relations[key].facts for key, facts in found.items()}
            for key, facts in delta.items():
                relations[key].facts |= facts
        for relation in relations.values():
            relation.invalidate()

    def _add_fixed(
        self, index: int, number: int, compiled: CompiledRule, db: dict, target: set
    ) -> None:
        """Add the facts of a rule of :func:`fixed_rules` to ``target``: derived the first
        time, then taken as they are; a running budget is spent as if derived again."""
        found = self._fixed_facts.get((index, number))
        if found is None:
            derived: set = set()
            store = derived.add
            limit = self._budget
            count = 0

            def add(fact: tuple) -> None:
                nonlocal count
                store(fact)
                count += 1
                if limit is not None and count > limit:
                    raise _TooLarge()

            compiled.naive(db, add)
            found = self._fixed_facts[(index, number)] = (frozenset(derived), count)
        facts, derivations = found
        if self._budget is not None:
            self._budget -= derivations
            if self._budget < 0:
                raise _TooLarge()
        target |= facts

    def _evaluate_in_state(self, component: Component, context: _StateContext) -> None:
        """Compute a state component, or take its relations from an earlier state with
        the same facts of the heads it depends on."""
        sharing = self._state_sharing
        heads = sharing.heads.get(component.index)
        if heads is None:
            self._evaluate(component, context.db)
            return
        facts = context.facts_of(heads)
        found = sharing.find(component.index, facts)
        if found is not None:
            context.db.update(found)
            return
        self._evaluate(component, context.db)
        relations = {key: context.db[key] for key in component.keys if key in context.db}
        for relation in relations.values():
            if isinstance(relation, DemandTable):
                relation.shared = True
        sharing.keep(component.index, facts, relations)

    def _joint_bits(self, joint: tuple) -> int:
        """The bits of the ``does`` literals (see :attr:`_pattern_bits`) that a move of
        ``joint`` (the moves in role order) matches."""
        matched = self._joint_bits_known.get(joint)
        if matched is not None:
            return matched
        known = self._move_bits
        matched = 0
        for fact in zip(self.roles, joint, strict=True):
            bits = known.get(fact)
            if bits is None:
                bits = 0
                for pattern, bit in self._pattern_bits.items():
                    if may_match(pattern, fact):
                        bits |= bit
                if len(known) >= MOVE_CACHE:
                    known.clear()
                known[fact] = bits
            matched |= bits
        if len(self._joint_bits_known) >= MOVE_CACHE:
            self._joint_bits_known.clear()
        self._joint_bits_known[joint] = matched
        return matched

    def _rules_for(self, component: Component, matched: int) -> tuple[int, ...]:
        """The numbers of the rules of a non-recursive move component whose ``does``
        literals each match a move of a joint move that matches the literals of the bits
        ``matched`` (see :meth:`_joint_bits`): the others derive nothing for it."""
        choices = self._rule_choices[component.index]
        found = choices.get(matched)
        if found is None:
            found = choices[matched] = tuple(
                number
                for number, need in enumerate(self._rule_needs[component.index])
                if need & matched == need
            )
        return found

    def _materialise_move(
        self, component: Component, db: dict, context: _StateContext, matched: int
    ) -> FactGroups | None:
        """Compute a non-recursive move component from the rules that may derive anything
        for a joint move that matches the ``does`` literals of the bits ``matched``; a rule
        that depends on no move takes its facts from an earlier state with the same facts
        of its heads.

        For the component of ``next``, returns its facts grouped by the head of their
        fluent, as :meth:`Relation.group` groups the successor's ``true`` facts: each
        rule's facts go to its fluent's head, so the successor need not group them
        again, and the facts a rule took from an earlier state are the very set kept
        then (see :meth:`_StateContext.facts_of`). None for another component, or when
        a rule's fluent is a variable."""
        sharing = self._rule_sharing
        relations = {key: Relation() for key in component.keys}
        db.update(relations)
        rules = self._rules_of(component)
        heads = self._fluent_heads(component, rules)
        # per fluent head: a set kept for sharing, or one made for this state
        groups: dict[RawTerm, set | frozenset] = {}
        for number in self._rules_for(component, matched):
            compiled = rules[number]
            target = relations[compiled.head_key].facts
            rule = (component.index, number)
            shared = sharing.heads.get(rule)
            head = None if heads is None else heads[number]
            if shared is None:
                if head is None:
                    compiled.naive(db, target.add)
                    continue
                group = groups.get(head)
                if group.__class__ is not set:  # none yet, or one kept for sharing
                    group = groups[head] = set() if group is None else set(group)
                compiled.naive(db, group.add)
                continue  # added to the target below
            facts = context.facts_of(shared)
            made = sharing.find(rule, facts)
            if made is None:
                produced: set = set()
                compiled.naive(db, produced.add)
                made = frozenset(produced)
                sharing.keep(rule, facts, made)
            target |= made
            if head is None:
                continue
            group = groups.get(head)
            if group is None:
                groups[head] = made
            elif group.__class__ is set:  # made for this state: grown in place
                group |= made
            elif group is not made:  # kept for sharing: never changed
                groups[head] = set(group) | made
        if heads is None:
            return None
        following = relations[NEXT_KEY].facts
        for group in groups.values():
            if group.__class__ is set:
                following |= group
        return groups  # type: ignore[return-value]

    def _fluent_heads(
        self, component: Component, rules: list[CompiledRule]
    ) -> tuple[RawTerm | None, ...] | None:
        """Per rule of a move component: the head of the fluent it makes when it is a
        ``next`` rule, else None; None for a component without ``next`` or with a
        ``next`` rule whose fluent is a variable (worked out once per component)."""
        index = component.index
        if index in self._next_heads:
            return self._next_heads[index]
        found: tuple[RawTerm | None, ...] | None = None
        if NEXT_KEY in component.keys:
            heads: list[RawTerm | None] = []
            for compiled in rules:
                if compiled.head_key != NEXT_KEY:
                    heads.append(None)
                    continue
                fluent = compiled.rule.head[1]
                head = fluent[0] if fluent.__class__ is tuple else fluent
                if head.startswith("?"):
                    break  # a variable fluent: its head is known only per fact
                heads.append(head)
            else:
                found = tuple(heads)
        self._next_heads[index] = found
        return found

    def _context(self, state: State) -> _StateContext:
        if state is self._last_state:
            return self._last_context  # type: ignore[return-value]
        context = self._contexts.get(state)
        if context is not None:
            self._contexts.move_to_end(state)
            self._last_state, self._last_context = state, context
            return context
        db = dict(self._static)
        made = self._next_facts.pop(state, None)
        if made is None:
            db[TRUE_KEY] = Relation({(fact,) for fact in state.facts})
        else:
            db[TRUE_KEY] = Relation(made[0], made[1])
        self._follow_previous((TRUE_KEY,), db)
        context = _StateContext(db)
        self._contexts[state] = context
        if len(self._contexts) > CACHED_STATES:
            release_tables(self._contexts.popitem(last=False)[1].db, self._demand)
        self._last_state, self._last_context = state, context
        return context

    def _derive(self, state: State, key: RelationKey) -> Relation:
        return self._relation_in(self._context(state), key)

    def _relation_in(self, context: _StateContext, key: RelationKey) -> Relation:
        """A target relation in a state (its state components computed first)."""
        if key not in context.derived:
            self._derive_in(context, key)
        return context.db.get(key) or Relation()

    def _derive_in(self, context: _StateContext, key: RelationKey) -> None:
        """Compute the state components ``key`` needs (for ``next``: those of its plan)."""
        done = context.done
        plain = self._plain
        db = context.db
        for component in self._state_plans[key]:
            index = component.index
            if index in done:
                continue
            found = plain.get(index)
            if found is None or self._budget is not None:
                self._evaluate_in_state(component, context)
                if found is None and self._budget is None:
                    self._note_plain(component)
            else:
                relation_key, functions, budget = found
                relation = db[relation_key] = Relation()
                add = relation.facts.add
                for naive in functions:
                    naive(db, add)
                size = len(relation.facts)
                if (
                    budget is not None
                    and size * LIGHT_SHARE > budget
                    and self._outgrown(index, size, budget)
                ):
                    self._switch_to_demand(component, db)
            done.add(index)
        context.derived.add(key)

    def _note_plain(self, component: Component) -> None:
        """Remember a state component as plain (see :attr:`_plain`) when it is one."""
        index = component.index
        if (
            component.recursive
            or not component.first_part
            or len(component.keys) != 1
            or index in self._fixed_numbers
            or index in self._input_components
            or index in self._followed
            or index in self._state_sharing.heads
            or not self._demand.isdisjoint(component.keys)
        ):
            return
        budget = None
        if self._may_be_on_demand(component):
            if index not in self._light:
                return
            budget = self._state_budget
        (relation_key,) = component.keys
        functions = tuple(compiled.naive for compiled in self._rules_of(component))
        self._plain[index] = (relation_key, functions, budget)

    # -- the engine contract ----------------------------------------------------------

    def initial_state(self) -> State:
        return self._initial

    def _legal(self, state: State) -> _StateContext | StateAnswers:
        """The state's legal moves, as :attr:`_StateContext.legal` and ``legal_facts``
        hold them (kept in the memo when states recur)."""
        answers = self._memo.answers(state)
        if answers is not None and answers.legal is not None:
            return answers
        context = self._legal_in(state)
        if answers is not None:
            answers.legal, answers.legal_facts = context.legal, context.legal_facts
        return context

    def _legal_in(self, state: State) -> _StateContext:
        context = self._context(state)
        if context.legal is None:
            relation = self._relation_in(context, LEGAL_KEY)
            context.legal_facts = relation.facts
            known = self._legal_groups.get(id(relation))
            if known is not None and known[0] is relation:  # shared with an earlier state
                context.legal = known[1]
                return context
            context.legal = self._legal_by_role(relation.facts)
            if len(self._legal_groups) >= CACHED_STATES:
                self._legal_groups.clear()
            self._legal_groups[id(relation)] = (relation, context.legal)
        return context

    def _legal_by_role(self, facts: set[tuple]) -> dict[str, list[RawTerm]]:
        """Each role's legal moves, as public terms in the public order: ranked (one
        lookup a move), sorted as integers and read back by rank."""
        order = self._move_order
        grouped: dict[str, list[RawTerm]] = {}
        by_role: dict[str, list[RawTerm]] = {}
        if len(self.roles) == 1:
            (role,) = self.roles
            by_role[role] = [move for who, move in facts if who == role]
        else:  # one pass over the facts, not one a role
            for who, move in facts:
                moves = by_role.get(who)
                if moves is None:
                    by_role[who] = [move]
                else:
                    moves.append(move)
        for role in self.roles:
            moves = by_role.get(role)
            if not moves:
                continue
            rank, _, public = order.tables
            try:
                ranks = list(map(rank.__getitem__, moves))
            except KeyError:  # a move not seen before
                rank, _, public = order.ranked(moves)
                ranks = list(map(rank.__getitem__, moves))
            ranks.sort()
            grouped[role] = list(map(public.__getitem__, ranks))
        return grouped

    def legal_moves(self, state: State, role: str) -> list[RawTerm]:
        if self._trial is not None:
            return self._trial.call("_legal_moves", state, role)  # type: ignore[return-value]
        return self._legal_moves(state, role)

    def legal_move(self, state: State, role: str, move: RawTerm) -> RawTerm | None:
        if self._trial is not None:
            return self._trial.call("_legal_move", state, role, move)  # type: ignore[return-value]
        return self._legal_move(state, role, move)

    def next_state(self, state: State, moves: Sequence[RawTerm]) -> State:
        if self._trial is not None:
            return self._trial.call("_next_state", state, moves)  # type: ignore[return-value]
        watch = self._watch
        if watch is not None:
            watch.countdown -= 1
            if not watch.countdown:
                self._watch_tick(watch)
        return self._next_state(state, moves)

    def next_if_legal(self, state: State, moves: Sequence[object]) -> State | None:
        """The state after ``moves`` (one per role, in role order) when each is legal in
        ``state`` and given as plain values or as the terms :meth:`legal_moves` handed
        out, else None (then :class:`Game` checks the moves one by one and says what is
        wrong). One call, where checking the moves and then stepping took a call per role
        and one more. Raises TypeError for an unhashable move."""
        if self._trial is not None or len(moves) != len(self.roles):
            return None
        legal = self._legal(state).legal_facts
        for role, move in zip(self.roles, moves):  # noqa: B905 (lengths checked)
            if (role, move) not in legal:
                return None
        return self.next_state(state, moves)  # type: ignore[arg-type]

    def is_terminal(self, state: State) -> bool:
        if self._trial is not None:
            return self._trial.call("_is_terminal", state)  # type: ignore[return-value]
        return self._is_terminal(state)

    def goal_values(self, state: State, role: str) -> list[RawTerm]:
        if self._trial is not None:
            return self._trial.call("_goal_values", state, role)  # type: ignore[return-value]
        return self._goal_values(state, role)

    def _legal_moves(self, state: State, role: str) -> list[RawTerm]:
        return list(self._legal(state).legal.get(role, ()))  # type: ignore[union-attr]

    def _legal_move(self, state: State, role: str, move: RawTerm) -> RawTerm | None:
        if (role, move) not in self._legal(state).legal_facts:
            return None
        return move if move.__class__ is str or move.__class__ is tuple else self._plain_move(move)

    def _plain_move(self, move: RawTerm) -> RawTerm:
        """A public move term as plain values: looked up among the moves met before (a
        public term hashes and compares as its plain value does) rather than rebuilt
        term by term."""
        plain = self._plain_moves.get(move)
        if plain is None:
            plain = unwrap(move)
            if len(self._plain_moves) >= MOVE_CACHE:
                self._plain_moves.clear()
            self._plain_moves[plain] = plain
        return plain

    def _next_state(self, state: State, moves: Sequence[RawTerm]) -> State:
        if len(moves) != len(self.roles):
            raise GdlError(f"expected {len(self.roles)} moves (one per role), got {len(moves)}")
        raw = tuple(moves)
        for move in raw:
            if move.__class__ is not str and move.__class__ is not tuple:
                raw = tuple(
                    [
                        m if m.__class__ is str or m.__class__ is tuple else self._plain_move(m)
                        for m in moves
                    ]
                )
                break
        memo = self._memo
        successor = memo.successor(state, raw)
        if successor is None:
            successor = self._successor(state, raw)
            memo.keep_successor(state, raw, successor)
        return successor

    def _successor(self, state: State, raw: tuple) -> State:
        """The state after the joint move ``raw`` (plain values, in role order)."""
        context = self._context(state)
        if NEXT_KEY not in context.derived:
            self._derive_in(context, NEXT_KEY)
        db = dict(context.db)
        roles = self.roles
        # (a keyword costs zip a slow call; _next_state checked that the lengths agree)
        db[DOES_KEY] = Relation(set(zip(roles, raw)))  # noqa: B905
        demand = self._demand
        tables: list[RelationKey] = []
        matched = self._joint_bits(raw)
        groups: FactGroups | None = None
        for component in self._move_plan:
            keys = component.keys
            if demand and not demand.isdisjoint(keys):
                tables.extend(keys)
                self._evaluate(component, db)
            elif component.index in self._does_patterns and not self._may_be_on_demand(component):
                made = self._materialise_move(component, db, context, matched)
                if NEXT_KEY in keys:
                    groups = made
            else:
                self._evaluate(component, db)
                if demand and not demand.isdisjoint(keys):  # switched to demand just now
                    tables.extend(keys)
        following = db.get(NEXT_KEY)
        if tables:
            release_tables(db, tables)
        if not following:
            return State(())
        successor = State(map(_first, following.facts))
        if len(self._next_facts) >= CACHED_STATES:
            self._next_facts.clear()
        self._next_facts[successor] = (following.facts, groups)
        return successor

    def _is_terminal(self, state: State) -> bool:
        answers = self._memo.answers(state)
        if answers is None:
            return bool(self._derive(state, TERMINAL_KEY).facts)
        terminal = answers.terminal
        if terminal is None:
            terminal = answers.terminal = bool(self._derive(state, TERMINAL_KEY).facts)
        return terminal

    def _goal_values(self, state: State, role: str) -> list[RawTerm]:
        answers = self._memo.answers(state)
        if answers is not None:
            found = answers.goals.get(role)
            if found is not None:
                return list(found)
        values = [value for who, value in self._derive(state, GOAL_KEY).facts if who == role]
        values.sort(key=sort_key)
        if answers is not None:
            answers.goals[role] = values
            return list(values)
        return values
