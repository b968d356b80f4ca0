"""The compiled engine: a game grounded once, then run as generated Python."""

from __future__ import annotations

import dataclasses
import marshal
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine_trial import TRIAL_TRANSITIONS, transition_rate
from ..errors import GdlError
from ..gc_pause import garbage_collection_paused
from ..parser import Rule
from ..state import State
from ..terms import RawTerm, Term, wrap
from .batch import BatchRunner
from .code_limits import BASE_TIME_LIMIT, CodeCaps, caps_for
from .codegen import compile_plan, run_module
from .errors import (
    CompileError,
    GroundingOverBudget,
    GroundingPastStretch,
    GroundingTooLarge,
    GroundingTooSlow,
    NetworkOverBudget,
    OutsideGroundingError,
)
from .estimate import work_budget
from .grounder import NothingToComplement, NothingToFactor, ground
from .network import build_network
from .plan import Plan, build_plan

DEFAULT_MAX_GROUND_RULES = 300_000
DEFAULT_TIME_LIMIT = BASE_TIME_LIMIT
TRIAL_STATES = 64
"""The first states asked about are worked out both ways, incrementally and afresh,
and timed; the way faster on most of them is then kept (the answers are the same)."""
COPY_LEGAL_FROM = 4
"""Lists of legal moves this long or longer are copied from the last ones handed out
when the same again; shorter ones are made as quickly as compared."""
COPY_LEGAL_TRIAL = 1024
"""Lists made (not copied) after which copying is kept only if it paid."""

AS_WRITTEN = "as written"
COMPLEMENTED = "with its move tests on the state complemented"
FACTORED = "with its rules factored"
"""How the rules of a compiled game were compiled (:attr:`CompiledEngine.form`); the
later two also name the attempts in a refusal's reason."""

Status = tuple[bool, tuple[list[int], ...]]
"""Whether a state is terminal, and every role's legal move indices in it."""

GROUND_RULES_PER_SECOND = 50_000
"""Ground rules one second of the time limit allows. Compiling costs 12 to 30 us of
CPU time per ground rule on the corpus (grounding, reading, folding, planning and
generating code together); the largest corpus games that compile within the default
2 s have 68,000 to 79,000 ground rules (checkersTiny 67,954, max_knights 75,191,
pawnToQueen 78,480) and need 0.6 to 1.3 s, and those between 80,000 and 100,000 need 4
to 6 s. So an attempt stops as soon as grounding passes this budget (80,000 rules for
2 s, see :data:`ATTEMPT_SECONDS`) instead of grounding on up to the cap or the
deadline."""

RULE_STRETCH = 1.4
"""How far past its rule budget an attempt grounds on when the bound of its estimate,
extrapolated that far, stays well within the estimate's budget
(:meth:`.grounder._Collector.stretch`): to 112,000 rules at the default 2 s. The budget
is a count of rules for the cost of a failed attempt; the estimate tells the cost of
compiling better (on today's corpus the programs of 80,000 to 112,000 rules estimated
within 2 s, chineseCheckers6 and chineseCheckers4, compile in 0.3 to 1.6 s). An attempt
not stretched stops at the budget as before; one stretched stops at 1.4 times it, or
sooner when its bound passes the estimate's budget."""

ATTEMPT_SECONDS = 0.4
"""The part of the time limit that buys no ground rules (at most :data:`ATTEMPT_SHARE`
of it): what an attempt costs besides them (reading the rules, the network of a small
game). Grounding alone costs 3.4 to 5.7 us a rule up to the budget (laikLee_hex, from
one process to the next on the same machine), so a failed attempt on a game past the
budget costs 0.27 to 0.46 s at the default 2 s, where 100,000 rules cost 0.34 to
0.57 s."""

ATTEMPT_SHARE = 0.2
"""The most of a short time limit that :data:`ATTEMPT_SECONDS` takes."""


FACTORED_HANDICAP = 1.2
"""The seconds of budget the later attempts (the move tests on the state complemented,
then the rules factored) go without: an attempt that fails at the default 2 s costs 0.2
to 0.35 s, and the later ones are given the budgets of 0.8 s there (32,000 ground rules,
a failure of about 0.1 s each), so that a failed compile stays near 0.5 s. Only after
a first failure at the rule budget, its bound near the limit (see :func:`later_budget`)."""

