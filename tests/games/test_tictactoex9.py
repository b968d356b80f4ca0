"""001 tictactoex9: nine-board tic-tac-toe in the "board to play" form.

(mark I J K L) marks cell (K, L) of sub-board (I, J); cells hold b, x or o.
"""

from __future__ import annotations

from .positions import CELLS, DRAWN_BOARD, position, start

GAME = "tictactoex9"


def board(marks: dict[tuple[int, int, int, int], str], to_play: str, control: str) -> list[str]:
    """Fluents of a position: the given marks, every other cell blank."""
    cells = [
        f"(cell {i} {j} {m} {n} {marks.get((i, j, m, n), 'b')})" for i, j in CELLS for m, n in CELLS
    ]
    return [*cells, f"(boardtoplay {to_play})", f"(control {control})"]


def test_roles_and_the_empty_start():
    opening = start(GAME)
    assert opening.game.roles == ["xplayer", "oplayer"]
    assert all(opening.holds(f"(cell {i} {j} {m} {n} b)") for i, j in CELLS for m, n in CELLS)
    assert opening.holds("(control xplayer)")


def test_the_first_move_may_go_in_any_of_the_81_cells():
    opening = start(GAME)
    assert opening.mover == "xplayer"
    assert opening.legal("xplayer") == {
        f"(mark {i} {j} {m} {n})" for i, j in CELLS for m, n in CELLS
    }
    assert opening.legal("oplayer") == {"noop"}


def test_after_the_opening_move_the_second_player_has_exactly_9_moves():
    after = start(GAME).then("(mark 1 1 2 3)")
    assert after.mover == "oplayer"
    assert after.legal("oplayer") == {f"(mark 2 3 {m} {n})" for m, n in CELLS}
    assert after.legal("xplayer") == {"noop"}
    assert after.holds("(cell 1 1 2 3 x)")


def test_the_mover_is_sent_to_the_sub_board_of_the_previous_inner_coordinates():
    after = start(GAME).then("(mark 1 1 2 3)", "(mark 2 3 3 1)")
    assert after.legal("xplayer") == {f"(mark 3 1 {m} {n})" for m, n in CELLS}


def test_occupied_cells_of_the_sub_board_are_not_legal():
    # x takes the centre of sub-board (2, 2), o answers in its corner, x sends o back there.
    after = start(GAME).then("(mark 2 2 2 2)", "(mark 2 2 1 1)", "(mark 1 1 2 2)")
    assert after.legal("oplayer") == {
        f"(mark 2 2 {m} {n})" for m, n in CELLS if (m, n) not in {(2, 2), (1, 1)}
    }


def test_a_full_sub_board_frees_the_next_move():
    full_centre = {(2, 2, m, n): mark for (m, n), mark in DRAWN_BOARD.items()}
    sent_to_full = position(GAME, board(full_centre, "2 2", "oplayer"))
    assert not sent_to_full.terminal
    assert sent_to_full.legal("oplayer") == {
        f"(mark {i} {j} {m} {n})" for i, j in CELLS for m, n in CELLS if (i, j) != (2, 2)
    }


def test_a_line_inside_one_sub_board_wins_100_to_0():
    # o is sent back to the centre sub-board again and again and completes its top row.
    won = start(GAME).then(
        "(mark 2 2 2 2)", "(mark 2 2 1 1)", "(mark 1 1 2 2)", "(mark 2 2 1 2)",
        "(mark 1 2 2 2)", "(mark 2 2 1 3)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"xplayer": 0, "oplayer": 100}


def test_three_in_a_row_across_sub_boards_is_not_a_line():
    # x holds cells (1,2) and (1,3) of sub-board (1,1) and cell (1,1) of sub-board (1,2):
    # one straight row of the big board, but spread over two sub-boards.
    across = position(
        GAME, board({(1, 1, 1, 2): "x", (1, 1, 1, 3): "x", (1, 2, 1, 1): "x"}, "1 1", "oplayer")
    )
    assert not across.terminal
    assert across.goals == {}


def test_goals_are_only_defined_once_the_game_is_over():
    assert start(GAME).goals == {}
    assert start(GAME).then("(mark 1 1 2 3)").goals == {}


def test_a_full_board_without_a_line_is_a_draw_50_50():
    everything = {(i, j, m, n): mark for i, j in CELLS for (m, n), mark in DRAWN_BOARD.items()}
    full = position(GAME, board(everything, "3 3", "oplayer"))
    assert full.terminal
    assert full.goals == {"xplayer": 50, "oplayer": 50}
