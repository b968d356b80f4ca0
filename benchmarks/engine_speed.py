"""Transitions per second of the rules engines, side by side, on the benchmark games.

    python benchmarks/engine_speed.py                 # the five benchmark games
    python benchmarks/engine_speed.py --runs 7 --seconds 2 ticTacToe
    python benchmarks/engine_speed.py --corpus        # which corpus games compile

A transition is one step of a uniformly random playout from the initial state:
the terminal test, every role's legal moves, a random joint move and the next state
(goals are read at the end of each playout). "setup s" is the CPU time to parse,
ground, optimise and generate code for the game. Each figure is the median over
``--runs`` runs of ``--seconds`` each, single thread, timed in CPU time of this
process (so that other work on a shared machine disturbs the figures less). Columns:

- interpreter: the interpreter through the engine API on ``State`` objects;
- compiled/state: the compiled engine through the same API;
- compiled/compact: the compiled engine's calls on compact (int) states, one call
  per query, as a search that keeps its own tree would use them;
- compiled/playout: the generated playout loop (legal, random move, next, terminal
  inside one generated function, recomputing only what each move changed), as
  bulk playouts use it;
- batched: many states advanced at once with NumPy (``--batch`` states per batch;
  a state that ends starts again from the initial state).

Games are the shared corpus's ticTacToe, connectFour and breakthrough (read from
``../shared/conformance/games``) and the bundled nineBoardTicTacToe and
double_tictactoe_dengji; a name or a ``.kif`` path may be given instead.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.gdl.compiled import CompiledEngine, CompileError  # noqa: E402
from server.gdl.parser import Rule, parse_gdl  # noqa: E402

CORPUS = ROOT.parent / "shared" / "conformance" / "games"
BUNDLED = ROOT / "server" / "games"
DEFAULT_GAMES = [
    "ticTacToe",
    "connectFour",
    "nineBoardTicTacToe",
    "breakthrough",
    "double_tictactoe_dengji",
]


def game_path(name: str) -> Path | None:
    """A game by corpus name, bundled name or path."""
    for candidate in (Path(name), BUNDLED / f"{name}.kif", CORPUS / f"{name}.kif"):
        if candidate.suffix == ".kif" and candidate.is_file():
            return candidate
    return None


def rate(playout: Callable[[random.Random], int], seconds: float, runs: int) -> float:
    """Median transitions per second over several timed runs."""
    rng = random.Random(1)
    playout(rng)  # warm-up
    rates = []
    for _ in range(runs):
        transitions = 0
        start = time.process_time()
        deadline = start + seconds
        while True:
            transitions += playout(rng)
            now = time.process_time()
            if now >= deadline:
                break
        rates.append(transitions / (now - start))
    return statistics.median(rates)


def state_playout(engine) -> Callable[[random.Random], int]:  # type: ignore[no-untyped-def]
    """A random playout through the engine API on State objects."""
    roles = list(engine.roles)

    def run(rng: random.Random) -> int:
        state = engine.initial_state()
        steps = 0
        while not engine.is_terminal(state):
            joint = []
            for role in roles:
                moves = engine.legal_moves(state, role)
                joint.append(moves[int(rng.random() * len(moves))])
            state = engine.next_state(state, joint)
            steps += 1
        for role in roles:
            engine.goal_values(state, role)
        return steps

    return run


def compact_playout(engine: CompiledEngine) -> Callable[[random.Random], int]:
    """A random playout through the compiled engine's calls on compact states."""
    terminal, legal, advance = engine.terminal_compact, engine.legal_indices, engine.next_compact

    def run(rng: random.Random) -> int:
        state = engine.initial_compact
        steps = 0
        while not terminal(state):
            joint = [moves[int(rng.random() * len(moves))] for moves in legal(state)]
            state = advance(state, joint)
            steps += 1
        engine.goals_compact(state)
        return steps

    return run


def loop_playout(engine: CompiledEngine) -> Callable[[random.Random], int]:
    """The generated playout loop."""

    def run(rng: random.Random) -> int:
        result = engine.playout(engine.initial_compact, rng)
        engine.goals_compact(result.state)
        return result.steps

    return run


