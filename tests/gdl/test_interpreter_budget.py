"""The interpreter's budget for state relations: small (computed on demand past 300 facts),
full (materialised up to 30,000) or none (computed on demand), chosen per game by timing
the small one against the full one, then the faster against none, on the first calls.

The clock of the trials is replaced here by one that charges each budget a fixed time per
call, so the choice is deterministic; the answers must not depend on it. The last test
runs the real clock on corpus games whose difference is large (5 to 15 times).
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from shared_material import shared_path

from server.gdl.interpreter import Interpreter
from server.gdl.interpreter import engine as interpreter_engine
from server.gdl.interpreter.engine import MATERIALISE_BUDGET, _TrialTimeout
from server.gdl.parser import Rule, parse_gdl

SIDE = 20
PAINT = f"""
(role painter)
{" ".join(f"(index {i})" for i in range(SIDE))}
{" ".join(f"(init (cell {x} {y} blank))" for x in range(SIDE) for y in range(SIDE))}
(init (step 0))
{" ".join(f"(succ {i} {i + 1})" for i in range(6))}
(<= (colour ?x ?y ?c) (true (cell ?x ?y ?c)))
(<= (legal painter (paint ?x ?y)) (index ?x) (index ?y) (colour ?x ?y blank))
(<= (next (cell ?x ?y red)) (does painter (paint ?x ?y)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (not (does painter (paint ?x ?y))))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step 6)))
(<= (goal painter 100) (true (step 6)))
"""
"""One state relation of 400 facts (``colour``), asked for every cell: past the small
budget, like ad_game_2x2's."""

SMALL_RULES = """
(role walker)
(init (at 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal walker step) (true (at ?n)))
(<= (next (at ?m)) (true (at ?n)) (succ ?n ?m))
(<= terminal (true (at 3)))
(<= (goal walker 100) (true (at 3)))
"""
"""No state relation near the small budget."""


def rules(text: str) -> list[Rule]:
    return parse_gdl(text)


class WayClock:
    """A trial clock charging each budget a fixed time per call (``none_ns``: by default
    far slower than the others, so that the last trial ends at its first call).

    The trial reads the clock before and after each of the two interpreters answers a
    call: its own first on odd calls of a trial, the other budget's first on even calls;
    then, after its fourth transition, around the goals of each (its own first). Outside
    a trial (the watch over the budget kept) the clock stands still.
    """

    def __init__(
        self,
        small_ns: int,
        full_ns: int,
        none_ns: int = 1_000_000_000,
        goal_ns: dict[str, int] | None = None,
    ) -> None:
        self.costs = {"small": small_ns, "full": full_ns, "none": none_ns}
        self.goal_costs = goal_ns or self.costs
        """What the goals cost in the trial's probe (by default, as any call)."""
        self.compiling: set[int] = set()
        """Transitions (counted from 0) whose calls compile rules, as far as the trial sees."""
        self.engine: Interpreter | None = None
        self.trial: object = None
        self.calls = 0
        self.reads = 0
        self.now = 0

    def __call__(self) -> int:
        assert self.engine is not None
        trial = self.engine._trial
        if trial is None:
            return self.now
        if trial is not self.trial or trial.calls != self.calls:
            self.trial, self.calls, self.reads = trial, trial.calls, 0
        closing, second = self.reads % 2, self.reads // 2
        self.reads += 1
        if closing and trial.transitions in self.compiling:
            trial.other._compilations += 1
        if closing:
            runs_own = bool(trial.calls & 1) != bool(second) if second < 2 else not second & 1
            budget = (trial.own if runs_own else trial.other)._state_budget
            costs = self.goal_costs if second >= 2 else self.costs
            self.now += costs[interpreter_engine.BUDGET_NAMES[budget]]
        return self.now


def interpreter(text: str, clock: WayClock | None = None) -> Interpreter:
    """The trials time the rules: every call asks them (no memo of states met before)."""
    engine = Interpreter(rules(text), memo=False)
    if clock is not None:
        clock.engine = engine
        engine.trial_clock = clock
    return engine