FACTORED_MAX_BUDGET = 4.2
"""The most seconds of budget a later attempt has (190,000 ground rules, an estimate
of 7.5 s): enough for checkers-mustjump-torus with its move tests complemented (185,000
ground rules, 73,000 of them facts of its board's geometry; compiled in 4.7 s, 3,500
transitions a second against the interpreter's 2,300) and crossers3 factored (93,000
ground rules, estimated at 5.4 s, compiled in 1.6 s, 13,000 transitions a second
against the interpreter's 6,800). Factored programs larger still (skirmish and its
variants, 316,000) compiled in 8 to 9 s at a 60 s start clock only to run slower than
the interpreter (skirmish 150 transitions a second against 1,000); skirmish now compiles
as written, its frame rule complemented."""


def factored_budget(time_limit: float) -> float:
    """The seconds whose budgets each later attempt has under ``time_limit``."""
    return max(min(time_limit - FACTORED_HANDICAP, FACTORED_MAX_BUDGET), 0.0)


def later_budget(time_limit: float, as_written: CompileError) -> float:
    """The seconds whose budgets each later attempt has after the rules as written
    failed with ``as_written``: :func:`factored_budget`, or the whole time limit (at
    most :data:`FACTORED_MAX_BUDGET`) when that failure says the program is cheap per
    rule: its budget was stretched and it grew past that too, or its estimate, not its
    count, refused it. The handicap is there for the programs that ground slowest and
    then fail (chess, laikLee_hex, the checkers family), whose later attempts at full
    budgets cost 0.1 to 0.2 s more; after the failures named here, a later attempt at
    full budgets costs 0.1 s or less when it fails too, and it compiles pacman2p and
    pacman3p factored (53,000 and 50,000 ground rules, estimated at 2.9 s, in 0.7 to
    0.8 s) within the default 2 s."""
    if isinstance(as_written, GroundingPastStretch | NetworkOverBudget):
        return min(time_limit, FACTORED_MAX_BUDGET)
    return factored_budget(time_limit)


def rule_budget(time_limit: float) -> int:
    """The ground rules that ``time_limit`` seconds of compiling allow."""
    overhead = min(ATTEMPT_SECONDS, time_limit * ATTEMPT_SHARE)
    return round(GROUND_RULES_PER_SECOND * max(time_limit - overhead, 0.0))


@dataclass(frozen=True)
class PortableEngine:
    """A compiled engine as another process can receive it (it pickles): the plan and
    the module compiled from it, marshalled. :meth:`CompiledEngine.from_portable` runs
    the module again, with no grounding and no code generation (see
    :mod:`server.gdl.compile_aside`)."""

    plan: Plan
    source: str
    code: bytes
    """The module's code object, marshalled (read by the same Python only)."""
    tables: dict[str, Any]
    setup_seconds: float
    form: str
    form_race: FormRace | None


@dataclass(frozen=True)
class Playout:
    """The end of one random playout on compact states."""

    state: int
    steps: int
    terminal: bool


