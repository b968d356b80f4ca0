"""The compiled engine on its own against the shared reference traces.

Every traced game of ``../shared/conformance/games/`` either compiles or is refused
with a :class:`CompileError` naming the reason (the caller then falls back to the
interpreter). Which games compile is pinned in ``compiled_games.txt``: the tests
compile with a generous time limit so that only the deterministic size caps decide,
and a game that stops compiling, or starts to, fails here until the file is updated.
Every compiled game replays its reference trace exactly: at every step the state,
each role's legal moves, the terminal flag and the goals match, the joint move leads
to the next recorded state, and the recorded illegal probes are not legal. The fast
paths (the generated playout loop and batches) agree with the single-state calls
along random playouts of every compiled game, and the interpreter agrees with the
compiled engine along a random game of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compiled_checks import engine_disagreements, fast_path_differences, trace_differences
from shared_material import shared_files, shared_path, stem

from server.gdl.compile_budget import MAX_TIME_LIMIT
from server.gdl.compiled import CompiledEngine, CompileError, GroundingTooSlow
from server.gdl.compiled.code_limits import caps_for
from server.gdl.compiled.engine import DEFAULT_TIME_LIMIT
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

PINNED = Path(__file__).with_name("compiled_games.txt")
GENEROUS_TIME_LIMIT = 120.0
"""Seconds of CPU time: far above what any corpus game needs to compile or to reach a
size cap (at most about 25 s), so that the caps, not the load of the machine, decide."""
LARGEST_CAPS = caps_for(MAX_TIME_LIMIT)
"""The code size caps of the longest compile time limit a match buys (a start clock of a
minute or more): the caps that decide, whatever the generous time limit."""
TOO_SLOW = "GroundingTooSlow"
"""The pinned outcome of a game that needs minutes to compile; it is checked with the
default time limit, which it always exceeds."""

KNOWN_BUGS: dict[str, str] = {}
"""Games the compiled engine gets wrong today, each a strict expected failure: the test
reports it under ``-ra`` and fails once the bug is fixed, so the entry is removed."""

SMALL = ["ticTacToe", "connectFour", "breakthrough", "test_case_3c", "ticTacToeSerial"]


def pinned_outcomes() -> dict[str, str]:
    """Each traced game and ``compiles`` or the reason it is refused."""
    outcomes = {}
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, outcome = line.split("\t")
            outcomes[name] = outcome
    return outcomes


def compile_outcome(
    path: Path, time_limit: float = GENEROUS_TIME_LIMIT
) -> tuple[CompiledEngine | None, str]:
    """The engine (if the game compiles) and the outcome as ``compiled_games.txt`` says it."""
    rules = parse_gdl(path.read_text(encoding="utf-8"))
    try:
        engine = CompiledEngine.from_rules(rules, time_limit=time_limit, caps=LARGEST_CAPS)
        return engine, "compiles"
    except GroundingTooSlow:
        return None, TOO_SLOW
    except CompileError as error:
        return None, f"{type(error).__name__}: {error.reason}"


@pytest.mark.parametrize("name", SMALL)
def test_small_games_compile_and_follow_their_traces(name: str) -> None:
    engine, outcome = compile_outcome(shared_path("conformance", "games", f"{name}.kif"))
    assert engine is not None, outcome
    trace = json.loads(shared_path("conformance", "traces", f"{name}.json").read_text("utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []


@pytest.mark.parametrize("trace_path", shared_files("conformance/traces", "*.json"), ids=stem)
def test_every_traced_game_has_a_pinned_outcome(trace_path: Path) -> None:
    assert trace_path.stem in pinned_outcomes(), f"add {trace_path.stem} to {PINNED.name}"


def _traces_with_known_bugs() -> list[object]:
    return [
        pytest.param(
            case,
            marks=pytest.mark.xfail(
                strict=True, raises=RecursionError, reason=KNOWN_BUGS[case.stem]
            ),
        )
        if isinstance(case, Path) and case.stem in KNOWN_BUGS
        else case
        for case in shared_files("conformance/traces", "*.json")
    ]


@pytest.mark.slow
@pytest.mark.parametrize("trace_path", _traces_with_known_bugs(), ids=stem)
def test_every_corpus_game_compiles_and_conforms_or_is_refused_as_pinned(trace_path: Path) -> None:
    """The slow set: every traced corpus game (a few minutes on two cores)."""
    name = trace_path.stem
    path = shared_path("conformance", "games", f"{name}.kif")
    pinned = pinned_outcomes().get(name)
    engine, outcome = compile_outcome(
        path, DEFAULT_TIME_LIMIT if pinned == TOO_SLOW else GENEROUS_TIME_LIMIT
    )
    assert outcome == pinned, f"{name}: update {PINNED.name} if intended"
    if engine is None:
        return  # refused as pinned: the interpreter plays this game
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []
    interpreter = Interpreter(parse_gdl(path.read_text(encoding="utf-8")))
    assert engine_disagreements(engine, interpreter, name, playouts=1, steps=25) == []


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