def playouts(engine: Interpreter, count: int = 6) -> list[tuple]:
    """Everything ``count`` random playouts ask, step by step."""
    rng = random.Random(3)
    seen: list[tuple] = []
    for _ in range(count):
        seen += playout(engine, rng)
    return seen


def playout(engine: Interpreter, rng: random.Random) -> list[tuple]:
    seen: list[tuple] = []
    state = engine.initial_state()
    while True:
        terminal = engine.is_terminal(state)
        legal = [engine.legal_moves(state, role) for role in engine.roles]
        seen.append((state, terminal, legal))
        if terminal:
            break
        joint = [rng.choice(moves) for moves in legal]
        assert all(
            engine.legal_move(state, role, move) == move
            for role, move in zip(engine.roles, joint, strict=True)
        )
        state = engine.next_state(state, joint)
    seen.append(tuple(engine.goal_values(state, role) for role in engine.roles))
    return seen


def fixed_budget(text: str) -> Interpreter:
    """An interpreter that keeps the small budget without a trial (the reference)."""
    engine = interpreter(text)
    engine._may_try_budgets = False
    return engine


def test_a_game_without_large_state_relations_runs_no_trial() -> None:
    engine = interpreter(SMALL_RULES, WayClock(1, 1))
    playouts(engine)
    assert engine.budget_choice is None
    assert engine._state_budget == interpreter_engine.STATE_MATERIALISE_BUDGET


def test_the_full_budget_is_kept_when_it_is_faster_with_the_same_answers() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=3_000_000, full_ns=1_000_000))
    reference = playouts(fixed_budget(PAINT))
    first = playouts(engine)
    assert engine.budget_choice == "full"
    assert engine._state_budget == interpreter_engine.MATERIALISE_BUDGET
    assert first == reference
    assert playouts(engine) == reference  # answered with the full budget only
    assert engine._trial is None
    colour = engine._context(engine.initial_state()).db[("colour", 3)]
    assert len(colour.facts) == SIDE * SIDE  # materialised, not a table on demand


def test_the_small_budget_is_kept_when_it_is_faster() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=1_000_000, full_ns=3_000_000))
    reference = playouts(fixed_budget(PAINT))
    assert playouts(engine) == reference
    assert engine.budget_choice == "small"
    assert engine._state_budget == interpreter_engine.STATE_MATERIALISE_BUDGET
    table = engine._context(engine.initial_state()).db[("colour", 3)]
    assert isinstance(table, interpreter_engine.DemandTable)


TWO_TRIALS = 12
"""Playouts of PAINT (6 transitions each) long enough for two trials of 32 transitions."""


def test_no_budget_is_kept_when_it_is_faster_than_the_faster_of_the_others() -> None:
    """The moves of the player in control among those of six players (chineseCheckers6):
    every state relation asked on demand."""
    engine = interpreter(PAINT, WayClock(small_ns=3_000_000, full_ns=2_000_000, none_ns=1_000_000))
    reference = playouts(fixed_budget(PAINT), TWO_TRIALS)
    assert playouts(engine, TWO_TRIALS) == reference
    assert engine.budget_choice == "none"
    assert engine._state_budget == interpreter_engine.NO_STATE_BUDGET
    assert engine._trial is None
    assert playouts(engine, TWO_TRIALS) == reference  # answered with no budget only
    table = engine._context(engine.initial_state()).db[("colour", 3)]
    assert isinstance(table, interpreter_engine.DemandTable)


@pytest.mark.source_modules
def test_with_no_budget_state_relations_are_on_demand_from_the_start() -> None:
    """Not switched one by one as each passes the budget (every switch recompiles the
    rules that use the relation and the tables' functions)."""
    engine = interpreter(PAINT)
    engine._may_try_budgets = False
    none = engine._with_state_budget(interpreter_engine.NO_STATE_BUDGET)
    assert ("colour", 3) in none._demand and ("colour", 3) not in engine._demand

    def no_switch(component: object, db: object) -> None:
        raise AssertionError("a state relation switched to demand")

    none._switch_to_demand = no_switch  # type: ignore[method-assign]
    assert playouts(none) == playouts(fixed_budget(PAINT))