class CompiledEngine:
    """A GDL engine that runs a grounded, optimised and generated network.

    Besides the :class:`server.gdl.engine.Engine` contract on :class:`State`, it offers
    a fast interface on compact states (``int`` bit sets, bit ``k`` = fluent ``k``):
    :meth:`encode`/:meth:`decode`, :meth:`legal_indices`, :meth:`next_compact`,
    :meth:`terminal_compact`, :meth:`status_compact`, :meth:`goals_compact` and
    :meth:`playout`. On :class:`State` values it works each state's terminal flag and
    legal moves out once and keeps them on the state, and it steps to the next state in
    one call when the moves are legal (:meth:`next_if_legal`).
    """

    name = "compiled"

    def __init__(
        self,
        plan: Plan,
        namespace: dict[str, Any],
        setup_seconds: float,
        form: str = AS_WRITTEN,
    ) -> None:
        network = plan.network
        self.plan = plan
        self.network = network
        self.roles: list[str] = list(network.roles)
        self.fluents = network.fluents
        self.moves = network.moves
        self.setup_seconds = setup_seconds
        self.form = form
        """How the rules were compiled: :data:`AS_WRITTEN`, :data:`COMPLEMENTED` or
        :data:`FACTORED`."""
        self.form_race: FormRace | None = None
        """The timed race between the rules as written and factored, when one was run
        (see :func:`_faster_form`)."""
        self.source: str = namespace["__source__"]
        self._module: tuple[Any, dict[str, Any]] = (
            namespace["__code__"],
            namespace["__tables__"],
        )
        """The compiled module and its tables, for :meth:`portable`."""
        self._fluent_bit = {fluent: 1 << k for k, fluent in enumerate(network.fluents)}
        self._move_index = [{m: j for j, m in enumerate(ms)} for ms in network.moves]
        self._does_bits = [
            tuple(network.does_bit(r, j) for j in range(len(ms)))
            for r, ms in enumerate(network.moves)
        ]
        self._role_index = {role: r for r, role in enumerate(self.roles)}
        self._goal_terms = [[value for value, _ in goals] for goals in network.goals]
        self._public_moves: list[list[Term]] = [[wrap(m) for m in ms] for ms in network.moves]
        self._last_goals: tuple[int, list[list[RawTerm]]] | None = None
        self._last_legal: list[tuple[list[int], list[RawTerm], list[int], list[RawTerm]]] = [
            ([], [], [], []) for _ in self.roles
        ]
        """Per role: the last two lists of legal move indices asked, each with its public
        terms. Many games give a role the same moves in many states (every move of a
        simultaneous game; the noop, and the moves a board rarely changes, of turn-taking
        ones): those are copied, not looked up again one by one."""
        self._copy_legal = True
        """Whether lists are copied so: off when fewer than one call in three copied, after
        the first COPY_LEGAL_TRIAL lists made (comparing then costs more than it saves)."""
        self._legal_copied = 0
        self._legal_made = 0
        """Lists handed out by copying, and lists made, counted for that choice."""
        self.terminal_compact: Callable[[int], bool] = namespace["terminal"]
        self.legal_indices: Callable[[int], tuple[list[int], ...]] = namespace["legal"]
        self._goals = namespace["goals"]
        self._next = namespace["next"]
        self._playout = namespace["playout"]
        self.initial_compact: int = network.init_mask
        self._initial_state = State.from_compact(self, self.initial_compact)
        self._status: Callable[..., tuple[bool, tuple[list[int], ...], tuple]] | None = (
            namespace.get("status")
        )
        self._last_gates: tuple[int, tuple] = (0, ())
        """The last state worked out incrementally, with its gate values: the next one
        is worked out from them, recomputing only what the bits that differ touch."""
        self._work_out: Callable[[int], Status] = self._separately
        self._trials = 0
        self._incremental_votes = 0
        if self._status is not None:
            unset = (False,) * namespace["STATUS_GATES"]
            _, _, gates = self._status(self.initial_compact, -1, unset)
            self._last_gates = (self.initial_compact, gates)
            self._work_out = self._trial

    @classmethod
    def from_rules(
        cls,
        rules: list[Rule],
        *,
        max_ground_rules: int = DEFAULT_MAX_GROUND_RULES,
        time_limit: float = DEFAULT_TIME_LIMIT,
        caps: CodeCaps | None = None,
        factoring: bool | None = None,
    ) -> CompiledEngine:
        """Ground, optimise and generate code for a game (``caps``: the size caps of
        the generated code, by default those ``time_limit`` allows).

        Raises :class:`CompileError` (with ``reason``) when the game cannot be
        compiled: :class:`GroundingTooLarge` beyond ``max_ground_rules`` ground rules
        or when the generated code is predicted past its size cap (which grows with
        ``time_limit``, :func:`~server.gdl.compiled.code_limits.caps_for`; from the ground
        program, :mod:`server.gdl.compiled.ground_size`, then from the plan),
        :class:`GroundingOverBudget` (a :class:`GroundingTooSlow`) as soon as grounding
        passes the rules ``time_limit`` allows (:func:`rule_budget`),
        :class:`NetworkOverBudget` (a :class:`GroundingOverBudget`) as soon as grounding
        (by a lower bound) or reading the ground program shows that compiling it is
        estimated to cost well over ``time_limit`` (:func:`work_budget`), and
        :class:`GroundingTooSlow` when a stage finds ``time_limit`` seconds of CPU time of
        the calling thread passed (CPU time, so that a busy machine does not change which
        games compile; a compile that ends past the limit, its work done, is kept). When
        the program is too large for the caps or the budgets, the game is compiled again
        with its move tests on the state complemented as well
        (:mod:`server.gdl.compiled.complement`; when there are some and the later budgets
        reach :data:`COMPLEMENT_MIN_BUDGET`), then with its rules factored into smaller
        joins (:mod:`server.gdl.compiled.factor`; when some rule factors), each with
        smaller budgets (:func:`factored_budget`) and within what is left of
        ``time_limit``; games that compile as written keep their networks. ``factoring``
        true factors the rules from the start (with the full budgets; as written when
        none factors), false never.
        ``setup_seconds`` records the CPU time it took. Python's garbage
        collector is paused meanwhile (:mod:`server.gdl.gc_pause`).
        """
        start = time.thread_time()
        deadline = start + time_limit
        caps = caps or caps_for(time_limit)

        def attempt(
            factored: bool,
            budgets: float = time_limit,
            state_tests: bool | None = None,
            until: float = deadline,
            max_rules: int = max_ground_rules,
        ) -> tuple[Plan, dict[str, Any]]:
            return _build(rules, max_rules, budgets, until, caps, factored, state_tests)

        form = AS_WRITTEN
        with garbage_collection_paused():
            try:
                if factoring:
                    try:
                        plan, namespace = attempt(True)
                        form = FACTORED
                    except NothingToFactor:
                        plan, namespace = attempt(False)
                else:
                    try:
                        plan, namespace = attempt(False)
                    except (GroundingTooLarge, GroundingOverBudget) as as_written:
                        if factoring is not None:
                            raise
                        drop_frames(as_written)  # the first program freed before the next
                        budgets = later_budget(time_limit, as_written)
                        later = [(FACTORED, lambda: attempt(True, budgets))]
                        if factored_budget(time_limit) >= COMPLEMENT_MIN_BUDGET:
                            later.insert(
                                0,
                                (COMPLEMENTED, lambda: attempt(False, budgets, state_tests=True)),
                            )
                        form, (plan, namespace) = _smaller(later, as_written)
            except BaseException as failed:
                drop_frames(failed)
                raise
        # Past the deadline now, the work is done all the same: the engine is kept. The
        # stages look at the clock as they go and stop a compile that runs long; one that
        # ends a little past the limit (Python compiling the generated module, the last
        # step, took speedChess from 1.9 to 2.2 s of a 2 s limit in one load of five) would
        # only add the interpreter's set-up to the time spent.
        engine = cls(plan, namespace, time.thread_time() - start, form)
        spent = engine.setup_seconds
        if factoring is None and form == AS_WRITTEN and _worth_a_form_race(plan, time_limit, spent):
            race_deadline = deadline - 2 * FORM_RACE_SECONDS  # the race within the limit too
            cap = min(max_ground_rules, _factored_rule_cap(plan, time_limit, spent))
            engine = _faster_form(
                engine,
                lambda: attempt(
                    True, factored_budget(time_limit), until=race_deadline, max_rules=cap
                ),
            )
            engine.setup_seconds = time.thread_time() - start
        return engine

    def portable(self) -> PortableEngine:
        """This engine as another process can receive it: the plan without the network's
        rules, which only planning reads (a third of the pickle)."""
        code, tables = self._module
        plan = self.plan
        slim = dataclasses.replace(plan, network=dataclasses.replace(plan.network, rules={}))
        return PortableEngine(
            slim,
            self.source,
            marshal.dumps(code),
            tables,
            self.setup_seconds,
            self.form,
            self.form_race,
        )

    @classmethod
    def from_portable(cls, portable: PortableEngine) -> CompiledEngine:
        """The engine another process compiled (:meth:`portable`), its module run here."""
        plan = portable.plan
        plan.deadline = float("inf")  # the other process's clock: no deadline here
        namespace = run_module(plan, portable.source, marshal.loads(portable.code), portable.tables)
        engine = cls(plan, namespace, portable.setup_seconds, portable.form)
        engine.form_race = portable.form_race
        return engine

    # -- compact states ----------------------------------------------------------

    def encode(self, state: State) -> int:
        """The compact form of a state."""
        bits = self._fluent_bit
        try:
            return sum(bits[fact] for fact in state.facts)
        except KeyError as error:
            raise OutsideGroundingError(f"unknown fluent {error.args[0]!r}") from None

    def decode(self, compact: int) -> State:
        """The :class:`State` of a compact state (its fluents decoded when first asked)."""
        return State.from_compact(self, compact)

    def decode_facts(self, compact: int) -> list[RawTerm]:
        """The fluents of a compact state."""
        fluents = self.fluents
        facts = []
        while compact:
            low = compact & -compact
            facts.append(fluents[low.bit_length() - 1])
            compact ^= low
        return facts

    def joint_bits(self, joint: Sequence[int]) -> int:
        """The input bits of a joint move given as one move index per role."""
        bits = 0
        for r, j in enumerate(joint):
            bits |= self._does_bits[r][j]
        return bits

    def next_compact(self, compact: int, joint: Sequence[int]) -> int:
        """The state after a joint move given as move indices (no legality check)."""
        return self._next(compact | self.joint_bits(joint), *joint)

    def goals_compact(self, compact: int) -> list[list[RawTerm]]:
        """Every derivable goal value of each role."""
        terms = self._goal_terms
        return [[terms[r][k] for k in found] for r, found in enumerate(self._goals(compact))]

    def playout(
        self,
        compact: int,
        rng: random.Random,
        limit: int = 10_000,
        record: list[tuple[int, ...]] | None = None,
    ) -> Playout:
        """Play uniformly random joint moves until terminal, stuck or ``limit`` steps.

        ``record``, when given, receives the joint move (move indices) of every step.
        """
        state, steps, terminal = self._playout(compact, rng.random, limit, record)
        return Playout(state, steps, terminal)

    def status_compact(self, compact: int) -> Status:
        """Whether a compact state is terminal and every role's legal move indices,
        worked out from the gate values of the state this was last asked about
        (recomputing only what the bits that differ touch), when the game has the
        generated code for it; else by :meth:`terminal_compact` and :meth:`legal_indices`."""
        if self._status is None:
            return self._separately(compact)
        last, gates = self._last_gates  # one tuple: safe when threads share the engine
        terminal, legal, gates = self._status(compact, compact ^ last, gates)
        self._last_gates = (compact, gates)
        return terminal, legal

    def _separately(self, compact: int) -> Status:
        return self.terminal_compact(compact), self.legal_indices(compact)

    def _trial(self, compact: int) -> Status:
        """Both ways, timed (in turns, which first); after TRIAL_STATES states the way
        that was faster on more of them is kept (a vote: a pause of the process
        during one call does not decide)."""
        clock = time.perf_counter_ns
        self._trials += 1
        if self._trials & 1:
            start = clock()
            self._separately(compact)
            middle = clock()
            found = self.status_compact(compact)
            faster = clock() - middle < middle - start
        else:
            start = clock()
            found = self.status_compact(compact)
            middle = clock()
            self._separately(compact)
            faster = middle - start < clock() - middle
        self._incremental_votes += faster
        if self._trials >= TRIAL_STATES:
            incremental = 2 * self._incremental_votes >= self._trials
            self._work_out = self.status_compact if incremental else self._separately
        return found

    def batch(self, size: int = 4096) -> BatchRunner:
        """A runner that advances ``size`` random playouts at once (bulk playouts)."""
        return BatchRunner(self.plan, size)

    # -- the Engine contract -------------------------------------------------------

    def _compact_of(self, state: State) -> int:
        """The compact form of a state, kept on the state after the first conversion."""
        if state._owner is self:  # the hot path: a state this engine made or met
            return state._compact  # type: ignore[return-value]
        compact = self.encode(state)
        state.attach(self, compact)
        return compact

    def _status_of(self, state: State) -> Status:
        """Whether ``state`` is terminal and every role's legal move indices in it,
        worked out once per state and kept on it."""
        if state._owner is not self:
            state.attach(self, self.encode(state))
        status = state._memo
        if status is None:
            status = state._memo = self._work_out(state._compact)  # type: ignore[arg-type]
        return status  # type: ignore[return-value]

    def initial_state(self) -> State:
        return self._initial_state

    def legal_moves(self, state: State, role: str) -> list[RawTerm]:
        r = self._role_index[role]
        status = state._memo if state._owner is self else None
        if status is None:
            status = self._status_of(state)
        indices: list[int] = status[1][r]  # type: ignore[index]
        moves = self._public_moves[r]
        if not self._copy_legal or len(indices) < COPY_LEGAL_FROM:
            return [moves[j] for j in indices]
        last = self._last_legal[r]  # one tuple: safe when threads share the engine
        if last[0] == indices:
            self._legal_copied += 1
            return last[1][:]
        if last[2] == indices:
            self._legal_copied += 1
            return last[3][:]
        public: list[RawTerm] = [moves[j] for j in indices]
        self._last_legal[r] = (indices, public, last[0], last[1])
        self._legal_made += 1
        if self._legal_made == COPY_LEGAL_TRIAL:  # kept only where it pays
            self._copy_legal = 2 * self._legal_copied >= self._legal_made
        return public[:]

    def legal_move(self, state: State, role: str, move: RawTerm) -> RawTerm | None:
        r = self._role_index[role]
        j = self._move_index[r].get(move)
        if j is None or j not in self._status_of(state)[1][r]:
            return None
        return self._public_moves[r][j]

    def next_state(self, state: State, moves: Sequence[RawTerm]) -> State:
        joint = []
        bits = self._compact_of(state)
        does_bits = self._does_bits
        for r, index in enumerate(self._move_index):
            j = index.get(moves[r])
            if j is None:
                raise OutsideGroundingError(
                    f"{self.roles[r]} can never play {moves[r]!r} in this game"
                )
            joint.append(j)
            bits |= does_bits[r][j]
        return State.from_compact(self, self._next(bits, *joint))

    def next_if_legal(self, state: State, moves: Sequence[object]) -> State | None:
        """The state after ``moves`` (one per role, in role order) when each is a move
        of this game that is legal in ``state``, else None (raises TypeError for an
        unhashable move)."""
        status = state._memo if state._owner is self else None
        if status is None:
            status = self._status_of(state)
        bits: int = state._compact  # type: ignore[assignment]
        legal_indices: tuple[list[int], ...] = status[1]  # type: ignore[index]
        joint = []
        for index, does, legal, move in zip(
            self._move_index, self._does_bits, legal_indices, moves, strict=True
        ):
            j = index.get(move)  # type: ignore[call-overload]
            if j is None or j not in legal:
                return None
            joint.append(j)
            bits |= does[j]
        return State.from_compact(self, self._next(bits, *joint))

    def is_terminal(self, state: State) -> bool:
        status = state._memo if state._owner is self else None
        if status is None:
            status = self._status_of(state)
        return status[0]  # type: ignore[index]

    def goal_values(self, state: State, role: str) -> list[RawTerm]:
        r = self._role_index[role]
        compact = self._compact_of(state)
        last = self._last_goals
        if last is None or last[0] != compact:
            last = self._last_goals = (compact, self.goals_compact(compact))
        return list(last[1][r])


