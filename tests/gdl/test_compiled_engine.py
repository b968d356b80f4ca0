"""The compiled engine on small games written for the purpose, its limits, its fast
interfaces (compact states, the generated playout loop, batches) and its agreement
with the interpreter."""

from __future__ import annotations

import itertools
import pickle
import random
import re
import time
import types
from pathlib import Path

import pytest
from shared_material import shared_path

from server.gdl.compiled import (
    CompiledEngine,
    CompileError,
    GroundingTooLarge,
    GroundingTooSlow,
    OutsideGroundingError,
    codegen,
    compile_engine,
)
from server.gdl.compiled import engine as compiled_engine_module
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "server" / "games"

TIC_TAC_TOE = """
(role xPlayer) (role oPlayer)
(index 1) (index 2) (index 3)
(init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b))
(init (cell 2 1 b)) (init (cell 2 2 b)) (init (cell 2 3 b))
(init (cell 3 1 b)) (init (cell 3 2 b)) (init (cell 3 3 b))
(init (control xPlayer))
(<= (legal ?p (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?p)))
(<= (legal xPlayer noop) (true (control oPlayer)))
(<= (legal oPlayer noop) (true (control xPlayer)))
(<= (next (cell ?x ?y x)) (does xPlayer (mark ?x ?y)))
(<= (next (cell ?x ?y o)) (does oPlayer (mark ?x ?y)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (distinct ?c b))
(<= (next (cell ?x ?y b)) (true (cell ?x ?y b)) (does ?p (mark ?m ?n))
    (or (distinct ?x ?m) (distinct ?y ?n)))
(<= (next (control xPlayer)) (true (control oPlayer)))
(<= (next (control oPlayer)) (true (control xPlayer)))
(<= (row ?x ?c) (true (cell ?x 1 ?c)) (true (cell ?x 2 ?c)) (true (cell ?x 3 ?c)))
(<= (column ?y ?c) (true (cell 1 ?y ?c)) (true (cell 2 ?y ?c)) (true (cell 3 ?y ?c)))
(<= (diagonal ?c) (true (cell 1 1 ?c)) (true (cell 2 2 ?c)) (true (cell 3 3 ?c)))
(<= (diagonal ?c) (true (cell 1 3 ?c)) (true (cell 2 2 ?c)) (true (cell 3 1 ?c)))
(<= (line ?c) (row ?x ?c))
(<= (line ?c) (column ?y ?c))
(<= (line ?c) (diagonal ?c))
(<= open (true (cell ?x ?y b)))
(<= terminal (line x))
(<= terminal (line o))
(<= terminal (not open))
(<= (goal xPlayer 100) (line x))
(<= (goal xPlayer 50) (not (line x)) (not (line o)))
(<= (goal xPlayer 0) (line o))
(<= (goal oPlayer 100) (line o))
(<= (goal oPlayer 50) (not (line x)) (not (line o)))
(<= (goal oPlayer 0) (line x))
"""


def compiled(text: str, **limits: float) -> CompiledEngine:
    return CompiledEngine.from_rules(parse_gdl(text), **limits)  # type: ignore[arg-type]


def test_roles_moves_and_fluents_keep_their_spelling() -> None:
    engine = compiled(TIC_TAC_TOE)
    assert engine.roles == ["xPlayer", "oPlayer"]
    state = engine.initial_state()
    assert ("control", "xPlayer") in state.facts
    assert engine.legal_moves(state, "oPlayer") == ["noop"]
    assert engine.legal_moves(state, "xPlayer")[:2] == [("mark", "1", "1"), ("mark", "1", "2")]


def test_a_game_of_tic_tac_toe_is_won_on_the_diagonal() -> None:
    engine = compiled(TIC_TAC_TOE)
    state = engine.initial_state()
    for x_move, o_move in [("1 1", "1 2"), ("2 2", "1 3")]:
        state = engine.next_state(state, [parse_term(f"(mark {x_move})"), "noop"])
        state = engine.next_state(state, ["noop", parse_term(f"(mark {o_move})")])
    assert not engine.is_terminal(state)
    assert engine.goal_values(state, "xPlayer") == ["50"]
    state = engine.next_state(state, [parse_term("(mark 3 3)"), "noop"])
    assert engine.is_terminal(state)
    assert engine.goal_values(state, "xPlayer") == ["100"]
    assert engine.goal_values(state, "oPlayer") == ["0"]
    assert ("cell", "3", "3", "x") in state.facts