def test_the_faster_of_small_and_full_is_kept_when_no_budget_is_slower() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=3_000_000, full_ns=1_000_000, none_ns=2_000_000))
    assert playouts(engine, TWO_TRIALS) == playouts(fixed_budget(PAINT), TWO_TRIALS)
    assert engine.budget_choice == "full" and engine._trial is None


def test_setting_the_cpu_alarm_is_not_timed_as_part_of_the_other_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The alarm around each call of the other budget costs about as much as a call
    answered from a cached state; timed with it, the other budget lost when it was faster."""
    clock = WayClock(small_ns=2_000_000, full_ns=1_000_000)
    setitimer = signal.setitimer

    def slow_setitimer(which: int, seconds: float, interval: float = 0.0) -> tuple:
        clock.now += 5_000_000
        return setitimer(which, seconds, interval)

    monkeypatch.setattr(interpreter_engine.signal, "setitimer", slow_setitimer)
    engine = interpreter(PAINT, clock)
    playouts(engine)
    assert engine.budget_choice == "full"


def test_the_trial_clock_sees_calls_shorter_than_a_scheduler_tick() -> None:
    """Once a CPU-time alarm has been armed, Linux advances the process's CPU clock by
    whole ticks; the trial's clock must still tell a short call from none."""
    previous = signal.signal(signal.SIGPROF, lambda signum, frame: None)
    try:
        signal.setitimer(signal.ITIMER_PROF, 100.0)
        seen = 0
        for _ in range(20):
            start = interpreter_engine.TRIAL_CLOCK()
            deadline = time.perf_counter() + 0.0002
            while time.perf_counter() < deadline:
                pass
            seen += interpreter_engine.TRIAL_CLOCK() > start
        assert seen >= 18
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def transitions_until_chosen(engine: Interpreter) -> int:
    """Transitions of random playouts until the trial has chosen; answers checked on the way."""
    reference = fixed_budget(PAINT)
    rng = random.Random(4)
    transitions = 0
    while engine.budget_choice is None:
        state = engine.initial_state()
        while engine.budget_choice is None and not engine.is_terminal(state):
            moves = engine.legal_moves(state, "painter")
            assert moves == reference.legal_moves(state, "painter")
            joint = [rng.choice(moves)]
            state, expected = engine.next_state(state, joint), reference.next_state(state, joint)
            assert state == expected
            transitions += 1
    return transitions