def _roles(rules: list[Rule]) -> list[str]:
    roles: list[str] = []
    for rule in rules:
        head = rule.head
        if isinstance(head, tuple) and head[0] == "role" and len(head) == 2 and not rule.body:
            if not isinstance(head[1], str) or head[1].startswith("?"):
                raise CompileError(f"a role must be a constant: {rule}")
            if head[1] not in roles:
                roles.append(head[1])
    if not roles:
        raise CompileError("the game declares no role")
    return roles


def _build(
    rules: list[Rule],
    max_ground_rules: int,
    budgets: float,
    deadline: float,
    caps: CodeCaps,
    factoring: bool,
    state_tests: bool | None = None,
) -> tuple[Plan, dict[str, Any]]:
    """Ground, optimise and generate code once, the rules as written or factored (and
    with the move tests on the state complemented or not, :func:`ground`), within the
    rule and work budgets of ``budgets`` seconds and the ``deadline``."""
    roles = _roles(rules)
    program = ground(
        rules,
        max_rules=max_ground_rules,
        deadline=deadline,
        budget=rule_budget(budgets),
        work_budget=work_budget(budgets),
        stretch_to=round(rule_budget(budgets) * RULE_STRETCH),
        read_names=False,
        factoring=factoring,
        state_tests=state_tests,
    )
    network = build_network(program, roles, deadline, work_budget(budgets), caps)
    del program
    try:
        plan = build_plan(network, deadline)
        network.rules = {}  # read by planning only: freed before the collector wakes
        return plan, compile_plan(plan, deadline, caps)
    except (RecursionError, MemoryError, SyntaxError) as error:
        raise CompileError(f"the generated code does not compile ({error})") from error


