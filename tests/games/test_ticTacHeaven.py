"""000 ticTacHeaven: tic-tac-toe and nine-board tic-tac-toe side by side.

(mark_small M N) plays on the small board, (play_large I J K L V) on the large one,
and noop is always legal.
"""

from __future__ import annotations

import random

from .positions import CELLS, DRAWN_BOARD, position, start

GAME = "ticTacHeaven"
SMALL_MOVES = {f"(mark_small {m} {n})" for m, n in CELLS}


def large_moves(mark: str, sub_boards=CELLS, taken=()) -> set[str]:
    return {
        f"(play_large {i} {j} {m} {n} {mark})"
        for i, j in sub_boards
        for m, n in CELLS
        if (i, j, m, n) not in taken
    }


def fluents(large: dict, small: dict | None = None, control: str = "xplayer", current=None):
    """A position: marks on the large board, the small board (blank where not given)."""
    small = small or {}
    return [
        *(f"(cell_small {m} {n} {small.get((m, n), 'b')})" for m, n in CELLS),
        *(f"(mark_large {i} {j} {m} {n} {mark})" for (i, j, m, n), mark in large.items()),
        f"(control_small {control})",
        f"(control_large {control})",
        *([f"(current_board {current})"] if current else []),
    ]


def test_the_player_to_move_may_play_on_either_board_or_pass():
    opening = start(GAME)
    assert opening.game.roles == ["xplayer", "oplayer"]
    assert opening.legal("xplayer") == {"noop"} | SMALL_MOVES | large_moves("x")
    assert len(opening.legal("xplayer")) == 1 + 9 + 81


def test_the_waiting_player_can_only_pass():
    assert start(GAME).legal("oplayer") == {"noop"}
    assert start(GAME).then("(mark_small 2 2)").legal("xplayer") == {"noop"}


def test_noop_is_always_legal_for_both_players():
    line = start(GAME)
    rng = random.Random(4)
    while not line.terminal:
        assert all("noop" in line.legal(role) for role in line.game.roles)
        mover = line.mover
        line = line.then(rng.choice(sorted(line.legal(mover))))


def test_the_turn_passes_even_when_the_player_to_move_passes():
    passed = start(GAME).joint("noop", "noop")
    assert passed.mover == "oplayer"
    assert passed.legal("oplayer") == {"noop"} | SMALL_MOVES | large_moves("o")


def test_a_large_board_move_sets_the_current_sub_board_to_its_inner_coordinates():
    after = start(GAME).then("(play_large 1 1 2 3 x)")
    assert after.holds("(current_board 2 3)")
    assert after.legal("oplayer") == {"noop"} | SMALL_MOVES | large_moves("o", [(2, 3)])


def test_a_small_board_move_erases_the_current_sub_board():
    after = start(GAME).then("(play_large 1 1 2 3 x)", "(mark_small 1 1)")
    assert not any(after.holds(f"(current_board {m} {n})") for m, n in CELLS)
    assert after.legal("xplayer") == (
        {"noop"} | (SMALL_MOVES - {"(mark_small 1 1)"}) | large_moves("x", taken={(1, 1, 2, 3)})
    )


def test_a_pass_also_erases_the_current_sub_board():
    after = start(GAME).then("(play_large 1 1 2 3 x)", "noop")
    assert after.legal("xplayer") >= large_moves("x", taken={(1, 1, 2, 3)})


def test_a_full_current_sub_board_frees_large_board_moves():
    full_centre = {(2, 2, m, n): mark for (m, n), mark in DRAWN_BOARD.items()}
    sent_to_full = position(GAME, fluents(full_centre, control="oplayer", current="2 2"))
    assert not sent_to_full.terminal
    assert sent_to_full.legal("oplayer") == (
        {"noop"} | SMALL_MOVES | large_moves("o", [s for s in CELLS if s != (2, 2)])
    )


def test_a_line_on_the_small_board_ends_the_game_100_to_0():
    won = start(GAME).then(
        "(mark_small 1 1)", "(mark_small 2 1)", "(mark_small 1 2)", "(mark_small 2 2)",
        "(mark_small 1 3)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"xplayer": 100, "oplayer": 0}


def test_a_line_inside_one_sub_board_of_the_large_board_ends_the_game_100_to_0():
    won = start(GAME).then(
        "(play_large 2 2 2 2 x)", "(play_large 2 2 1 1 o)", "(play_large 1 1 2 2 x)",
        "(play_large 2 2 1 2 o)", "(play_large 1 2 2 2 x)", "(play_large 2 2 1 3 o)",
    )  # fmt: skip
    assert won.terminal
    assert won.goals == {"xplayer": 0, "oplayer": 100}


def test_lines_do_not_run_across_sub_boards_or_across_the_two_boards():
    across = position(
        GAME,
        fluents(
            {(1, 1, 1, 2): "x", (1, 1, 1, 3): "x", (1, 2, 1, 1): "x"},
            small={(1, 1): "x", (1, 2): "x"},
            control="oplayer",
        ),
    )
    assert not across.terminal


def test_a_full_small_board_without_a_line_ends_the_game_50_50():
    drawn = start(GAME).then(
        "(mark_small 1 1)", "(mark_small 1 2)", "(mark_small 1 3)", "(mark_small 2 2)",
        "(mark_small 2 1)", "(mark_small 2 3)", "(mark_small 3 2)", "(mark_small 3 1)",
        "(mark_small 3 3)",
    )  # fmt: skip
    assert drawn.terminal
    assert drawn.goals == {"xplayer": 50, "oplayer": 50}


def test_a_full_large_board_without_a_line_ends_the_game_50_50():
    everything = {(i, j, m, n): mark for i, j in CELLS for (m, n), mark in DRAWN_BOARD.items()}
    full = position(GAME, fluents(everything, small={(1, 1): "x"}, control="oplayer"))
    assert full.terminal
    assert full.goals == {"xplayer": 50, "oplayer": 50}


def test_the_goals_come_from_the_board_that_ended():
    # The small board is still open and x leads there; the large board has o's line.
    large_line = {(3, 3, 1, 1): "o", (3, 3, 2, 2): "o", (3, 3, 3, 3): "o"}
    won = position(GAME, fluents(large_line, small={(1, 1): "x", (2, 2): "x"}))
    assert won.terminal
    assert won.goals == {"xplayer": 0, "oplayer": 100}


def test_goals_are_50_50_while_neither_board_has_ended():
    assert start(GAME).goals == {"xplayer": 50, "oplayer": 50}
    assert start(GAME).then("(mark_small 2 2)").goals == {"xplayer": 50, "oplayer": 50}


def test_the_game_need_not_end_when_both_players_always_pass():
    stalled = start(GAME)
    for _ in range(500):
        stalled = stalled.joint("noop", "noop")
    assert not stalled.terminal
    assert stalled.state == start(GAME).state
    assert stalled.goals == {"xplayer": 50, "oplayer": 50}
