"""The compiled engine on its own against the shared reference traces.

Every game of ``../shared/conformance/games/`` either compiles or is refused with a
:class:`CompileError` naming the reason (the caller then falls back to the
interpreter). Every compiled game replays its reference trace exactly: at every step
the state, each role's legal moves, the terminal flag and the goals match, the joint
move leads to the next recorded state, and the recorded illegal probes are not legal.
The fast paths (the generated playout loop and batches) agree with the single-state
calls along random playouts of every compiled game, and the interpreter agrees with
the compiled engine along a random game of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compiled_checks import engine_disagreements, fast_path_differences, trace_differences

from server.gdl.compiled import CompiledEngine, CompileError
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "conformance"
TRACES = sorted((CORPUS / "traces").glob("*.json")) if CORPUS.is_dir() else []
SMALL = ["ticTacToe", "connectFour", "breakthrough", "test_case_3c", "ticTacToeSerial"]


def _compile(path: Path) -> CompiledEngine | None:
    rules = parse_gdl(path.read_text(encoding="utf-8"))
    try:
        return CompiledEngine.from_rules(rules)
    except CompileError as error:
        assert error.reason
        return None


def _check(trace_path: Path) -> None:
    path = CORPUS / "games" / (trace_path.stem + ".kif")
    engine = _compile(path)
    if engine is None:
        return
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []
    interpreter = Interpreter(parse_gdl(path.read_text(encoding="utf-8")))
    assert engine_disagreements(engine, interpreter, path.stem, playouts=1, steps=25) == []


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
    """The slow set: every corpus game (about two minutes on two cores)."""
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