def test_numbers_stay_as_written_and_p_differs_from_the_relation_p() -> None:
    engine = compiled(
        """
        (role r)
        (init (score 007)) (init p)
        (<= (legal r (set 007)) (true p))
        (<= (legal r wait) (true (p)))
        (<= (next (p)) (does r (set 007)))
        (<= (next (score 7)) (does r (set ?n)) (not (distinct ?n 007)))
        (<= terminal (true (p)))
        (<= (goal r 100) (true (score 7)))
        (<= (goal r 0) (true (score 007)))
        """
    )
    state = engine.initial_state()
    assert state.facts == {("score", "007"), "p"}
    assert engine.legal_moves(state, "r") == [("set", "007")]
    assert engine.goal_values(state, "r") == ["0"]
    state = engine.next_state(state, [("set", "007")])
    assert state.facts == {("p",), ("score", "7")}
    assert engine.legal_moves(state, "r") == ["wait"]
    assert engine.is_terminal(state)
    assert engine.goal_values(state, "r") == ["100"]


def test_recursive_reachability_is_computed_to_its_fixpoint() -> None:
    engine = compiled(
        """
        (role r)
        (edge a b) (edge b c) (edge c d) (edge d a) (edge e f)
        (init (at a))
        (<= (reach ?x ?y) (edge ?x ?y))
        (<= (reach ?x ?z) (reach ?x ?y) (edge ?y ?z))
        (<= (legal r (go ?y)) (true (at ?x)) (edge ?x ?y))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= (next (seen ?y)) (true (at ?x)) (reach ?x ?y) (true (at ?x)))
        (<= (next (loop ?x)) (true (at ?x)) (reach ?x ?x))
        (<= terminal (true (seen d)))
        (goal r 100)
        """
    )
    state = engine.next_state(engine.initial_state(), [("go", "b")])
    assert state.facts == {
        ("at", "b"),
        ("seen", "a"),
        ("seen", "b"),
        ("seen", "c"),
        ("seen", "d"),
        ("loop", "a"),
    }
    assert engine.is_terminal(state)


def test_a_grounding_over_the_rule_cap_is_refused_with_a_reason() -> None:
    with pytest.raises(GroundingTooLarge) as caught:
        compiled(TIC_TAC_TOE, max_ground_rules=20)
    assert "more than 20 ground rules" in caught.value.reason


def test_a_compilation_over_the_time_limit_is_refused_with_a_reason() -> None:
    with pytest.raises(GroundingTooSlow) as caught:
        compiled(TIC_TAC_TOE, time_limit=0.0)
    assert "time limit" in caught.value.reason