COMPLEMENT_MIN_BUDGET = 2.0
"""The least budget (seconds) of the later attempts with which the one that complements
the move tests on the state is made (from a 3.2 s limit, a start clock of 20 s, on). The
games it compiles ground 100,000 rules and more complemented (the checkers family), none
within the 32,000 of the default limit, where the attempt cost them 0.1 to 0.15 s more
of a failed compile (0.52 to 0.66 s in all)."""


FORM_RACE_MIN_RULES = 80_000
"""Ground rules as written from which, when the later attempts have budget enough for
the complemented one (a start clock of 20 s or more, :data:`COMPLEMENT_MIN_BUDGET`), the
rules are also compiled factored and the two forms raced (:func:`_faster_form`): the
most the default 2 s allows. Neither the size nor the shrinkage tells which form runs
faster. At a 60 s start clock, factored ran faster for tron_10x10 (126,707 ground rules
as written, 3,737 factored; 54,000 transitions a second against 39,000), pacman2p
(315,844 and 53,010; 24,800 against 19,400; raced within the 2.3 s that 7.2 s as written
leave, :func:`_factored_rule_cap`) and four_way_battle (92,875 and 87,291; 11,600
against 8,200), and slower for checkers (330,010 and 110,936; 11,400 against 27,200)
and kalaha6x2x4 (97,899 and 109,767; 16,800 against 72,700). Below this size, factored
was as fast or slower (pacman3p, 68,535 as written: 28,500 against 45,100; colonelBlotto,
kalaha5x2x3), so no second compile is spent there."""
FORM_RACE_SECONDS = 0.25
"""CPU time each form is timed at most in that race."""
FORM_RACE_MIN_LEFT = 0.5
"""Seconds of the limit that must be left, after the race, for the factored compile."""
FACTORED_WINS_BY = 1.1
"""How much faster the factored form must run to be kept over the rules as written."""


