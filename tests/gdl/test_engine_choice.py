"""Which engine answers: compiled when the game compiles, the interpreter otherwise."""

from __future__ import annotations

import pytest

from server.gdl import Game, State

COUNTER = """
(role player)
(init (count 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal player (add ?n)) (true (count ?m)) (succ ?m ?n))
(<= (next (count ?n)) (does player (add ?n)))
(<= terminal (true (count 3)))
(<= (goal player 100) (true (count 3)))
(<= (goal player 0) (not (true (count 3))))
"""


def test_auto_compiles_a_small_game() -> None:
    assert Game.from_text(COUNTER).engine.name == "compiled"


def test_the_interpreter_can_be_forced_by_argument_or_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Game.from_text(COUNTER, engine="interpreter").engine.name == "interpreter"
    monkeypatch.setenv("GGP_ENGINE", "interpreter")
    assert Game.from_text(COUNTER).engine.name == "interpreter"


def test_auto_falls_back_when_grounding_exceeds_the_cap() -> None:
    game = Game.from_text(COUNTER, max_ground_rules=1)
    assert game.engine.name == "interpreter"
    with pytest.raises(Exception, match="ground rules"):
        Game.from_text(COUNTER, engine="compiled", max_ground_rules=1)


def test_a_state_outside_the_grounding_is_answered_by_the_interpreter() -> None:
    game = Game.from_text(COUNTER)
    assert game.engine.name == "compiled"
    # No reachable state holds (note 7), so the compiled engine never grounded it.
    stranger = State({("count", "2"), ("note", "7")})
    assert [str(move) for move in game.legal_moves(stranger, "player")] == ["(add 3)"]
    after = game.next_state(stranger, ["(add 3)"])
    assert after == State({("count", "3")})
    assert game.is_terminal(after)
    assert game.goals(after) == {"player": 100}
    assert game.goals(stranger) == {"player": 0}


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine"):
        Game.from_text(COUNTER, engine="quantum")