def batched_playout(engine: CompiledEngine, size: int) -> Callable[[random.Random], int] | None:
    """Bulk playouts, ``size`` states per batch (None when unavailable)."""
    batch = getattr(engine, "batch", None)
    if batch is None:
        return None
    runner = batch(size)

    def run(rng: random.Random) -> int:
        return runner.run(steps=50, seed=rng.randrange(1 << 30))

    return run


def interpreter_for(rules: list[Rule]):  # type: ignore[no-untyped-def]
    """The interpreter engine, when it exists in this checkout."""
    try:
        from server.gdl.interpreter import Interpreter
    except ImportError:
        return None
    return Interpreter(rules)


COLUMNS = [
    "game",
    "setup s",
    "interpreter",
    "compiled/state",
    "compiled/compact",
    "compiled/playout",
    "batched",
]
"""The printed columns: set-up seconds, then state transitions per second of each mode."""


def benchmark(names: list[str], runs: int, seconds: float, batch: int, skip_interpreter: bool):
    print(f"median of {runs} runs of {seconds:g} s; batches of {batch} states")
    print(f"{COLUMNS[0]:<26}" + "".join(f"{c:>18}" for c in COLUMNS[1:]))
    for name in names:
        path = game_path(name)
        if path is None:
            print(f"{name:<26} (not found)")
            continue
        text = path.read_text(encoding="utf-8")
        rules = parse_gdl(text)
        setups = []
        engine = None
        for _ in range(3):
            start = time.process_time()
            try:
                engine = CompiledEngine.from_rules(parse_gdl(text), time_limit=60)
            except CompileError as error:
                print(f"{name:<26} does not compile: {error.reason}")
                break
            setups.append(time.process_time() - start)
        if engine is None:
            continue
        cells = [f"{statistics.median(setups):.3f}"]
        interpreter = None if skip_interpreter else interpreter_for(rules)
        modes: list[Callable[[random.Random], int] | None] = [
            state_playout(interpreter) if interpreter is not None else None,
            state_playout(engine),
            compact_playout(engine),
            loop_playout(engine),
            batched_playout(engine, batch),
        ]
        for mode in modes:
            cells.append("-" if mode is None else f"{rate(mode, seconds, runs):,.0f}")
        print(f"{name:<26}" + "".join(f"{c:>18}" for c in cells), flush=True)


def corpus_census(directory: Path, time_limit: float) -> None:
    """Compile every game of the corpus; print which fell back, why, and the totals."""
    compiled = 0
    reasons: dict[str, list[str]] = {}
    paths = sorted(directory.glob("*.kif"))
    for path in paths:
        rules = parse_gdl(path.read_text(encoding="utf-8"))
        start = time.thread_time()
        try:
            CompiledEngine.from_rules(rules, time_limit=time_limit)
        except CompileError as error:
            spent = time.thread_time() - start
            print(f"{path.stem:<36} falls back ({spent:.2f} s): {error.reason}", flush=True)
            reasons.setdefault(type(error).__name__, []).append(path.stem)
            continue
        compiled += 1
        print(f"{path.stem:<36} compiled in {time.thread_time() - start:.3f} s", flush=True)
    print(f"\n{compiled} of {len(paths)} games compiled within {time_limit} s of CPU time")
    for kind, games in sorted(reasons.items()):
        print(f"  {len(games)} fell back with {kind}: {', '.join(games)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", default=DEFAULT_GAMES)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (median)")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one run")
    parser.add_argument("--batch", type=int, default=4096, help="states per batch")
    parser.add_argument("--no-interpreter", action="store_true", help="skip the slow column")
    parser.add_argument("--corpus", action="store_true", help="compile-or-fall-back census")
    parser.add_argument("--time-limit", type=float, default=2.0, help="census time limit")
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.corpus:
        if not CORPUS.is_dir():
            print(f"no corpus at {CORPUS}")
            return 1
        corpus_census(CORPUS, args.time_limit)
        return 0
    benchmark(args.games, args.runs, args.seconds, args.batch, args.no_interpreter)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
