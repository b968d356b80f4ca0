"""The ``mcts`` search with a fixed iteration count, on positions built for it.

ticTacToe comes from the shared corpus (``../shared``); its tests skip when it is absent.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from players.mcts.flat import FlatSearch
from players.mcts.model import CompiledModel, InterpretedModel, Model, model_of
from players.mcts.search import Search
from server.games import load_game
from server.gdl import Game, State
from server.gdl.parser import parse_term

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "games"
needs_corpus = pytest.mark.skipif(
    not (CORPUS / "ticTacToe.kif").is_file(), reason="the shared corpus (../shared) is absent"
)


@cache
def tic_tac_toe(engine: str = "auto") -> Game:
    return Game.from_file(CORPUS / "ticTacToe.kif", engine=engine)


def board(rows: tuple[str, str, str], mover: str) -> State:
    """A ticTacToe state from three rows such as ``"xx."`` (``.`` is blank)."""
    facts = [("control", mover)]
    for i, row in enumerate(rows, 1):
        for j, mark in enumerate(row, 1):
            facts.append(("cell", str(i), str(j), "b" if mark == "." else mark))
    return State(facts)


def nine_board(marks: dict[tuple[int, int, int, int], str], current: str, mover: str) -> State:
    """A nineBoardTicTacToe state: marks by (board row, board column, row, column)."""
    facts = [parse_term(f"(mark {i} {j} {k} {m} {mark})") for (i, j, k, m), mark in marks.items()]
    return State([*facts, parse_term(f"(currentBoard {current})"), ("control", mover)])


def search(
    game: Game, state: State, iterations: int, *, seed: int = 1, **options: object
) -> Search:
    model: Model = model_of(game)
    tree = Search(model, random.Random(seed), **options)  # type: ignore[arg-type]
    tree.set_root(model.key(state))
    tree.run(iterations=iterations)
    return tree


def chosen(game: Game, tree: Search, role: str) -> str:
    r = game.roles.index(role)
    return str(tree.model.move_term(r, tree.best_move(r)))


def not_first(game: Game, state: State, role: str, move: str) -> bool:
    """The answer is not simply the first legal move (so a lazy player would fail)."""
    return str(game.legal_moves(state, role)[0]) != move


def x_wins_by_force(game: Game, state: State) -> bool:
    """Plain minimax: can xplayer force a win from ``state``?"""
    if game.is_terminal(state):
        return game.goal(state, "xplayer") == 100
    x_moves = game.legal_moves(state, "xplayer")
    o_moves = game.legal_moves(state, "oplayer")
    outcomes = (
        x_wins_by_force(game, game.next_state(state, [x, o])) for x in x_moves for o in o_moves
    )
    if len(x_moves) > 1:
        return any(outcomes)
    return all(outcomes)


# -- ticTacToe -------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("solver", [True, False])
def test_it_takes_a_win_in_one_rather_than_blocking(solver: bool) -> None:
    game = tic_tac_toe()
    state = board(("...", ".oo", ".xx"), "xplayer")
    assert not_first(game, state, "xplayer", "(mark 3 1)")
    tree = search(game, state, 2_000, solver=solver)
    assert chosen(game, tree, "xplayer") == "(mark 3 1)"


@needs_corpus
@pytest.mark.parametrize("solver", [True, False])
def test_it_blocks_a_loss_in_one(solver: bool) -> None:
    game = tic_tac_toe()
    state = board(("x..", ".o.", "x.."), "oplayer")
    assert not_first(game, state, "oplayer", "(mark 2 1)")
    tree = search(game, state, 3_000, solver=solver)
    assert chosen(game, tree, "oplayer") == "(mark 2 1)"


@needs_corpus
def test_the_solver_proves_a_won_endgame_and_plays_a_winning_move() -> None:
    game = tic_tac_toe()
    state = board(("xo.", ".x.", "..o"), "xplayer")  # no win in one, but a fork wins
    assert x_wins_by_force(game, state)
    tree = search(game, state, 3_000)
    assert tree.finished
    assert tree.root is not None and tree.root.solved == (1.0, 0.0)
    move = tree.best_move(0)
    after = game.next_state(state, [tree.model.move_term(0, move), "noop"])
    assert x_wins_by_force(game, after)


@needs_corpus
def test_a_drawn_endgame_is_played_right_but_left_unproven() -> None:
    # o must take (3, 1), where x's last move draws; at (3, 3) x wins with (3, 1).
    game = tic_tac_toe()
    state = board(("xox", "xoo", ".x."), "oplayer")
    tree = search(game, state, 200)
    assert chosen(game, tree, "oplayer") == "(mark 3 1)"
    assert not tree.finished  # a proven draw would end the search for an opponent's slip


@needs_corpus
def test_without_the_solver_the_same_endgame_stays_unproven() -> None:
    tree = search(tic_tac_toe(), board(("xo.", ".x.", "..o"), "xplayer"), 3_000, solver=False)
    assert not tree.finished


@needs_corpus
def test_the_interpreter_model_plays_the_same_games() -> None:
    game = tic_tac_toe("interpreter")
    assert isinstance(model_of(game), InterpretedModel)
    tree = search(game, board(("...", ".oo", ".xx"), "xplayer"), 300)
    assert chosen(game, tree, "xplayer") == "(mark 3 1)"


@needs_corpus
def test_flat_monte_carlo_samples_every_root_move_evenly() -> None:
    game = tic_tac_toe()
    model = model_of(game)
    flat = FlatSearch(model, random.Random(3))
    flat.set_root(model.key(game.initial_state()))
    flat.run(iterations=900)
    assert [visits for _, visits, _ in flat.move_stats(0)] == [100] * 9
    assert len(flat.table) == 1


# -- nineBoardTicTacToe (bundled) ------------------------------------------------------------


def test_nine_board_win_in_one() -> None:
    game = load_game("nineBoardTicTacToe")
    marks = {(1, 1, 3, 1): "x", (1, 1, 3, 2): "x", (1, 1, 2, 1): "o", (1, 1, 2, 2): "o"}
    state = nine_board(marks, "1 1", "xPlayer")
    assert isinstance(model_of(game), CompiledModel)
    assert not_first(game, state, "xPlayer", "(play 1 1 3 3 x)")
    tree = search(game, state, 1_000)
    assert chosen(game, tree, "xPlayer") == "(play 1 1 3 3 x)"


def test_nine_board_block_of_a_loss_in_one() -> None:
    # Board (2, 2) reads  x o . / o o x / x x .  and board (1, 3) has x x . on top: o must
    # take (3, 3) of board (2, 2); (1, 3) would send x to board (1, 3), where it wins.
    game = load_game("nineBoardTicTacToe")
    rows = {(1, 1): "x", (1, 2): "o", (2, 1): "o", (2, 2): "o", (2, 3): "x", (3, 1): "x"}
    marks = {(2, 2, k, m): mark for (k, m), mark in rows.items()}
    marks |= {(2, 2, 3, 2): "x", (1, 3, 1, 1): "x", (1, 3, 1, 2): "x"}
    marks |= {(1, 3, 2, 1): "o", (1, 3, 3, 3): "o"}
    state = nine_board(marks, "2 2", "oPlayer")
    assert {str(m) for m in game.legal_moves(state, "oPlayer")} == {
        "(play 2 2 1 3 o)",
        "(play 2 2 3 3 o)",
    }
    assert not_first(game, state, "oPlayer", "(play 2 2 3 3 o)")
    tree = search(game, state, 500)
    assert chosen(game, tree, "oPlayer") == "(play 2 2 3 3 o)"


# -- the tree ------------------------------------------------------------------------------


def test_the_tree_is_kept_below_the_new_root_and_dropped_elsewhere() -> None:
    game = load_game("nineBoardTicTacToe")
    tree = search(game, game.initial_state(), 400)
    root = tree.root
    assert root is not None
    joint, child = max(root.children.items(), key=lambda item: item[1].n)
    tree.set_root(child.key)
    assert tree.root is child and child.n > 1
    assert root.key not in tree.table
    assert len(tree.table) < 400


def test_the_memory_cap_bounds_the_table() -> None:
    game = load_game("nineBoardTicTacToe")
    tree = search(game, game.initial_state(), 600, max_nodes=50)
    assert len(tree.table) == 50
    assert tree.root is not None and tree.root.n == 600
    assert tree.best_move(0) in tree.root.legal[0]


def test_a_seed_makes_the_search_reproducible() -> None:
    game = load_game("nineBoardTicTacToe")
    first = search(game, game.initial_state(), 300, seed=7).move_stats(0)
    second = search(game, game.initial_state(), 300, seed=7).move_stats(0)
    assert first == second