@dataclass(frozen=True)
class FormRace:
    """Transitions per second of the rules as written and factored, in a timed race."""

    as_written_rate: float
    factored_rate: float

    @property
    def factored_wins(self) -> bool:
        return self.factored_rate > self.as_written_rate * FACTORED_WINS_BY


def _worth_a_form_race(plan: Plan, time_limit: float, spent: float) -> bool:
    """Whether a program that compiled as written in ``spent`` seconds is large enough,
    and the limit generous enough, to compile it factored too and race the two forms:
    the later attempts must have budget enough for the complemented one, and at least
    :data:`FORM_RACE_MIN_LEFT` of the limit must be left after the race."""
    return (
        factored_budget(time_limit) >= COMPLEMENT_MIN_BUDGET
        and plan.network.stats.get("ground_rules", 0) >= FORM_RACE_MIN_RULES
        and time_limit - spent - 2 * FORM_RACE_SECONDS >= FORM_RACE_MIN_LEFT
    )


def _factored_rule_cap(plan: Plan, time_limit: float, spent: float) -> int:
    """The most ground rules the factored form may have in a race: as many as the time
    left would compile at the rate the rules as written compiled. Factoring that does
    not shrink a program much is not worth a race when little time is left
    (mineClearingSmall took 4.9 s of 10 as written and 4.7 s factored, to run as fast),
    while one that shrinks it to a few percent is (tron_10x10: 126,707 ground rules in
    4.9 to 5.9 s as written, 3,737 factored in 0.16 s, running 1.4 times faster)."""
    left = time_limit - spent - 2 * FORM_RACE_SECONDS
    ground_rules = plan.network.stats.get("ground_rules", 0)
    return max(int(ground_rules * left / max(spent, 1e-3)), 0)