def test_a_compile_that_ends_past_its_time_limit_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stages look at the clock as they go; once the work is done, an engine that ran
    a little past the limit is kept rather than spent for nothing. The engine's own clock
    here reads 1,000 s later after its first reading, while the stages read the real one."""
    real = time.thread_time
    readings: list[float] = []

    def later() -> float:
        readings.append(real() + (1000.0 if readings else 0.0))
        return readings[-1]

    clock = types.SimpleNamespace(thread_time=later, perf_counter_ns=time.perf_counter_ns)
    monkeypatch.setattr(compiled_engine_module, "time", clock)
    engine = compiled(TIC_TAC_TOE, time_limit=30.0)
    assert engine.setup_seconds > 30.0 and len(readings) >= 2
    assert engine.legal_moves(engine.initial_state(), "xPlayer")


def test_rules_the_grounder_cannot_instantiate_are_refused_with_a_reason() -> None:
    with pytest.raises(CompileError) as caught:
        compiled("(role r) (init s)\n(<= (legal r ?m) (true s)) (<= terminal (true s))")
    assert caught.value.reason == (
        "the grounder refused the rule at line 2, column 1 (unsafe variables): "
        "(<= (legal r ?m) (true s))"
    )


def test_terms_outside_the_grounding_are_reported() -> None:
    engine = compile_engine(parse_gdl(TIC_TAC_TOE))
    with pytest.raises(OutsideGroundingError):
        engine.is_terminal(State([("cell", "4", "4", "b")]))
    with pytest.raises(OutsideGroundingError):
        engine.next_state(engine.initial_state(), [("mark", "9", "9"), "noop"])


def _replay_a_playout(engine: CompiledEngine, rng: random.Random) -> int:
    """Run the playout loop, check it step by step with single calls; the final state."""
    joints: list[tuple[int, ...]] = []
    result = engine.playout(engine.initial_compact, rng, record=joints)
    state = engine.initial_compact
    for joint in joints:
        assert not engine.terminal_compact(state)
        for legal, move in zip(engine.legal_indices(state), joint, strict=True):
            assert move in legal
        state = engine.next_compact(state, joint)
    assert result.terminal and engine.terminal_compact(state)
    assert (result.state, result.steps) == (state, len(joints))
    return state


def test_the_playout_loop_plays_legal_moves_until_the_end() -> None:
    engine = compiled(TIC_TAC_TOE)
    rng = random.Random(5)
    for _ in range(20):
        _replay_a_playout(engine, rng)


def test_compact_states_convert_to_states_and_back() -> None:
    engine = compiled(TIC_TAC_TOE)
    result = engine.playout(engine.initial_compact, random.Random(1), limit=3)
    state = engine.decode(result.state)
    assert engine.encode(state) == result.state
    assert len(state.facts) == 10


def test_states_made_from_compact_forms_behave_like_states_made_from_fluents() -> None:
    engine = compiled(TIC_TAC_TOE)
    other = compiled(TIC_TAC_TOE)
    interpreter = Interpreter(parse_gdl(TIC_TAC_TOE))
    rng = random.Random(3)
    state, plain = engine.initial_state(), interpreter.initial_state()
    while not engine.is_terminal(state):
        joint = [rng.choice(engine.legal_moves(state, role)) for role in engine.roles]
        state, plain = engine.next_state(state, joint), interpreter.next_state(plain, joint)
        # equal, hashing alike and pickled as fluents, whoever made them
        copy = pickle.loads(pickle.dumps(state))
        assert state == plain == copy and plain == state
        assert hash(state) == hash(plain) == hash(copy)
        assert {plain: 1}[state] == 1
        # a state of one engine is read by another engine of the same game
        assert other.legal_moves(state, "xPlayer") == interpreter.legal_moves(plain, "xPlayer")
        assert engine.legal_moves(copy, "oPlayer") == interpreter.legal_moves(plain, "oPlayer")
        assert engine.is_terminal(plain) == interpreter.is_terminal(plain)
    assert engine.goal_values(state, "xPlayer") == interpreter.goal_values(plain, "xPlayer")
    assert state.facts == plain.facts and state.to_kif() == plain.to_kif()


def test_legal_moves_are_public_terms_and_new_lists() -> None:
    engine = compiled(TIC_TAC_TOE)
    state = engine.initial_state()
    moves = engine.legal_moves(state, "xPlayer")
    assert [str(move) for move in moves][:2] == ["(mark 1 1)", "(mark 1 2)"]
    moves.clear()
    assert len(engine.legal_moves(state, "xPlayer")) == 9
    assert engine.legal_move(state, "xPlayer", ("mark", "2", "2")) == ("mark", "2", "2")
    assert engine.legal_move(state, "oPlayer", ("mark", "2", "2")) is None
    assert engine.legal_move(state, "oPlayer", "noop") == "noop"


def test_legal_moves_met_again_are_new_lists_with_each_states_own_moves() -> None:
    """A role's moves are copied from the last lists handed out when the same again
    (the noop of the role that waits, the moves of a board that did not change): a
    caller that changes its list changes no other, and every state keeps its own."""
    engine = compiled(TIC_TAC_TOE)
    interpreter = Interpreter(parse_gdl(TIC_TAC_TOE))
    rng = random.Random(5)
    for _ in range(20):
        state, plain = engine.initial_state(), interpreter.initial_state()
        while not engine.is_terminal(state):
            lists = []
            for role in engine.roles:
                moves = engine.legal_moves(state, role)
                assert moves == interpreter.legal_moves(plain, role)
                lists.append(moves)
                moves.append("spoilt")
                again = engine.legal_moves(state, role)
                assert "spoilt" not in again and again == interpreter.legal_moves(plain, role)
            joint = [rng.choice(moves[:-1]) for moves in lists]
            state = engine.next_state(state, joint)
            plain = interpreter.next_state(plain, joint)
    first = engine.initial_state()
    assert engine.legal_moves(first, "oPlayer") == ["noop"]
    assert len(engine.legal_moves(first, "xPlayer")) == 9


SAME_MOVES_EVERY_STEP = """
(role left) (role right)
(pick a) (pick b) (pick c) (pick d) (pick e)
(init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal ?r (choose ?x)) (role ?r) (pick ?x))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= (next (chose ?r ?x)) (does ?r (choose ?x)))
(<= terminal (true (step 3)))
(<= (goal left 100) (true (chose left ?x)) (true (chose right ?x)))
(<= (goal left 0) (not (goal left 100)))
(<= (goal right 100) (goal left 0))
(<= (goal right 0) (goal left 100))
"""


def play_randomly(engine: CompiledEngine, games: int) -> None:
    rng = random.Random(7)
    for _ in range(games):
        state = engine.initial_state()
        while not engine.is_terminal(state):
            state = engine.next_state(
                state, [rng.choice(engine.legal_moves(state, role)) for role in engine.roles]
            )


def test_copying_legal_moves_stays_on_where_moves_recur_and_goes_off_where_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("server.gdl.compiled.engine.COPY_LEGAL_TRIAL", 8)
    same = compiled(SAME_MOVES_EVERY_STEP)
    play_randomly(same, 10)
    assert same._copy_legal and same._legal_copied > same._legal_made
    tic_tac_toe = compiled(TIC_TAC_TOE)
    play_randomly(tic_tac_toe, 10)
    assert not tic_tac_toe._copy_legal
    state = tic_tac_toe.initial_state()
    assert len(tic_tac_toe.legal_moves(state, "xPlayer")) == 9
    assert tic_tac_toe.legal_moves(state, "oPlayer") == ["noop"]


@pytest.mark.source_modules
def test_states_are_worked_out_alike_with_or_without_the_incremental_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whichever way the engine settles on after timing the first states (incrementally
    or afresh), and in a game compiled without ``status``, the answers are the same."""
    monkeypatch.setattr(codegen, "MAX_STATUS_GATES", -1)
    without = compiled(TIC_TAC_TOE)
    monkeypatch.undo()
    engine = compiled(TIC_TAC_TOE)
    assert "def status(" in engine.source and "def status(" not in without.source
    rng = random.Random(4)
    for _ in range(12):  # well past the timed first states
        state, other = engine.initial_state(), without.initial_state()
        while not engine.is_terminal(state):
            assert not without.is_terminal(other)
            joint = []
            for role in engine.roles:
                moves = engine.legal_moves(state, role)
                assert moves == without.legal_moves(other, role)
                joint.append(rng.choice(moves))
            state, other = engine.next_state(state, joint), without.next_state(other, joint)
        assert without.is_terminal(other) and state == other
        compact = engine.encode(state)
        assert engine.status_compact(compact) == without.status_compact(compact)


