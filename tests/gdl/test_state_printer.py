"""Printing a match's successive states incrementally gives exactly what printing each gives."""

from __future__ import annotations

import random

import pytest

from server.games import load_game
from server.gdl.state import State, StatePrinter
from server.gdl.terms import MAX_TERM_DEPTH, sort_key, to_ggp


def _printed_from_scratch(state: State) -> str:
    return "( " + "".join(to_ggp(fact) + " " for fact in sorted(state.facts, key=sort_key)) + ")"


@pytest.mark.parametrize("name", ["tictactoex9", "nineBoardTicTacToe", "ticTacHeaven"])
def test_successive_states_print_as_from_scratch(name: str) -> None:
    game = load_game(name)
    for seed in range(3):
        rng = random.Random(seed)
        printer = StatePrinter()
        state = game.initial_state()
        for _ in range(40):
            assert printer.fits(state)
            assert printer.to_ggp(state) == state.to_ggp() == _printed_from_scratch(state)
            if game.is_terminal(state):
                break
            moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, moves)


def test_a_printer_jumps_between_unrelated_states_and_measures_new_fluents() -> None:
    printer = StatePrinter()
    first = State([("cell", "1", "b"), ("cell", "2", "x"), "on"])
    second = State([("cell", "10", "o"), ("cell", "2", "x"), ("step", "3")])
    for state in (first, second, first, State([])):
        assert printer.to_ggp(state) == _printed_from_scratch(state)
    deep: object = "z"
    for _ in range(MAX_TERM_DEPTH):
        deep = ("s", deep)
    assert not printer.fits(State([deep, "on"]))  # type: ignore[list-item]
    assert printer.fits(State(["on"]))
