"""The interpreter and the compiled engine agree step by step along random games of
every bundled game: states, legal moves, terminal flags and goals."""

from __future__ import annotations

from functools import cache

from compiled_checks import engine_disagreements
from gdl_strategies import MODEST
from hypothesis import given, settings
from hypothesis import strategies as st

from server.games import game_text, list_games
from server.gdl.compiled import CompiledEngine
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

NAMES = sorted(info.name for info in list_games())


@cache
def engines(name: str) -> tuple[CompiledEngine, Interpreter]:
    rules = parse_gdl(game_text(name))
    return CompiledEngine.from_rules(rules, time_limit=60), Interpreter(rules)


@settings(MODEST, max_examples=20)
@given(st.sampled_from(NAMES), st.integers(0, 2**32))
def test_both_engines_play_a_random_game_alike(name: str, seed: int) -> None:
    compiled, interpreter = engines(name)
    assert engine_disagreements(compiled, interpreter, name, 1, 60, seed) == []
