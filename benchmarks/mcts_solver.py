"""What does the solver (MCTS-Solver back-ups) gain? The ``mcts`` search on endgames.

Endgame positions come from random games of ticTacToe and connectFour from the shared
corpus (``../shared/conformance/games``, skipped when absent) and of the bundled
nineBoardTicTacToe, each stopped 1 to ``--back`` plies before its end, all from
``--seed``. An exact search (AND/OR minimax over the same rules, at most ``--depth``
plies) labels each root move of the side to move, and a position is kept when

- the side to move can force a win (a *win* position): the right moves are those after
  which it still forces a win within the horizon, and at least one move does not; or
- it cannot, but some of its moves lose by force (a *defend* position): the right moves
  are those that do not lose within the horizon, and at least one does.

Up to ``--positions`` positions per game, half of each kind. Each position is searched
with the solver and without it (the ``uct`` of ``player_strength.py``), from the same
random seed, for each budget of ``--budgets`` iterations, and the move the search would
play is checked against the labels. One line per game and budget, with the columns of
``--list-columns``:

- ``positions``, ``to_win``, ``to_defend``: the positions and how many of each kind;
- ``won_solver_pct``, ``won_uct_pct``: the share of *win* positions where the chosen
  move is a winning one, with and without the solver;
- ``defended_solver_pct``, ``defended_uct_pct``: the same for *defend* positions and
  moves that do not lose;
- ``proved_pct``: the share of *win* positions whose root the solver proved won within
  the budget (its search then stops: the move can no longer change);
- ``proof_iterations_median``: the median iterations the solver took to prove the
  root, over the *win* positions it proved within the budget (``-`` when none);
- ``solver_iterations_per_s``, ``uct_iterations_per_s``: iterations run per second of
  search up to the budget (the solver stops on a proven root, so it runs fewer).

Every figure but the two rates is the same on every run with the same arguments.

Usage: ``python benchmarks/mcts_solver.py [--games A,B] [--positions N] [--budgets
100,300,1000,3000] [--depth D] [--back K] [--seed S]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from player_strength import CORPUS, load
from support.table import print_rows

if TYPE_CHECKING:
    from players.mcts.model import Model

GAMES = ("ticTacToe", "connectFour", "nineBoardTicTacToe")

COLUMNS = (
    "game",
    "iterations",
    "positions",
    "to_win",
    "to_defend",
    "won_solver_pct",
    "won_uct_pct",
    "defended_solver_pct",
    "defended_uct_pct",
    "proved_pct",
    "proof_iterations_median",
    "solver_iterations_per_s",
    "uct_iterations_per_s",
)

WIN = 1.0 - 1e-9
"""A scaled goal at least this high is a win."""


# -- the exact search ------------------------------------------------------------------------


class Exact:
    """Depth-bounded AND/OR search: can a role force a win within so many plies?

    For games where at most one role has a choice in each state. Results are kept per
    state and role: the fewest plies a win was proven in, the most it was refuted in.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self._proven: dict[tuple[Hashable, int], int] = {}
        self._refuted: dict[tuple[Hashable, int], int] = {}
        self._expanded: dict[Hashable, tuple[int | None, list[Hashable]]] = {}

    def expand(self, key: Hashable) -> tuple[int | None, list[Hashable]]:
        """The role with a choice (None if no role has one) and the key after each move."""
        found = self._expanded.get(key)
        if found is None:
            legal = self.model.legal(key)
            movers = [r for r, moves in enumerate(legal) if len(moves) > 1]
            if len(movers) > 1:
                raise ValueError("the exact search needs games where one role moves at a time")
            mover = movers[0] if movers else None
            children = []
            for j in range(len(legal[mover]) if mover is not None else 1):
                joint = [moves[j] if r == mover else moves[0] for r, moves in enumerate(legal)]
                children.append(self.model.next(key, joint))
            found = self._expanded[key] = (mover, children)
        return found

    def ended(self, key: Hashable) -> bool:
        return self.model.terminal(key) or not all(self.model.legal(key))

    def forces_win(self, key: Hashable, role: int, plies: int) -> bool:
        """Whether ``role`` wins from ``key`` against any play within ``plies`` plies."""
        if self.ended(key):
            return self.model.goals(key)[role] >= WIN
        if plies <= 0:
            return False
        memo = (key, role)
        if self._proven.get(memo, plies + 1) <= plies:
            return True
        if self._refuted.get(memo, -1) >= plies:
            return False
        mover, children = self.expand(key)
        outcomes = (self.forces_win(child, role, plies - 1) for child in children)
        won = any(outcomes) if mover == role else all(outcomes)
        if won:
            self._proven[memo] = plies
        else:
            self._refuted[memo] = plies
        return won


