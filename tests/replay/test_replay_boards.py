"""Grid games are drawn as boards; everything else is listed as fluents."""

from __future__ import annotations

from server.gdl.terms import RawTerm
from server.replay.board import GridLayout, detect_layouts, draw_board, other_fluents
from server.replay.states import parse_state_text


def facts(text: str) -> frozenset[RawTerm]:
    return parse_state_text(text)


def detect_layout(states: list[frozenset[RawTerm]]) -> GridLayout | None:
    """The one board of a game, if it has exactly one."""
    layouts = detect_layouts(states)
    assert len(layouts) <= 1
    return layouts[0] if layouts else None


def test_a_tic_tac_toe_state_is_drawn_as_a_grid_with_rows_first() -> None:
    state = facts(
        "( ( cell 1 1 x ) ( cell 1 2 b ) ( cell 1 3 b ) ( cell 2 1 b ) ( cell 2 2 o ) "
        "( cell 2 3 b ) ( cell 3 1 b ) ( cell 3 2 b ) ( cell 3 3 x ) ( control oplayer ) )"
    )
    layout = detect_layout([state])

    assert layout is not None
    assert draw_board(state, layout) == [
        "   1 2 3",
        "1  x . .",
        "2  . o .",
        "3  . . x",
    ]
    assert other_fluents(state, [layout]) == ["(control oplayer)"]


def test_the_layout_comes_from_every_state_of_the_match() -> None:
    empty = facts("( ( control xPlayer ) )")
    later = facts("( ( mark 1 1 1 1 x ) ( mark 3 3 3 3 o ) ( currentBoard 3 3 ) )")

    layout = detect_layout([empty, later])

    assert layout is not None and layout.functor == "mark"
    assert draw_board(empty, layout)[0] == ". . . | . . . | . . ."


def test_a_nine_board_state_is_drawn_as_boards_of_boards() -> None:
    state = facts(
        "( ( mark 1 1 1 1 x ) ( mark 2 2 1 3 o ) ( mark 3 3 3 3 x ) ( control oPlayer ) )"
    )
    layout = detect_layout([state])

    assert layout is not None
    assert draw_board(state, layout) == [
        "x . . | . . . | . . .",
        ". . . | . . . | . . .",
        ". . . | . . . | . . .",
        "------+-------+------",
        ". . . | . . o | . . .",
        ". . . | . . . | . . .",
        ". . . | . . . | . . .",
        "------+-------+------",
        ". . . | . . . | . . .",
        ". . . | . . . | . . .",
        ". . . | . . . | . . x",
    ]


def test_coordinates_need_not_start_at_one() -> None:
    state = facts("( ( square 0 0 red ) ( square 0 1 blank ) ( square 1 1 blue ) )")
    layout = detect_layout([state])

    assert layout is not None
    assert draw_board(state, layout) == [
        "   0    1",
        "0  red  .",
        "1  .    blue",
    ]


def test_a_game_without_a_grid_lists_its_fluents() -> None:
    state = facts("( ( step 3 ) ( pile 1 7 ) ( control red ) )")

    assert detect_layout([state]) is None
    assert other_fluents(state) == ["(control red)", "(step 3)", "(pile 1 7)"]


def test_large_coordinates_are_not_taken_for_a_board() -> None:
    state = facts("( ( score 1 450 won ) ( score 2 320 lost ) )")

    assert detect_layout([state]) is None


def test_a_game_with_two_boards_draws_both() -> None:
    state = facts(
        "( ( cell_small 1 1 x ) ( cell_small 3 3 b ) ( mark_large 1 1 1 1 o ) "
        "( mark_large 3 3 3 3 x ) ( mark_large 2 2 2 2 o ) ( control_small oplayer ) )"
    )

    layouts = detect_layouts([state])

    assert [layout.functor for layout in layouts] == ["mark_large", "cell_small"]
    assert draw_board(state, layouts[1]) == ["   1 2 3", "1  x . .", "2  . . .", "3  . . ."]
    assert other_fluents(state, layouts) == ["(control_small oplayer)"]
