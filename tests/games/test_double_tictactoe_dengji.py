"""004 double_tictactoe_dengji: two tic-tac-toe boards played at once.

(mark1 M N) marks board 1, (mark2 M N) board 2; (cell G M N V) is cell (M, N) of board G.
"""

from __future__ import annotations

from .positions import CELLS, start

GAME = "double_tictactoe_dengji"

X_LINE_ON_BOARD_1 = ["(mark1 1 1)", "(mark1 2 1)", "(mark1 1 2)", "(mark1 2 2)", "(mark1 1 3)"]
"""x takes the top row of board 1 while o plays below it: five moves, x to o."""

DRAW_ON_BOARD_1 = [
    "(mark1 1 1)", "(mark1 1 2)", "(mark1 1 3)", "(mark1 2 2)", "(mark1 2 1)",
    "(mark1 2 3)", "(mark1 3 2)", "(mark1 3 1)", "(mark1 3 3)",
]  # fmt: skip
"""Nine moves from x that fill board 1 without a line: rows xox, xoo, oxx."""

DRAW_ON_BOARD_2_FROM_O = [
    "(mark2 1 1)", "(mark2 1 2)", "(mark2 1 3)", "(mark2 2 2)", "(mark2 2 1)",
    "(mark2 2 3)", "(mark2 3 2)", "(mark2 3 1)", "(mark2 3 3)",
]  # fmt: skip
"""The same fill on board 2, started by o: rows oxo, oxx, xoo."""


def test_the_mover_may_mark_any_blank_cell_of_either_board():
    opening = start(GAME)
    assert opening.game.roles == ["xplayer", "oplayer"]
    assert opening.legal("xplayer") == {f"(mark{g} {m} {n})" for g in (1, 2) for m, n in CELLS}
    assert opening.legal("oplayer") == {"noop"}


def test_marks_land_on_the_board_the_move_names():
    after = start(GAME).then("(mark2 3 1)", "(mark1 3 1)")
    assert after.holds("(cell 2 3 1 x)")
    assert after.holds("(cell 1 3 1 o)")
    assert "(mark2 3 1)" not in after.legal("xplayer")
    assert "(mark1 3 1)" not in after.legal("xplayer")


def test_a_line_on_one_board_does_not_end_the_game():
    after = start(GAME).then(*X_LINE_ON_BOARD_1)
    assert not after.terminal
    assert after.goals == {}


def test_a_board_with_a_line_is_finished_and_no_longer_playable():
    after = start(GAME).then(*X_LINE_ON_BOARD_1)
    assert after.mover == "oplayer"
    assert after.legal("oplayer") == {f"(mark2 {m} {n})" for m, n in CELLS}


def test_a_full_board_is_finished_and_play_goes_on_on_the_other():
    after = start(GAME).then(*DRAW_ON_BOARD_1)
    assert not after.terminal
    assert after.legal("oplayer") == {f"(mark2 {m} {n})" for m, n in CELLS}


def test_own_lines_on_both_boards_score_100_and_0():
    game_over = start(GAME).then(
        *X_LINE_ON_BOARD_1,
        "(mark2 1 2)", "(mark2 1 1)", "(mark2 1 3)", "(mark2 2 1)", "(mark2 3 3)", "(mark2 3 1)",
    )  # fmt: skip
    assert game_over.terminal
    assert game_over.goals == {"xplayer": 100, "oplayer": 0}


def test_a_line_on_one_board_and_a_draw_on_the_other_score_75_and_25():
    game_over = start(GAME).then(*X_LINE_ON_BOARD_1, *DRAW_ON_BOARD_2_FROM_O)
    assert game_over.terminal
    assert game_over.goals == {"xplayer": 75, "oplayer": 25}


def test_both_boards_drawn_score_50_each():
    game_over = start(GAME).then(*DRAW_ON_BOARD_1, *DRAW_ON_BOARD_2_FROM_O)
    assert game_over.terminal
    assert game_over.goals == {"xplayer": 50, "oplayer": 50}


def test_one_line_each_scores_50_each():
    game_over = start(GAME).then(
        *X_LINE_ON_BOARD_1,
        "(mark2 1 1)",
        "(mark2 2 1)",
        "(mark2 1 2)",
        "(mark2 2 2)",
        "(mark2 1 3)",
    )
    assert game_over.terminal
    assert game_over.goals == {"xplayer": 50, "oplayer": 50}


def test_the_opponents_lines_on_both_boards_score_0_and_100():
    # o takes the top row of board 2, then the middle row of board 1; x only takes corners.
    game_over = start(GAME).then(
        "(mark1 1 1)", "(mark2 1 1)", "(mark2 3 1)", "(mark2 1 2)", "(mark2 3 3)", "(mark2 1 3)",
        "(mark1 1 3)", "(mark1 2 1)", "(mark1 3 1)", "(mark1 2 2)", "(mark1 3 3)", "(mark1 2 3)",
    )  # fmt: skip
    assert game_over.terminal
    assert game_over.goals == {"xplayer": 0, "oplayer": 100}
