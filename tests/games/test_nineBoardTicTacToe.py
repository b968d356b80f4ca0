"""002 nineBoardTicTacToe: nine-board tic-tac-toe in the "current board" form, as GGP-Base has it.

(play I J K L M) puts mark M in cell (K, L) of sub-board (I, J); only marked cells are
fluents, as (mark I J K L M), and (currentBoard K L) remembers where the next move goes.
"""

from __future__ import annotations

import json

import pytest
from shared_material import shared_path

from server.gdl import IllegalMoveError, State
from server.gdl.parser import node_to_term, read_nodes

from .positions import CELLS, DRAWN_BOARD, position, start

GAME = "nineBoardTicTacToe"


def marks(placed: dict[tuple[int, int, int, int], str]) -> list[str]:
    return [f"(mark {i} {j} {m} {n} {mark})" for (i, j, m, n), mark in placed.items()]


def test_roles_keep_their_capital_letters():
    assert start(GAME).game.roles == ["xPlayer", "oPlayer"]


def test_the_game_starts_with_only_the_control_fluent():
    assert start(GAME).state == State([("control", "xPlayer")])


def test_a_move_names_four_coordinates_and_the_mark():
    opening = start(GAME)
    assert opening.legal("xPlayer") == {
        f"(play {i} {j} {m} {n} x)" for i, j in CELLS for m, n in CELLS
    }
    after = opening.then("( play 3 1 2 2 x )")
    assert after.holds("(mark 3 1 2 2 x)")
    assert after.holds("(currentBoard 2 2)")
    assert after.holds("(control oPlayer)")


def test_a_player_cannot_play_the_other_players_mark():
    after = start(GAME).then("(play 3 1 2 2 x)")
    assert after.is_legal("oPlayer", "(play 2 2 1 1 o)")
    assert not after.is_legal("oPlayer", "(play 2 2 1 1 x)")


def test_the_player_to_move_cannot_pass_and_the_waiting_player_only_passes():
    opening = start(GAME)
    assert "noop" not in opening.legal("xPlayer")
    assert opening.legal("oPlayer") == {"noop"}
    with pytest.raises(IllegalMoveError):
        opening.joint("noop", "noop")


def test_after_the_opening_move_the_second_player_has_exactly_9_moves():
    after = start(GAME).then("(play 3 1 2 2 x)")
    assert after.legal("oPlayer") == {f"(play 2 2 {m} {n} o)" for m, n in CELLS}


def test_a_full_current_board_frees_the_next_move():
    full_centre = marks({(2, 2, m, n): mark for (m, n), mark in DRAWN_BOARD.items()})
    sent_to_full = position(GAME, [*full_centre, "(currentBoard 2 2)", "(control oPlayer)"])
    assert not sent_to_full.terminal
    assert sent_to_full.legal("oPlayer") == {
        f"(play {i} {j} {m} {n} o)" for i, j in CELLS for m, n in CELLS if (i, j) != (2, 2)
    }


def test_goals_are_0_0_while_the_game_is_running():
    assert start(GAME).goals == {"xPlayer": 0, "oPlayer": 0}
    assert start(GAME).then("(play 3 1 2 2 x)").goals == {"xPlayer": 0, "oPlayer": 0}


def test_a_line_inside_one_sub_board_wins_100_to_0():
    won = start(GAME).then(
        "(play 2 2 2 2 x)", "(play 2 2 1 1 o)", "(play 1 1 2 2 x)", "(play 2 2 1 2 o)",
        "(play 1 2 2 2 x)", "(play 2 2 1 3 o)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"xPlayer": 0, "oPlayer": 100}


def test_three_in_a_row_across_sub_boards_is_not_a_line():
    across = position(
        GAME,
        [*marks({(1, 1, 1, 2): "x", (1, 1, 1, 3): "x", (1, 2, 1, 1): "x"}), "(control oPlayer)"],
    )
    assert not across.terminal


def test_a_full_board_without_a_line_is_a_draw_50_50():
    everything = {(i, j, m, n): mark for i, j in CELLS for (m, n), mark in DRAWN_BOARD.items()}
    full = position(GAME, [*marks(everything), "(currentBoard 3 3)", "(control oPlayer)"])
    assert full.terminal
    assert full.goals == {"xPlayer": 50, "oPlayer": 50}


def test_a_line_made_by_the_last_empty_cell_wins_rather_than_draws():
    everything = {(i, j, m, n): mark for i, j in CELLS for (m, n), mark in DRAWN_BOARD.items()}
    everything[(1, 1, 3, 1)] = "x"  # x completes column 1 and row 3 of sub-board (1, 1)
    full = position(GAME, [*marks(everything), "(currentBoard 3 1)", "(control oPlayer)"])
    assert full.terminal
    assert full.goals == {"xPlayer": 100, "oPlayer": 0}


def parse_state(text: str) -> State:
    (whole,) = read_nodes(text)
    return State(node_to_term(node) for node in whole.value)


def test_a_match_recorded_by_ggp_base_replays_state_by_state():
    record = json.loads(shared_path("protocol", "nineboard-match.json").read_text(encoding="utf-8"))
    game = start(GAME).game
    state = game.initial_state()
    assert state == parse_state(record["states"][0])
    for step, (moves, expected) in enumerate(
        zip(record["moves"], record["states"][1:], strict=True), 1
    ):
        state = game.next_state(state, moves)
        assert state == parse_state(expected), f"step {step}"
    assert game.is_terminal(state)
    assert list(game.goals(state).values()) == record["goalValues"]