@dataclass(frozen=True)
class Position:
    """An endgame position and the right moves of the side to move."""

    key: Hashable
    mover: int
    kind: str
    """``win`` or ``defend``."""
    right: frozenset[int]
    """The indices, in the model's legal move order, of the right moves."""
    win_plies: int | None
    """For a ``win`` position, the fewest plies the mover forces its win in."""


def classify(exact: Exact, key: Hashable, depth: int, min_plies: int = 1) -> Position | None:
    """The position at ``key`` labelled as described above, or None when it is neither
    (or a win in fewer than ``min_plies`` plies)."""
    if exact.ended(key) or len(exact.model.roles) != 2:
        return None
    mover, children = exact.expand(key)
    if mover is None:
        return None
    other = 1 - mover
    wins = [exact.forces_win(child, mover, depth - 1) for child in children]
    if any(wins):
        if all(wins):
            return None
        plies = next(p for p in range(1, depth + 1) if exact.forces_win(key, mover, p))
        if plies < min_plies:
            return None
        right = frozenset(j for j, won in enumerate(wins) if won)
        return Position(key, mover, "win", right, plies)
    loses = [exact.forces_win(child, other, depth - 1) for child in children]
    if any(loses) and not all(loses):
        right = frozenset(j for j, lost in enumerate(loses) if not lost)
        return Position(key, mover, "defend", right, None)
    return None


def endgames(
    model: Model,
    start: Hashable,
    *,
    count: int,
    seed: str,
    depth: int,
    back: int,
    min_plies: int = 1,
) -> list[Position]:
    """Up to ``count`` labelled positions from random games, half of each kind."""
    rng = random.Random(seed)
    exact = Exact(model)
    quota = {"win": (count + 1) // 2, "defend": count // 2}
    kept: list[Position] = []
    seen: set[Hashable] = set()
    for _ in range(200 * count):
        if len(kept) == count:
            break
        keys = [start]
        while not exact.ended(keys[-1]):
            legal = model.legal(keys[-1])
            keys.append(model.next(keys[-1], [rng.choice(moves) for moves in legal]))
        before = rng.randint(1, back)
        if before >= len(keys) or keys[-1 - before] in seen:
            continue
        key = keys[-1 - before]
        seen.add(key)
        position = classify(exact, key, depth, min_plies)
        if position is not None and quota[position.kind] > 0:
            quota[position.kind] -= 1
            kept.append(position)
    return kept


# -- the searches ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """One search of one position: at each budget, whether its move was right."""

    right: dict[int, bool] = field(default_factory=dict)
    iterations: dict[int, int] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)
    proved_at: int | None = None


