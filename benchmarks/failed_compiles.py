"""What a failed compile attempt costs before the interpreter takes over, game by game.

    python benchmarks/failed_compiles.py                        # every corpus game
    python benchmarks/failed_compiles.py --loads 5 chess alexChess
    python benchmarks/failed_compiles.py --start-clock 60       # a 60 s start clock's budget
    python benchmarks/failed_compiles.py --list-columns         # the columns of its rows

Each game of ``../shared/conformance/games`` (or each named one: a corpus name, a bundled
name or a ``.kif`` path) is loaded with engine ``auto``. A game that compiles is counted
and left. A game that falls back to the interpreter is loaded ``--loads`` times in all,
and gets a row: the best and the median of ``Game.failed_compile_seconds`` (CPU time of
the loading thread from the start of the attempt to the fallback), and why it fell back.
A process remembers the games it failed to compile and does not try them again; those
memories are forgotten before each load here, so that every load makes the attempt, and
the engine store (:mod:`server.gdl.engine_store`), which remembers them for every process,
is off.

The best of several loads is the figure to compare: on a shared machine one load can
take half as long again as the next. The summary gives the games that fall back, the
median and the longest of their best figures, and the games whose best is over
``--target`` seconds (the heavy-games issue's 0.5 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine_speed import CORPUS, corpus_paths  # noqa: E402

os.environ["GGP_ENGINE_STORE"] = "off"  # every load makes the attempt

from server.gdl import Game, GdlError  # noqa: E402
from server.gdl.compile_budget import CompileBudget  # noqa: E402
from server.gdl.compile_memo import COMPILE_MEMO  # noqa: E402

COLUMNS = ["game", "best s", "median s", "loads", "why it fell back"]
FIGURE_WIDTHS = [8, 10, 7]
REASON_WIDTH = 100


def row(cells: list[str]) -> str:
    """One line of the table: the game's name, its figures right-aligned, then why."""
    name, *figures, reason = cells
    aligned = "".join(cell.rjust(width) for cell, width in zip(figures, FIGURE_WIDTHS, strict=True))
    return f"{name:<34}{aligned}  {reason}"


def failed_compile_costs(path: Path, budget: CompileBudget, loads: int) -> tuple[list[float], str]:
    """The failed compile seconds of each load (none when the game compiles), and why it
    fell back."""
    seconds: list[float] = []
    reason = ""
    for _ in range(loads):
        COMPILE_MEMO.forget_failures()
        game = Game.from_file(
            path,
            engine="auto",
            compile_time_limit=budget.time_limit,
            max_ground_rules=budget.max_ground_rules,
        )
        if game.fallback_reason is None:
            return [], ""
        seconds.append(game.failed_compile_seconds)
        reason = game.fallback_reason
    return seconds, reason


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="names or paths (default: the whole corpus)")
    parser.add_argument("--loads", type=int, default=3, help="loads of a game that falls back")
    parser.add_argument("--corpus-dir", type=Path, default=CORPUS, help="the games' folder")
    parser.add_argument(
        "--start-clock",
        type=float,
        default=None,
        help="compile within what a match with this start clock allows "
        "(default: the engine's own limits)",
    )
    parser.add_argument("--target", type=float, default=0.5, help="seconds a failure may cost")
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.loads < 1:
        parser.error("--loads must be at least 1")
    if not args.games and not args.corpus_dir.is_dir():
        print(f"no corpus at {args.corpus_dir}")
        return 1
    budget = CompileBudget.for_start_clock(args.start_clock)
    print(
        f"engine auto within {budget.time_limit:g} s and {budget.max_ground_rules:,} ground "
        f"rules; a game that falls back is loaded {args.loads} times"
    )
    print(row(COLUMNS))
    compiled = 0
    best: dict[str, float] = {}
    for path in corpus_paths(args.corpus_dir, args.games):
        if not path.is_file():
            print(row([path.stem, "-", "-", "-", "not found"]), flush=True)
            continue
        try:
            seconds, reason = failed_compile_costs(path, budget, args.loads)
        except GdlError as error:
            refusal = f"refused: {str(error).splitlines()[0]}"[:REASON_WIDTH]
            print(row([path.stem, "-", "-", "-", refusal]), flush=True)
            continue
        if not seconds:
            compiled += 1
            continue
        best[path.stem] = min(seconds)
        figures = [f"{min(seconds):.3f}", f"{statistics.median(seconds):.3f}"]
        print(row([path.stem, *figures, str(len(seconds)), reason[:REASON_WIDTH]]), flush=True)
    print(f"{compiled} compiled, {len(best)} fell back")
    if best:
        longest = max(best, key=best.__getitem__)
        over = sorted(name for name, value in best.items() if value > args.target)
        print(
            f"failed compile, best of {args.loads} loads: median "
            f"{statistics.median(best.values()):.3f} s, longest {best[longest]:.3f} s "
            f"({longest}), {len(over)} over {args.target:g} s"
            + (f": {', '.join(over)}" if over else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