def _sample_states(engine: CompiledEngine, count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    states = []
    while len(states) < count:
        limit = rng.randrange(0, 12)
        states.append(engine.playout(engine.initial_compact, rng, limit=limit).state)
    return states


@pytest.mark.parametrize("game", ["ticTacToe", "connectFour", "nineBoardTicTacToe"])
def test_a_batch_agrees_with_the_single_state_engine(game: str) -> None:
    path = BUNDLED / f"{game}.kif"
    if not path.is_file():
        path = shared_path("conformance", "games", f"{game}.kif")
    engine = CompiledEngine.from_rules(parse_gdl(path.read_text(encoding="utf-8")))
    runner = engine.batch(64)
    states = _sample_states(engine, 64, seed=3)
    slices = runner.pack(states)
    assert runner.unpack(slices) == states
    terminal, legal, goals = runner.evaluate(slices)
    joints = []
    for i, state in enumerate(states):
        assert bool(terminal >> i & 1) == engine.terminal_compact(state)
        expected = engine.legal_indices(state)
        found = [[j for j, where in enumerate(role) if where >> i & 1] for role in legal]
        assert found == [sorted(moves) for moves in expected]
        values = [
            [engine.network.goals[r][k][0] for k, where in enumerate(role) if where >> i & 1]
            for r, role in enumerate(goals)
        ]
        assert values == engine.goals_compact(state)
        joints.append([moves[-1] if moves else None for moves in expected])
    moves = []
    for r, role_moves in enumerate(engine.moves):
        for j in range(len(role_moves)):
            moves.append(sum(1 << i for i, joint in enumerate(joints) if joint[r] == j))
    after = runner.unpack(runner.advance(slices, moves))
    for i, joint in enumerate(joints):
        if None not in joint:
            assert after[i] == engine.next_compact(states[i], joint)


def test_a_batch_run_finishes_games_and_adds_up_their_goals() -> None:
    engine = compiled(TIC_TAC_TOE)
    runner = engine.batch(256)
    transitions = runner.run(steps=30, seed=7)
    assert transitions > 256
    assert runner.stats.finished > 256
    assert runner.stats.stuck == 0
    assert sum(runner.stats.goal_sums) == 100 * runner.stats.finished


def test_a_batch_size_must_fill_whole_bytes() -> None:
    with pytest.raises(ValueError):
        compiled(TIC_TAC_TOE).batch(10)


def test_a_batch_keeps_move_numbers_when_a_move_can_never_be_legal() -> None:
    engine = compiled(
        """
        (role r) (init a)
        (<= (legal r aa) (true a) (not (true a)))
        (<= (legal r go) (true a))
        (<= (next b) (does r go))
        (<= terminal (true b))
        (goal r 100)
        """
    )
    runner = engine.batch(8)
    _, legal, _ = runner.evaluate(runner.pack([engine.initial_compact]))
    found = [[j for j, where in enumerate(role) if where & 1] for role in legal]
    assert found == list(engine.legal_indices(engine.initial_compact))
    assert engine.legal_moves(engine.initial_state(), "r") == ["go"]


def test_the_playout_loop_agrees_with_single_steps_on_wide_win_tests() -> None:
    # connectFour's win test is a wide OR of "these four bits are on"; after a move
    # that sets one of its bits the playout loop tests only the lines through it.
    path = shared_path("conformance", "games", "connectFour.kif")
    engine = CompiledEngine.from_rules(parse_gdl(path.read_text(encoding="utf-8")))
    assert re.search(r"for k in T\d+\[c\]", engine.source), "the table path is not generated"
    rng = random.Random(11)
    wins = 0
    for _ in range(60):
        wins += ["100"] in engine.goals_compact(_replay_a_playout(engine, rng))
    assert wins > 30


def test_long_chains_in_batched_code_are_grouped_to_a_shallow_depth() -> None:
    from server.gdl.compiled.batch import CHAIN, _chain

    operands = [f"F{index}" for index in range(5000)]
    expression = _chain("|", operands)
    assert compile(expression, "<chain>", "eval")
    assert expression.replace("(", "").replace(")", "") == " | ".join(operands)
    assert expression.count("(") <= 5000 // CHAIN + 5000 // CHAIN**2 + 2
    assert _chain("&", ["F1", "F2"]) == "F1 & F2"
    assert _chain("|", []) == ""


def test_a_portable_engine_runs_as_the_engine_it_was_made_from() -> None:
    """What a compile aside sends back (pickled) answers as the engine compiled here,
    bulk playouts included."""
    path = BUNDLED / "nineBoardTicTacToe.kif"
    engine = CompiledEngine.from_rules(parse_gdl(path.read_text(encoding="utf-8")))
    received = CompiledEngine.from_portable(pickle.loads(pickle.dumps(engine.portable())))
    assert received.source == engine.source and received.form == engine.form
    assert not received.plan.network.rules  # not sent (nor kept: planning alone reads them)
    for state in _sample_states(engine, 40, seed=5):
        assert received.terminal_compact(state) == engine.terminal_compact(state)
        assert received.legal_indices(state) == engine.legal_indices(state)
        assert received.goals_compact(state) == engine.goals_compact(state)
        for joint in itertools.product(*(moves[:3] for moves in engine.legal_indices(state))):
            assert received.next_compact(state, joint) == engine.next_compact(state, joint)
    ours, theirs = engine.batch(64), received.batch(64)
    assert theirs.run(steps=40, seed=3) == ours.run(steps=40, seed=3)
    assert theirs.stats == ours.stats


def test_dropping_a_failed_attempts_frames_follows_every_chain_once() -> None:
    from server.gdl.compiled.engine import drop_frames

    def raised(error: BaseException) -> BaseException:
        try:
            raise error
        except BaseException as caught:
            return caught

    first, second, third = (raised(CompileError(str(n))) for n in range(3))
    first.__cause__ = second
    second.__context__ = third
    third.__cause__ = first  # a loop: walked once, not forever
    drop_frames(first)
    assert all(error.__traceback__ is None for error in (first, second, third))