def search(
    model: Model, position: Position, budgets: Sequence[int], *, solver: bool, seed: str
) -> Outcome:
    """Search ``position`` up to each budget in turn (the same as a fresh search of each)."""
    from players.mcts.search import Search

    tree = Search(model, random.Random(seed), solver=solver)
    root = tree.set_root(position.key)
    moves = list(root.legal[position.mover])
    outcome = Outcome()
    done = 0
    seconds = 0.0
    for budget in sorted(budgets):
        started = time.perf_counter()
        while done < budget and not tree.finished:
            tree.iterate()
            done += 1
            if tree.finished:
                outcome.proved_at = done
        seconds += time.perf_counter() - started
        chosen = moves.index(tree.best_move(position.mover))
        outcome.right[budget] = chosen in position.right
        outcome.iterations[budget] = done
        outcome.seconds[budget] = seconds
    return outcome


def pct(hits: Sequence[bool]) -> str:
    return f"{100 * sum(hits) / len(hits):.0f}" if hits else "-"


def rate(outcomes: Sequence[Outcome], budget: int) -> str:
    seconds = sum(outcome.seconds[budget] for outcome in outcomes)
    iterations = sum(outcome.iterations[budget] for outcome in outcomes)
    return f"{iterations / seconds:.0f}" if seconds > 0 else "-"


def game_rows(name: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per budget for one game (none when its rules are absent)."""
    from players.mcts.model import model_of
    from server.games import is_bundled

    if not is_bundled(name) and not (CORPUS / f"{name}.kif").is_file():
        print(f"{name}: not in ../shared, skipped", file=sys.stderr)
        return []
    game = load(name)
    model = model_of(game)
    started = time.perf_counter()
    positions = endgames(
        model,
        model.key(game.initial_state()),
        count=args.positions,
        seed=f"{args.seed}/{name}",
        depth=args.depth,
        back=args.back,
        min_plies=args.min_plies,
    )
    print(
        f"{name}: {len(positions)} positions in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    with_solver: list[Outcome] = []
    without: list[Outcome] = []
    for index, position in enumerate(positions):
        seed = f"{args.seed}/{name}/{index}"
        with_solver.append(search(model, position, args.budgets, solver=True, seed=seed))
        without.append(search(model, position, args.budgets, solver=False, seed=seed))
    kinds = [position.kind for position in positions]
    rows = []
    for budget in sorted(args.budgets):

        def share(outcomes: list[Outcome], kind: str, budget: int = budget) -> str:
            return pct([o.right[budget] for o, k in zip(outcomes, kinds, strict=True) if k == kind])

        proofs = [
            o.proved_at
            for o, kind in zip(with_solver, kinds, strict=True)
            if kind == "win" and o.proved_at is not None and o.proved_at <= budget
        ]
        to_win = kinds.count("win")
        rows.append(
            {
                "game": name,
                "iterations": budget,
                "positions": len(positions),
                "to_win": to_win,
                "to_defend": kinds.count("defend"),
                "won_solver_pct": share(with_solver, "win"),
                "won_uct_pct": share(without, "win"),
                "defended_solver_pct": share(with_solver, "defend"),
                "defended_uct_pct": share(without, "defend"),
                "proved_pct": f"{100 * len(proofs) / to_win:.0f}" if to_win else "-",
                "proof_iterations_median": f"{statistics.median(proofs):.0f}" if proofs else "-",
                "solver_iterations_per_s": rate(with_solver, budget),
                "uct_iterations_per_s": rate(without, budget),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--positions", type=int, default=20, help="positions per game (20)")
    parser.add_argument(
        "--budgets",
        default="100,300,1000,3000",
        help="comma-separated iteration budgets (100,300,1000,3000)",
    )
    parser.add_argument("--depth", type=int, default=7, help="plies of the exact search (7)")
    parser.add_argument("--back", type=int, default=12, help="most plies before the end (12)")
    parser.add_argument(
        "--min-plies", type=int, default=3, help="fewest plies of a kept forced win (3)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--list-columns", action="store_true", help="print the column names, one a line, and exit"
    )
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    args.budgets = [int(budget) for budget in args.budgets.split(",")]
    started = time.monotonic()
    rows = []
    for name in args.games.split(","):
        rows += game_rows(name, args)
    print_rows(COLUMNS, rows)
    print(f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
