"""Random playouts per second through the public ``Game`` API.

    python benchmarks/playouts.py                      # interpreter, the four games
    python benchmarks/playouts.py --engine compiled --seconds 5 ticTacToe

A playout starts from the initial state and, until the state is terminal, asks
every role's legal moves, picks one uniformly at random and computes the next
state; the goals are read at the end. A transition is one such step. Figures are
the median over ``--runs`` runs of ``--seconds`` each, single thread.

Games: ticTacToe, connectFour and breakthrough from the shared conformance corpus
(``../shared/conformance/games``, skipped when absent) and the bundled
nineBoardTicTacToe; any bundled name or ``.kif`` path may be given instead.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.games import is_bundled, load_game  # noqa: E402
from server.gdl import Game  # noqa: E402

CORPUS = ROOT.parent / "shared" / "conformance" / "games"
DEFAULT_GAMES = ["ticTacToe", "connectFour", "breakthrough", "nineBoardTicTacToe"]


def load(name: str, engine: str) -> Game | None:
    """A bundled game, a corpus game or a ``.kif`` path; None when not found."""
    if is_bundled(name):
        return load_game(name, engine=engine)
    for path in (Path(name), CORPUS / f"{name}.kif"):
        if path.suffix == ".kif" and path.is_file():
            return Game.from_file(path, engine=engine)
    return None


def measure(game: Game, seconds: float, rng: random.Random) -> tuple[float, float]:
    """Playouts and transitions per second over about ``seconds``."""
    playouts = transitions = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        state = game.initial_state()
        while not game.is_terminal(state):
            moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
            state = game.next_state(state, moves)
            transitions += 1
        game.defined_goals(state)
        playouts += 1
    elapsed = time.perf_counter() - started
    return playouts / elapsed, transitions / elapsed


COLUMNS = ["game", "playouts/s", "transitions/s", "load s"]
"""The printed columns: medians of the timed runs, and the seconds to load the game."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", default=DEFAULT_GAMES)
    parser.add_argument(
        "--engine", default="interpreter", choices=("interpreter", "compiled", "auto")
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0

    print(f"engine: {args.engine}; median of {args.runs} runs of {args.seconds:g} s")
    game_column, playouts_column, transitions_column, load_column = COLUMNS
    print(f"{game_column:<22} {playouts_column:>12} {transitions_column:>15} {load_column:>8}")
    for name in args.games:
        started = time.perf_counter()
        game = load(name, args.engine)
        if game is None:
            print(f"{name:<22} {'(not found)':>12}")
            continue
        load_seconds = time.perf_counter() - started
        rng = random.Random(args.seed)
        runs = [measure(game, args.seconds, rng) for _ in range(args.runs)]
        playouts = statistics.median(run[0] for run in runs)
        transitions = statistics.median(run[1] for run in runs)
        print(f"{name:<22} {playouts:>12.1f} {transitions:>15.0f} {load_seconds:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
