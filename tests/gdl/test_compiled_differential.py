"""The compiled engine and the interpreter agree, step by step, along random games.

Both engines play the same random joint moves from the initial state; at every
step the states, each role's legal moves, the terminal flag and the goal values
must be equal. The bundled games and a few corpus games run always; every game
of ``../shared/conformance/games/`` that compiles runs in the slow set.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from server.gdl.compiled import CompiledEngine, CompileError
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "conformance" / "games"
BUNDLED = sorted((ROOT / "server" / "games").glob("*.kif"))
CORPUS_GAMES = sorted(CORPUS.glob("*.kif")) if CORPUS.is_dir() else []
EVERYDAY = ["ticTacToe", "connectFour", "breakthrough", "pentago", "hex"]


def disagreements(path: Path, playouts: int = 2, steps: int = 40, seed: int = 7) -> list[str]:
    """Where the two engines differ along random games (empty when they agree)."""
    rules = parse_gdl(path.read_text(encoding="utf-8"))
    try:
        compiled = CompiledEngine.from_rules(rules)
    except CompileError:
        return []
    interpreter = Interpreter(rules)
    roles = compiled.roles
    if interpreter.roles != roles:
        return [f"roles differ: {roles} / {interpreter.roles}"]
    rng = random.Random(seed)
    problems: list[str] = []
    for playout in range(playouts):
        state = compiled.initial_state()
        if state != interpreter.initial_state():
            return ["initial states differ"]
        for step in range(steps):
            where = f"{path.stem} playout {playout} step {step}"
            legal = {role: compiled.legal_moves(state, role) for role in roles}
            for role in roles:
                if set(legal[role]) != set(interpreter.legal_moves(state, role)):
                    problems.append(f"{where}: legal moves of {role} differ")
                if sorted(compiled.goal_values(state, role)) != sorted(
                    interpreter.goal_values(state, role)
                ):
                    problems.append(f"{where}: goals of {role} differ")
            terminal = compiled.is_terminal(state)
            if terminal != interpreter.is_terminal(state):
                problems.append(f"{where}: terminal flag differs")
            if problems or terminal or not all(legal.values()):
                break
            joint = [rng.choice(legal[role]) for role in roles]
            after = compiled.next_state(state, joint)
            if after != interpreter.next_state(state, joint):
                problems.append(f"{where}: next states differ")
                break
            state = after
        if problems:
            break
    return problems


@pytest.mark.parametrize("path", BUNDLED, ids=[path.stem for path in BUNDLED])
def test_bundled_games_play_alike_on_both_engines(path: Path) -> None:
    assert disagreements(path) == []


@pytest.mark.skipif(not CORPUS_GAMES, reason="the shared conformance corpus (../shared) is absent")
@pytest.mark.parametrize("name", EVERYDAY)
def test_everyday_corpus_games_play_alike_on_both_engines(name: str) -> None:
    assert disagreements(CORPUS / f"{name}.kif") == []


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS_GAMES, reason="the shared conformance corpus (../shared) is absent")
@pytest.mark.parametrize("path", CORPUS_GAMES, ids=[path.stem for path in CORPUS_GAMES])
def test_every_corpus_game_plays_alike_on_both_engines(path: Path) -> None:
    assert disagreements(path, playouts=1, steps=25) == []
