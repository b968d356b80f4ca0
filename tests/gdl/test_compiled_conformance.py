"""The compiled engine on its own against the shared reference traces.

Every game of ``../shared/conformance/games/`` either compiles or is refused with a
:class:`CompileError` naming the reason (the caller then falls back to the
interpreter). Every compiled game replays its reference trace exactly: at every step
the state, each role's legal moves, the terminal flag and the goals match, the joint
move leads to the next recorded state, and the recorded illegal probes are not legal.
The fast paths (the generated playout loop and batches) agree with the single-state
calls along random playouts of every compiled game.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from server.gdl.compiled import CompiledEngine, CompileError
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State
from server.gdl.terms import to_ggp

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "conformance"
TRACES = sorted((CORPUS / "traces").glob("*.json")) if CORPUS.is_dir() else []
SMALL = ["ticTacToe", "connectFour", "breakthrough", "test_case_3c", "ticTacToeSerial"]


def trace_differences(engine: CompiledEngine, trace: dict) -> list[str]:
    """Every way the engine disagrees with a reference trace (empty when it agrees)."""
    problems: list[str] = []
    roles = trace["roles"]
    if engine.roles != roles:
        return [f"roles {engine.roles} != {roles}"]
    initial = engine.initial_state()
    if _printed(initial.facts) != set(trace["init"]):
        problems.append("initial state differs")
    for p, playout in enumerate(trace["playouts"]):
        state = initial
        for k, step in enumerate(playout["steps"]):
            where = f"playout {p} step {k}"
            if _printed(state.facts) != set(step["state"]):
                problems.append(f"{where}: state differs")
                break
            legal = {role: engine.legal_moves(state, role) for role in roles}
            for role in roles:
                if _printed(legal[role]) != set(step["legal"][role]):
                    problems.append(f"{where}: legal moves of {role} differ")
            if engine.is_terminal(state) != step["terminal"]:
                problems.append(f"{where}: terminal flag differs")
            defined = {}
            for role in roles:
                values = engine.goal_values(state, role)
                if len(values) == 1 and isinstance(values[0], str) and values[0].isdigit():
                    defined[role] = int(values[0])
            if "goals" in step:
                if defined != step["goals"]:
                    problems.append(f"{where}: goals {defined} != {step['goals']}")
                undefined = set(roles) - set(defined)
                if undefined != set(step.get("goals_undefined", [])):
                    problems.append(f"{where}: undefined goals differ")
            elif len(defined) == len(roles):
                problems.append(f"{where}: goals defined where the reference has none")
            if "joint" in step:
                state = engine.next_state(state, [parse_term(move) for move in step["joint"]])
    for probe in trace.get("probes", []):
        steps = trace["playouts"][probe["playout"]]["steps"]
        state = State(parse_term(fluent) for fluent in steps[probe["step"]]["state"])
        role = probe["illegal_role"]
        move = parse_term(probe["joint"][roles.index(role)])
        if move in engine.legal_moves(state, role):
            problems.append(f"probe at {probe['playout']}/{probe['step']}: {to_ggp(move)} legal")
    return problems


def fast_path_differences(engine: CompiledEngine, seed: int = 1) -> list[str]:
    """Disagreements of the generated playout loop and of a batch with the calls on
    single compact states, along a few random playouts."""
    problems: list[str] = []
    rng = random.Random(seed)
    visited = [engine.initial_compact]
    for playout in range(3):
        joints: list[tuple[int, ...]] = []
        result = engine.playout(engine.initial_compact, rng, limit=40, record=joints)
        state = engine.initial_compact
        for step, joint in enumerate(joints):
            legal = engine.legal_indices(state)
            if engine.terminal_compact(state) or any(
                move not in moves for move, moves in zip(joint, legal, strict=True)
            ):
                problems.append(f"playout loop {playout}: illegal step {step}")
                break
            state = engine.next_compact(state, joint)
            visited.append(state)
        else:
            if state != result.state or result.terminal != engine.terminal_compact(state):
                problems.append(f"playout loop {playout}: end state differs")
    runner = engine.batch(8 * ((len(visited) + 7) // 8))
    slices = runner.pack(visited)
    terminal, legal, _ = runner.evaluate(slices)
    for i, state in enumerate(visited):
        found = [[j for j, where in enumerate(role) if where >> i & 1] for role in legal]
        if found != list(engine.legal_indices(state)) or bool(terminal >> i & 1) != (
            engine.terminal_compact(state)
        ):
            problems.append(f"batch: state {i} differs")
            break
    return problems


def _printed(terms) -> set[str]:
    return {to_ggp(term) for term in terms}


def _compile(path: Path) -> CompiledEngine | None:
    rules = parse_gdl(path.read_text(encoding="utf-8"))
    try:
        return CompiledEngine.from_rules(rules)
    except CompileError as error:
        assert error.reason
        return None


def _check(trace_path: Path) -> None:
    engine = _compile(CORPUS / "games" / (trace_path.stem + ".kif"))
    if engine is None:
        return
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []


@pytest.mark.skipif(not TRACES, reason="the shared conformance corpus (../shared) is absent")
@pytest.mark.parametrize("name", SMALL)
def test_small_games_compile_and_follow_their_traces(name: str) -> None:
    path = CORPUS / "games" / f"{name}.kif"
    engine = _compile(path)
    assert engine is not None
    trace = json.loads((CORPUS / "traces" / f"{name}.json").read_text(encoding="utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []


@pytest.mark.slow
@pytest.mark.skipif(not TRACES, reason="the shared conformance corpus (../shared) is absent")
@pytest.mark.parametrize("trace_path", TRACES, ids=[path.stem for path in TRACES])
def test_every_corpus_game_compiles_and_conforms_or_falls_back(trace_path: Path) -> None:
    _check(trace_path)


def test_a_trace_difference_is_reported() -> None:
    """The checker itself can fail: a wrong terminal flag is caught."""
    rules = parse_gdl(
        "(role p) (init (at 1)) (<= (legal p go) (true (at 1))) "
        "(<= (next (at 2)) (does p go)) (<= terminal (true (at 2))) "
        "(<= (goal p 100) (true (at 2))) (<= (goal p 0) (true (at 1)))"
    )
    engine = CompiledEngine.from_rules(rules)
    trace = {
        "roles": ["p"],
        "init": ["( at 1 )"],
        "playouts": [
            {
                "steps": [
                    {
                        "state": ["( at 1 )"],
                        "terminal": True,
                        "legal": {"p": ["go"]},
                        "goals": {"p": 0},
                        "joint": ["go"],
                    },
                    {
                        "state": ["( at 2 )"],
                        "terminal": True,
                        "legal": {"p": []},
                        "goals": {"p": 100},
                    },
                ]
            }
        ],
    }
    assert trace_differences(engine, trace) == ["playout 0 step 0: terminal flag differs"]
