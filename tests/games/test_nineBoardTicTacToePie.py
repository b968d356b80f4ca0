"""003 nineBoardTicTacToePie: nine-board tic-tac-toe with the pie rule.

red opens with mark x, blue plays o; on blue's first turn only, blue may swap marks.
"""

from __future__ import annotations

from .positions import CELLS, DRAWN_BOARD, position, start

GAME = "nineBoardTicTacToePie"


def marks(placed: dict[tuple[int, int, int, int], str]) -> list[str]:
    return [f"(mark {i} {j} {m} {n} {mark})" for (i, j, m, n), mark in placed.items()]


def test_red_moves_first_with_x():
    opening = start(GAME)
    assert opening.game.roles == ["red", "blue"]
    assert opening.mover == "red"
    assert opening.legal("red") == {f"(play {i} {j} {m} {n} x)" for i, j in CELLS for m, n in CELLS}
    assert opening.legal("blue") == {"noop"}


def test_on_its_first_turn_blue_may_play_o_in_the_sub_board_or_swap():
    after = start(GAME).then("(play 1 1 2 3 x)")
    assert after.mover == "blue"
    assert after.legal("blue") == {f"(play 2 3 {m} {n} o)" for m, n in CELLS} | {"swap"}


def test_after_a_swap_red_moves_next_with_o_bound_to_the_sub_board_of_its_opening_move():
    swapped = start(GAME).then("(play 1 1 2 3 x)", "swap")
    assert swapped.mover == "red"
    assert swapped.legal("red") == {f"(play 2 3 {m} {n} o)" for m, n in CELLS}
    assert swapped.legal("blue") == {"noop"}
    assert swapped.holds("(usingMarker red o)")
    assert swapped.holds("(usingMarker blue x)")
    assert swapped.holds("(mark 1 1 2 3 x)")


def test_after_a_swap_blue_plays_x():
    swapped = start(GAME).then("(play 1 1 2 3 x)", "swap", "(play 2 3 3 3 o)")
    assert swapped.legal("blue") == {f"(play 3 3 {m} {n} x)" for m, n in CELLS}


def test_swap_is_only_possible_on_blues_first_turn():
    played_on = start(GAME).then("(play 1 1 2 3 x)", "(play 2 3 3 3 o)", "(play 3 3 1 1 x)")
    assert played_on.mover == "blue"
    assert "swap" not in played_on.legal("blue")
    assert "swap" not in start(GAME).legal("red")
    swapped_then_played = start(GAME).then(
        "(play 1 1 2 3 x)", "swap", "(play 2 3 3 3 o)", "(play 3 3 1 1 x)", "(play 1 1 2 2 o)"
    )
    assert swapped_then_played.mover == "blue"
    assert "swap" not in swapped_then_played.legal("blue")


def test_without_a_swap_a_line_of_o_wins_for_blue():
    won = start(GAME).then(
        "(play 2 2 2 2 x)", "(play 2 2 1 1 o)", "(play 1 1 2 2 x)", "(play 2 2 1 2 o)",
        "(play 1 2 2 2 x)", "(play 2 2 1 3 o)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"red": 0, "blue": 100}


def test_after_a_swap_a_line_of_o_wins_for_red():
    won = start(GAME).then(
        "(play 2 2 2 2 x)", "swap", "(play 2 2 1 1 o)", "(play 1 1 2 2 x)",
        "(play 2 2 1 2 o)", "(play 1 2 2 2 x)", "(play 2 2 1 3 o)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"red": 100, "blue": 0}


def test_after_a_swap_reds_opening_x_counts_for_blue():
    # Blue (now x) owns the opening mark at (2 2 2 2): with two more x marks on the
    # diagonal of the centre sub-board the line is blue's.
    diagonal = position(
        GAME,
        [
            *marks({(2, 2, 1, 1): "x", (2, 2, 2, 2): "x", (2, 2, 3, 3): "x", (1, 1, 1, 1): "o"}),
            "(usingMarker red o)", "(usingMarker blue x)", "(control red)", "(currentBoard 3 3)",
        ],
    )  # fmt: skip
    assert diagonal.terminal
    assert diagonal.goals == {"red": 0, "blue": 100}


def test_a_full_current_sub_board_only_frees_the_next_move():
    full_centre = marks({(2, 2, m, n): mark for (m, n), mark in DRAWN_BOARD.items()})
    sent_to_full = position(
        GAME,
        [*full_centre, "(usingMarker red x)", "(usingMarker blue o)", "(control blue)",
         "(currentBoard 2 2)"],
    )  # fmt: skip
    assert not sent_to_full.terminal
    assert sent_to_full.legal("blue") == {
        f"(play {i} {j} {m} {n} o)" for i, j in CELLS for m, n in CELLS if (i, j) != (2, 2)
    }


def test_three_in_a_row_across_sub_boards_is_not_a_line():
    across = position(
        GAME,
        [*marks({(1, 1, 1, 2): "x", (1, 1, 1, 3): "x", (1, 2, 1, 1): "x"}),
         "(usingMarker red x)", "(usingMarker blue o)", "(control blue)", "(currentBoard 1 1)"],
    )  # fmt: skip
    assert not across.terminal


def test_goals_are_0_0_while_the_game_is_running():
    assert start(GAME).goals == {"red": 0, "blue": 0}
    assert start(GAME).then("(play 1 1 2 3 x)", "swap").goals == {"red": 0, "blue": 0}


def test_a_full_board_without_a_line_is_a_draw_50_50():
    everything = {(i, j, m, n): mark for i, j in CELLS for (m, n), mark in DRAWN_BOARD.items()}
    full = position(
        GAME,
        [*marks(everything), "(usingMarker red o)", "(usingMarker blue x)", "(control red)",
         "(currentBoard 3 3)"],
    )  # fmt: skip
    assert full.terminal
    assert full.goals == {"red": 50, "blue": 50}