def test_the_trial_ends_early_when_one_budget_is_far_slower(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chess must not spend the whole trial materialising its large relations in full."""
    monkeypatch.setattr(interpreter_engine, "OTHER_STATE_BUDGETS", (MATERIALISE_BUDGET,))
    engine = interpreter(PAINT, WayClock(small_ns=1_000_000, full_ns=100_000_000))
    assert transitions_until_chosen(engine) <= 2
    assert engine.budget_choice == "small" and engine._trial is None


def test_the_full_budget_may_end_the_trial_early_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interpreter_engine, "OTHER_STATE_BUDGETS", (MATERIALISE_BUDGET,))
    engine = interpreter(PAINT, WayClock(small_ns=100_000_000, full_ns=1_000_000))
    # before the votes start, the sums must part by as much as a call that is cut
    assert transitions_until_chosen(engine) < interpreter_engine.TRIAL_SETTLED
    assert engine.budget_choice == "full" and engine._trial is None


def first_moves_until_chosen(
    engine: Interpreter, clock: WayClock, full_cost: Callable[[int], int]
) -> int:
    """Playouts of the first legal move until the trial has chosen, the full budget
    charged ``full_cost(n)`` per call during transition ``n`` (from 0); the transitions."""
    transitions = 0
    while engine.budget_choice is None:
        state = engine.initial_state()
        while engine.budget_choice is None and not engine.is_terminal(state):
            clock.costs["full"] = full_cost(transitions)
            moves = engine.legal_moves(state, "painter")
            state = engine.next_state(state, [moves[0]])
            transitions += 1
    return transitions


def test_the_trial_counts_votes_not_sums() -> None:
    """Full is faster on most transitions; one slow call of it (a garbage collection,
    say) does not turn the choice, as long as it is not four times the small sum."""
    clock = WayClock(small_ns=2_000_000, full_ns=1_000_000)
    engine = interpreter(PAINT, clock)
    first_vote = interpreter_engine.TRIAL_VOTES_FROM  # the transition numbered so votes first
    transitions = first_moves_until_chosen(
        engine, clock, lambda at: 30_000_000 if at == first_vote + 2 else 1_000_000
    )
    # full wins the first two votes, loses the next two (the second because its terminal
    # test is still slow), and leads by six after ten votes (the trial against no budget
    # then ends at its second call)
    assert transitions == first_vote + 11
    assert engine.budget_choice == "full"


def test_the_budget_a_trial_brings_in_warms_up_before_the_votes() -> None:
    """Full, the budget the trial brings in, is slower than small over its first dozen
    transitions (its indexes and memos are new) and twice as fast after: it wins, because
    the votes start after its warm-up (chineseCheckers6 lost its faster budget one trial in
    three when they started at the fifth transition)."""
    warm_up = 12
    assert interpreter_engine.TRIAL_SETTLED < warm_up < interpreter_engine.TRIAL_VOTES_FROM
    clock = WayClock(small_ns=2_000_000, full_ns=3_000_000)
    engine = interpreter(PAINT, clock)
    first_moves_until_chosen(engine, clock, lambda at: 3_000_000 if at < warm_up else 1_000_000)
    assert engine.budget_choice == "full"


def _trial_of_the_full_budget(monkeypatch: pytest.MonkeyPatch) -> tuple[Interpreter, object]:
    """An interpreter on PAINT in a trial of the full budget, cut after 50 ms; its
    initial state."""
    monkeypatch.setattr(interpreter_engine, "TRIAL_CUT_NS", 50_000_000)
    monkeypatch.setattr(interpreter_engine, "OTHER_STATE_BUDGETS", (MATERIALISE_BUDGET,))
    engine = Interpreter(rules(PAINT))
    state = engine.initial_state()
    engine.legal_moves(state, "painter")  # starts the trial
    return engine, state


@pytest.mark.source_modules
def test_a_call_that_runs_away_with_the_full_budget_is_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """laikLee_hex materialises a path relation for minutes with the full budget."""
    engine, state = _trial_of_the_full_budget(monkeypatch)
    assert engine._trial is not None
    forever = _rules_code("def forever(state):\n    while True:\n        pass", "forever")
    engine._trial.other._is_terminal = forever  # type: ignore[method-assign]
    assert engine.is_terminal(state) is False
    assert engine.budget_choice == "small" and engine._trial is None
    assert len(engine.legal_moves(state, "painter")) == SIDE * SIDE


CPU_TIMER_SLACK = 0.01
"""Seconds an ITIMER_PROF read back may exceed what was set: the kernel samples the
process's CPU clock, which may lag the running thread's by up to a scheduler tick (CI
once read 50.0029 s left of a 50 s alarm with hardly any time spent)."""


def test_the_trial_keeps_a_cpu_alarm_armed_by_its_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rules worker arms ITIMER_PROF with its step budget around every request: the
    trial's own alarm must leave it armed, less the time spent, with its handler."""
    fired: list[int] = []
    previous = signal.signal(signal.SIGPROF, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_PROF, 50.0)
        engine = Interpreter(rules(PAINT))
        state = engine.initial_state()
        for _ in range(3):
            engine.legal_moves(state, "painter")  # starts the trial, then runs both ways
            engine.is_terminal(state)
        left, _ = signal.getitimer(signal.ITIMER_PROF)
        assert 40.0 < left <= 50.0 + CPU_TIMER_SLACK
        assert signal.getsignal(signal.SIGPROF) is not previous and not fired
        # an alarm of the caller's that rings before the trial's would: the trial leaves it
        monkeypatch.setattr(interpreter_engine, "TRIAL_CUT_NS", 100_000_000_000)
        signal.setitimer(signal.ITIMER_PROF, 30.0)
        engine = Interpreter(rules(PAINT))
        engine.legal_moves(engine.initial_state(), "painter")
        engine.is_terminal(engine.initial_state())
        left, _ = signal.getitimer(signal.ITIMER_PROF)
        assert 20.0 < left <= 30.0 + CPU_TIMER_SLACK
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


CORPUS_CHOICES = [
    ("ad_game_2x2", "full"),
    ("skirmishNew", "full"),
    ("othelloSuicide", "full"),
    ("chess", "small"),
    ("brawl", "none"),
    ("amazons", "none"),
]
"""Games whose budgets differ 1.5 to 60 times (CPU time, so a loaded machine disturbs
the choice little): the first ones are faster with state relations materialised, the last
two with all of them on demand (amazons by five times, once its trials have parted small
and full within TRIAL_MAX_NS). The mummy mazes are not among them: their state
relations depend on the walls only, so the budgets share them between states and run
about as fast. Nor is chineseCheckers4 any more, which was faster on demand as that
derived the moves of the player in control only: its rules now derive no others (see
:mod:`server.gdl.interpreter.asked`)."""


@pytest.mark.parametrize(("name", "choice"), CORPUS_CHOICES)
def test_corpus_games_get_the_faster_budget_with_the_same_answers(name: str, choice: str) -> None:
    """Along random playouts, through the trial and 20 transitions beyond, the answers
    equal those of an interpreter that keeps the small budget; the trial picks the faster
    budget (timed in CPU time, so a fresh engine gets up to three tries at it: a loaded
    machine can swing one close trial, not three)."""
    path: Path = shared_path("conformance", "games", f"{name}.kif")
    game_rules = parse_gdl(path.read_text(encoding="utf-8"))
    choices = []
    for _ in range(3):
        choices.append(_choice_along_playouts(game_rules))
        if choices[-1] == choice:
            break
    assert choices[-1] == choice, choices


def _choice_along_playouts(game_rules: list[Rule]) -> str | None:
    """The budget an interpreter picks, checking every answer against one that keeps
    the small budget."""
    engine, reference = Interpreter(game_rules), Interpreter(game_rules)
    reference._may_try_budgets = False
    rng = random.Random(5)
    beyond = 0
    while beyond < 20:
        state = engine.initial_state()
        while beyond < 20 and not engine.is_terminal(state):
            assert not reference.is_terminal(state)
            legal = [engine.legal_moves(state, role) for role in engine.roles]
            assert legal == [reference.legal_moves(state, role) for role in engine.roles]
            joint = [rng.choice(moves) for moves in legal]
            state, expected = engine.next_state(state, joint), reference.next_state(state, joint)
            assert state == expected
            beyond += engine.budget_choice is not None
        for role in engine.roles:
            assert engine.goal_values(state, role) == reference.goal_values(state, role)
    return engine.budget_choice


@pytest.mark.source_modules
def test_a_cut_that_lands_where_python_ignores_it_rings_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception raised inside a garbage collector callback or a ``__del__`` is
    ignored; the alarm that cuts a runaway call must ring again, not leave it to run."""
    engine, state = _trial_of_the_full_budget(monkeypatch)
    assert engine._trial is not None
    swallowed: list[bool] = []
    forever_swallowing_the_first_cut = _rules_code(
        """
def forever(state):
    try:
        while True:
            pass
    except _TrialTimeout:
        swallowed.append(True)  # as if it had rung inside a gc callback
    while True:
        pass
""",
        "forever",
        _TrialTimeout=_TrialTimeout,
        swallowed=swallowed,
    )

    _cut_within_seconds(engine, state, forever_swallowing_the_first_cut)
    assert swallowed == [True]


@pytest.mark.source_modules
def test_a_cut_lands_only_in_the_rules_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cut that rang in code run between two steps of the rules (a finalizer, a collector
    callback, the standard library) would be swallowed there and printed as an exception
    ignored: the alarm raises only in the interpreter's own code, ringing again until then."""
    engine, state = _trial_of_the_full_budget(monkeypatch)
    assert engine._trial is not None
    interrupted: list[bool] = []
    forever = _rules_code("def forever(state):\n    while True:\n        pass", "forever")

    def elsewhere_then_in_the_rules(state: object) -> bool:
        try:
            done = time.process_time() + 0.3  # past the 50 ms the cut waits for
            while time.process_time() < done:
                pass
        except _TrialTimeout:
            interrupted.append(True)
        return bool(forever(state))

    _cut_within_seconds(engine, state, elsewhere_then_in_the_rules)
    assert interrupted == []


def _cut_within_seconds(engine: Interpreter, state: object, runaway: Any) -> None:
    """Check that the trial's call of ``runaway`` (as the other budget's terminal test) is
    cut, within 10 s of wall time, and that the trial then keeps the small budget."""
    assert engine._trial is not None

    def backstop(signum: int, frame: object) -> None:
        raise AssertionError("the call was never cut")

    engine._trial.other._is_terminal = runaway  # type: ignore[method-assign]
    previous = signal.signal(signal.SIGALRM, backstop)
    signal.alarm(10)
    try:
        assert engine.is_terminal(state) is False  # type: ignore[arg-type]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert engine.budget_choice == "small" and engine._trial is None


def _rules_code(source: str, name: str, **names: object) -> Any:
    """The function ``name`` defined in generated code, as the interpreter's rules are
    (a trial's alarm cuts a call only there)."""
    namespace: dict[str, Any] = dict(names)
    exec(source, namespace)  # noqa: S102 - a test's own source
    return namespace[name]


def walk(engine: Interpreter, clock: WayClock, transitions: int) -> None:
    """Random transitions of PAINT (no goals asked), each checked against the small
    budget's answers; outside a trial, the clock is charged the cost of a call of the
    budget kept for each of the three calls of a transition."""
    reference = fixed_budget(PAINT)
    rng = random.Random(6)
    state = engine.initial_state()
    for _ in range(transitions):
        if engine._trial is None:
            clock.now += 3 * clock.costs[interpreter_engine.BUDGET_NAMES[engine._state_budget]]
        if engine.is_terminal(state):
            state = engine.initial_state()
            continue
        moves = engine.legal_moves(state, "painter")
        assert moves == reference.legal_moves(state, "painter")
        joint = [rng.choice(moves)]
        state, expected = engine.next_state(state, joint), reference.next_state(state, joint)
        assert state == expected


def test_the_trial_times_the_goals_too() -> None:
    """Merrills: no budget answers the first transitions fastest, but its goals (asked at
    the end of each playout only, never within the trial's first transitions) cost 0.9 s
    where the small budget's cost 0.1 ms. The trial times them on a state of its own."""
    goals = {"small": 1_000_000, "full": 1_000_000, "none": 900_000_000}
    clock = WayClock(small_ns=3_000_000, full_ns=2_000_000, none_ns=1_000_000, goal_ns=goals)
    engine = interpreter(PAINT, clock)
    walk(engine, clock, 60)
    assert engine.budget_choice == "full" and engine._trial is None


def test_a_budget_that_grows_slow_after_its_trial_is_tried_again() -> None:
    """No budget wins the trials; then it costs 50 times as much (later states, say):
    the watch sees it within a window and times the others again, which win."""
    clock = WayClock(small_ns=3_000_000, full_ns=2_000_000, none_ns=1_000_000)
    engine = interpreter(PAINT, clock)
    walk(engine, clock, 60)
    assert engine.budget_choice == "none" and engine._watch is not None
    clock.costs["none"] = 50_000_000
    walk(engine, clock, 2 * interpreter_engine.WATCH_WINDOW)
    assert engine._revisions_left == interpreter_engine.REVISIONS - 1
    walk(engine, clock, interpreter_engine.REVISION_TRANSITIONS + 20)
    assert engine.budget_choice == "full" and engine._trial is None
    assert engine._state_budget == MATERIALISE_BUDGET


def test_trials_cut_at_their_first_call_leave_the_watch_to_learn_the_cost() -> None:
    """Chess late in a long process: the other budgets' first calls are cut (a slower heap
    pushes them past the cut), so the trials time no transition. The watch then takes its
    first window as the measure instead of expecting next to nothing, and spends no
    revision on a budget that stays as fast (a revision times both budgets on every call
    for 256 transitions: chess ran 90 transitions a second instead of 330 all through the
    benchmark's measure). A budget that grows slow later is still tried again."""
    clock = WayClock(small_ns=3_000_000, full_ns=2_000_000_000, none_ns=2_000_000_000)
    engine = interpreter(PAINT, clock)
    walk(engine, clock, 10)
    assert engine.budget_choice == "small" and engine._watch is not None
    walk(engine, clock, 4 * interpreter_engine.WATCH_WINDOW)
    assert engine._revisions_left == interpreter_engine.REVISIONS
    clock.costs["small"] = 150_000_000
    walk(engine, clock, 2 * interpreter_engine.WATCH_WINDOW)
    assert engine._revisions_left < interpreter_engine.REVISIONS


def test_a_revision_that_keeps_the_budget_raises_the_watch_past_that_window() -> None:
    """A slow caller (its own work counts in the watch's windows) costs one revision,
    which keeps the budget; the watch then expects that much and asks no more."""
    clock = WayClock(small_ns=3_000_000, full_ns=2_000_000, none_ns=1_000_000)
    engine = interpreter(PAINT, clock)
    walk(engine, clock, 60)
    assert engine.budget_choice == "none"
    clock.costs = {"small": 30_000_000, "full": 20_000_000, "none": 10_000_000}
    walk(engine, clock, 4 * interpreter_engine.REVISION_TRANSITIONS)
    assert engine.budget_choice == "none" and engine._trial is None
    assert engine._revisions_left == interpreter_engine.REVISIONS - 1


def test_the_budget_that_wins_goes_on_with_the_states_its_trial_computed() -> None:
    """Its compiled rules, cached states and tables are taken over, warm (ad_game_2x2's
    first states cost 10 to 100 times the later ones), with the same answers; the tables
    computed on demand answer for the interpreter itself."""
    clock = WayClock(small_ns=3_000_000, full_ns=2_000_000, none_ns=1_000_000)
    engine = interpreter(PAINT, clock)
    while engine._trial is None or engine._state_budget != MATERIALISE_BUDGET:
        walk(engine, clock, 1)  # until the full budget has won and is timed against none
    copy = engine._trial.other  # no budget, which wins this last trial
    walk(engine, clock, 30)
    assert engine.budget_choice == "none" and engine._trial is None
    assert engine._contexts is copy._contexts and engine._compiled is copy._compiled
    tables = [
        value
        for context in engine._contexts.values()
        for value in context.db.values()
        if isinstance(value, interpreter_engine.DemandTable)
    ]
    assert tables and all(table.engine is engine for table in tables)
    walk(engine, clock, 30)


def test_one_off_costs_of_the_first_states_do_not_end_the_trial() -> None:
    """ad_game_2x2: the full budget's first two transitions cost 7 times the small one's
    (relations materialised once, then shared between states), the later ones a third."""
    clock = WayClock(small_ns=3_000_000, full_ns=20_000_000)
    engine = interpreter(PAINT, clock)
    first_moves_until_chosen(engine, clock, lambda at: 20_000_000 if at < 2 else 1_000_000)
    assert engine.budget_choice == "full"


def test_a_trial_of_slow_transitions_decides_within_its_cpu_time() -> None:
    """Amazons: small and full cost 180 and 135 ms a transition. The trial decides on
    the sums once both budgets together have spent TRIAL_MAX_NS, rather than timing every
    call twice until the votes part (22 transitions, 7.7 s)."""
    clock = WayClock(small_ns=60_000_000, full_ns=45_000_000)  # none: its trial ends at once
    engine = interpreter(PAINT, clock)
    transitions = first_moves_until_chosen(engine, clock, lambda at: 45_000_000)
    assert engine.budget_choice == "full"
    both_per_transition = 3 * (60_000_000 + 45_000_000)
    # (plus the goals timed at the fourth transition, and the trial against none)
    assert transitions <= interpreter_engine.TRIAL_MAX_NS // both_per_transition + 2
    assert transitions < interpreter_engine.TRIAL_VOTES_FROM


@pytest.mark.parametrize(
    "compiling",
    [set(), {interpreter_engine.TRIAL_SETTLED}],
    ids=["timed", "compiling"],
)
def test_goals_dear_on_one_budget_end_no_trial_beside_a_transition_or_none(
    compiling: set[int],
) -> None:
    """Amazons: no budget runs a transition five times as fast as full, while its goals
    (asked once a playout; timed at the trial's fourth transition) cost 73 ms against
    full's 6. The goals beside one transition end no trial; nor beside none, when the calls
    of the transition after them compile rules (no budget meets new questions) and are left
    out of the sums: no budget wins."""
    goals = {"small": 6_000_000, "full": 6_000_000, "none": 73_000_000}
    clock = WayClock(small_ns=60_000_000, full_ns=45_000_000, none_ns=8_000_000, goal_ns=goals)
    clock.compiling = compiling
    engine = interpreter(PAINT, clock)
    walk(engine, clock, 60)
    assert engine.budget_choice == "none" and engine._trial is None


COMPILING = """
def compile_for(engine, seconds):
    started = engine._start_compiling()
    try:
        done = process_time() + seconds
        while process_time() < done:
            pass
    finally:
        engine._stop_compiling(started)
"""
"""Compiling rules as the interpreter counts it, for ``seconds`` of CPU time, in the
rules' generated code (where a cut may land)."""


@pytest.mark.source_modules
def test_the_cut_waits_while_the_other_budget_compiles_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compiling rules is a one-off cost of a budget's first states, which the trial's sums
    leave out: amazons' first call with no budget compiled 40 rules in 190 ms and was cut,
    keeping the full budget at a fifth of the speed. The cut waits for compiling (here
    0.3 s against a cut after 50 ms), then cuts what runs away after it."""
    engine, state = _trial_of_the_full_budget(monkeypatch)
    assert engine._trial is not None
    other = engine._trial.other
    compile_for = _rules_code(COMPILING, "compile_for", process_time=time.process_time)
    answer = other._is_terminal

    def compiling_then_answering(state: object) -> bool:
        compile_for(other, 0.3)
        return bool(answer(state))

    other._is_terminal = compiling_then_answering  # type: ignore[method-assign]
    assert engine.is_terminal(state) is False
    assert engine._trial is not None and engine._trial.other is other  # not cut
    assert other.compiling_ns() >= 300_000_000

    forever = _rules_code("def forever(state):\n    while True:\n        pass", "forever")

    def compiling_then_running_away(state: object) -> bool:
        compile_for(other, 0.3)
        return bool(forever(state))

    _cut_within_seconds(engine, state, compiling_then_running_away)


BUSY = """
def busy_for(seconds):
    done = process_time() + seconds
    while process_time() < done:
        pass
"""


@pytest.mark.source_modules
def test_the_cut_allows_for_what_a_transition_of_the_budget_kept_costs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Amazons' trial of no budget against full began at a state full had met (its call
    took nothing) and none had not: 260 to 310 ms, cut after 250, where a transition of
    full costs 120 ms. The cut allows four times what the trial before timed a transition
    of the budget kept (here 100 ms, and a call of 0.3 s against a cut after 50 ms), so
    such a call answers; a runaway is cut all the same."""
    monkeypatch.setattr(interpreter_engine, "TRIAL_CUT_NS", 50_000_000)
    monkeypatch.setattr(interpreter_engine, "OTHER_STATE_BUDGETS", (MATERIALISE_BUDGET,))
    engine = Interpreter(rules(PAINT))
    engine._kept_cost = 100_000_000  # as a trial before this one timed it
    state = engine.initial_state()
    engine.legal_moves(state, "painter")  # starts the trial
    assert engine._trial is not None
    other = engine._trial.other
    busy_for = _rules_code(BUSY, "busy_for", process_time=time.process_time)
    answer = other._is_terminal

    def slow_first_answer(state: object) -> bool:
        busy_for(0.3)
        return bool(answer(state))

    other._is_terminal = slow_first_answer  # type: ignore[method-assign]
    assert engine.is_terminal(state) is False
    assert engine._trial is not None and engine._trial.other is other  # not cut
    forever = _rules_code("def forever(state):\n    while True:\n        pass", "forever")
    _cut_within_seconds(engine, state, forever)