def _faster_form(
    as_written: CompiledEngine, factored: Callable[[], tuple[Plan, dict[str, Any]]]
) -> CompiledEngine:
    """``as_written``, or the rules compiled factored when that compiles (within what
    is left of the time limit less the race's 2 * FORM_RACE_SECONDS) and runs faster in a
    timed race of random transitions (:func:`~server.gdl.engine_trial.transition_rate`,
    the same playouts for both)."""
    try:
        with garbage_collection_paused():
            plan, namespace = factored()
    except CompileError:  # nothing to factor, or over a budget or the time limit
        return as_written
    other = type(as_written)(plan, namespace, as_written.setup_seconds, FACTORED)
    try:
        race = FormRace(
            transition_rate(as_written, seconds=FORM_RACE_SECONDS, transitions=TRIAL_TRANSITIONS),
            transition_rate(other, seconds=FORM_RACE_SECONDS, transitions=TRIAL_TRANSITIONS),
        )
    except GdlError:
        return as_written
    winner = other if race.factored_wins else as_written
    winner.form_race = race
    return winner


def drop_frames(error: BaseException) -> None:
    """Drop the frames of a failed attempt from ``error`` and the errors it was raised
    from or during: their locals hold the ground program, and the callbacks that stopped
    grounding hold the error in turn, a cycle only the cyclic collector frees. Dropped
    while the collector is paused, the program is freed by reference counting; kept, the
    collector's first run once the pause ended traced it all first (a sixth of a failed
    compile of chess_200)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        chained = pending.pop()
        if chained is None or id(chained) in seen:
            continue  # an error met again (a chain may loop): its frames are gone already
        seen.add(id(chained))
        chained.__traceback__ = None
        pending += (chained.__cause__, chained.__context__)


def _smaller(
    attempts: list[tuple[str, Callable[[], tuple[Plan, dict[str, Any]]]]],
    as_written: CompileError,
) -> tuple[str, tuple[Plan, dict[str, Any]]]:
    """The later attempts in turn, each ``(what it changes, attempt)``, after
    ``as_written`` was too large: the first that compiles, with what it changed. An
    attempt that would ground the program of an earlier one is skipped (nothing to
    complement or factor). When all fail, the error tells every reason, as an error of
    the kind ``as_written`` is, unless the clock stopped one (a :class:`GroundingTooSlow`
    the load may change, so not remembered, and no later attempt is made)."""
    alike: list[str] = []
    others: list[str] = []

    def reason() -> str:
        said = as_written.reason
        if len(alike) == 1:
            said += f", as written and {alike[0]}"
        elif alike:
            said += f", as written, {', '.join(alike[:-1])} and {alike[-1]}"
        return "; ".join([said, *others])

    for label, attempt in attempts:
        try:
            return label, attempt()
        except (NothingToFactor, NothingToComplement):
            continue
        except CompileError as failed:
            drop_frames(failed)  # its program freed now: the next error does not chain it
            if failed.reason == as_written.reason:
                alike.append(label)
            else:
                others.append(f"{label}, {failed.reason}")
            if type(failed) is GroundingTooSlow:
                raise GroundingTooSlow(reason()) from None
    raise type(as_written)(reason()) from None
