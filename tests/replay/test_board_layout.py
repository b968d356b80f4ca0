"""Every bundled game and the corpus's grid games draw as boards, from their fluents alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.games import load_game
from server.gdl import Game
from server.replay.layout import detect_grids, draw_state, move_places
from server.replay.sampling import sample_states

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "conformance" / "games"

# game, functor, (outer rows, outer columns, rows, columns), a square and its content
BUNDLED = [
    ("ticTacHeaven", "cell_small", (1, 1, 3, 3), (0, 0, 1, 1), ""),
    ("tictactoex9", "cell", (3, 3, 3, 3), (2, 2, 2, 2), ""),
    ("nineBoardTicTacToe", "mark", (3, 3, 3, 3), (0, 0, 0, 0), ""),
    ("nineBoardTicTacToePie", "mark", (3, 3, 3, 3), (1, 1, 1, 1), ""),
    ("double_tictactoe_dengji", "cell", (1, 2, 3, 3), (0, 1, 2, 2), ""),
]
CORPUS_GAMES = [
    ("ticTacToe", "cell", (1, 1, 3, 3), (0, 0, 0, 0), ""),
    ("connectFour", "cell", (1, 1, 8, 6), (0, 0, 0, 0), ""),
    ("breakthrough", "cellHolds", (1, 1, 8, 8), (0, 0, 0, 0), "white"),
    ("chess", "cell", (1, 1, 8, 8), (0, 0, 0, 4), "bk"),
]


def _drawn(game: Game, functor: str):  # type: ignore[no-untyped-def]
    grids = detect_grids(sample_states(game, seed=1))
    drawing = draw_state(game.initial_state().facts, grids)
    boards = {board.functor: board for board in drawing.boards}
    assert functor in boards, (list(boards), drawing.facts)
    return boards[functor], drawing


@pytest.mark.parametrize(("name", "functor", "size", "square", "content"), BUNDLED)
def test_bundled_games_draw_as_boards(
    name: str, functor: str, size: tuple[int, ...], square: tuple[int, ...], content: str
) -> None:
    board, drawing = _drawn(load_game(name), functor)
    assert board.size == size
    assert board.square(*square) == content
    assert all(functor not in fact.split()[0] for fact in drawing.facts if fact.startswith("("))


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason="the shared conformance corpus (../shared) is absent"
)
@pytest.mark.parametrize(("name", "functor", "size", "square", "content"), CORPUS_GAMES)
def test_corpus_games_draw_as_boards(
    name: str, functor: str, size: tuple[int, ...], square: tuple[int, ...], content: str
) -> None:
    board, _ = _drawn(Game.from_file(CORPUS / f"{name}.kif"), functor)
    assert board.size == size
    assert board.square(*square) == content


def test_chess_puts_rank_eight_on_top_and_files_as_columns() -> None:
    facts = {("cell", "a", "2", "br"), ("cell", "h", "1", "wr"), ("cell", "a", "1", "b")}
    facts |= {("cell", "h", "2", "b")}
    (board,) = draw_state(facts, detect_grids([facts])).boards
    assert board.row_labels == ("2", "1") and board.column_labels == ("a", "h")
    assert board.boards[0][0] == (("br", ""), ("", "wr"))


@pytest.mark.parametrize(
    ("facts", "boards", "listed"),
    [
        # a relation with one coordinate is no board
        ({("score", "1", "10"), ("control", "x")}, 0, ["(control x)", "(score 1 10)"]),
        # too few places for a board
        ({("cell", "1", "1", "x"), ("cell", "1", "2", "o")}, 0, ["(cell 1 1 x)", "(cell 1 2 o)"]),
        # a word is no coordinate
        ({("at", "home", "1", "x")} | {("at", "far", str(i), "y") for i in range(4)}, 0, None),
        # a plain grid: the content is kept, blanks are empty
        (
            {("cell", str(r), str(c), "b") for r in (1, 2) for c in (1, 2)} | {("step", "3")},
            1,
            ["(step 3)"],
        ),
    ],
)
def test_what_is_a_board_and_what_is_listed(
    facts: set, boards: int, listed: list[str] | None
) -> None:
    drawing = draw_state(facts, detect_grids([facts]))
    assert len(drawing.boards) == boards
    if listed is not None:
        assert list(drawing.facts) == listed


@pytest.mark.parametrize(
    ("move", "places"),
    [
        (("mark", "2", "3"), [("2", "3")]),
        (("move", "1", "1", "2", "2"), [("1", "1"), ("2", "2")]),
        ("noop", []),
        (("drop", "9"), []),
    ],
)
def test_moves_name_squares(move: object, places: list[tuple[str, ...]]) -> None:
    facts = {("cell", str(r), str(c), "b") for r in (1, 2, 3) for c in (1, 2, 3)}
    (board,) = draw_state(facts, detect_grids([facts])).boards
    assert move_places(move, board) == places  # type: ignore[arg-type]
