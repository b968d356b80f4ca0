"""Transitions per second of the rules engines, side by side, on the benchmark games.

    python benchmarks/engine_speed.py                 # the five benchmark games
    python benchmarks/engine_speed.py --runs 7 --seconds 2 ticTacToe
    python benchmarks/engine_speed.py --corpus --seconds 2   # every corpus game
    python benchmarks/engine_speed.py --corpus --start-clock 60 chess   # a 60 s budget
    python benchmarks/engine_speed.py --corpus --compile-aside --seconds 10 --warm-up 3

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

With ``--corpus``, every game of ``../shared/conformance/games`` (or the named ones)
is loaded with engine ``auto`` (within the compile budget a match's ``--start-clock``
buys, by default the engine's own limits) and measured once for ``--seconds`` of CPU
time per figure (see ``CORPUS_COLUMNS``); the totals give the set-up times per engine
and the reasons of the fallbacks; the ratio to GGP-Base's prover is printed where
``../shared/conformance/prover-speed.csv`` has the game's figure. With
``--compile-aside``, a game that falls back is compiled in another process meanwhile
(:mod:`server.gdl.compile_aside`) and switches when that engine is ready: its engine
cell then reads ``aside`` and the wall-clock seconds from the load to the switch, its
figures count the steps on both engines, and the other process's CPU time (not in the
figures, which time this process) is summed up at the end. Every figure pays its own
compile: the engine store (:mod:`server.gdl.engine_store`) is off unless
``--engine-store`` names one, and a game read from it reads ``stored``.

``--collector python`` (the default) keeps Python's own settings of the cyclic garbage
collector, as a script that imports the engine has them; ``--collector settled`` settles
it as the ``ggp`` processes do once they are up (:mod:`server.collector`: the start-up
heap frozen, the young generation collected every 20,000 allocations), which is how the
server's rule checks and the bundled players run the engine.

Games are the shared corpus's ticTacToe, connectFour and breakthrough (read from
``../shared/conformance/games``) and the bundled nineBoardTicTacToe and
double_tictactoe_dengji; a name or a ``.kif`` path may be given instead.
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.gdl import Game, GdlError, native  # noqa: E402
from server.gdl.collector import settle_after_start  # noqa: E402
from server.gdl.compile_aside import AsideCompile  # noqa: E402
from server.gdl.compile_budget import CompileBudget  # noqa: E402
from server.gdl.compiled import CompiledEngine, CompileError  # noqa: E402
from server.gdl.compiled.engine import AS_WRITTEN  # noqa: E402
from server.gdl.parser import Rule, parse_gdl  # noqa: E402

CORPUS = ROOT.parent / "shared" / "conformance" / "games"
REFERENCE = ROOT.parent / "shared" / "conformance" / "prover-speed.csv"
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


def corpus_paths(directory: Path, names: list[str]) -> list[Path]:
    """The games of ``directory``, or the named ones: first in ``directory``, then by
    :func:`game_path` (a name not found stays a path that is not a file)."""
    paths = sorted(directory.glob("*.kif"))
    if not names:
        return paths
    found = {path.stem: path for path in paths}
    return [found.get(name) or game_path(name) or Path(name) for name in names]


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
    """The interpreter engine, when it exists in this checkout, without its memo of states
    met before (where the checkout has one): the column compares the rules' work per
    transition with the compiled engine's, and random playouts of the small benchmark
    games come back to the same states often enough to switch the memo on."""
    try:
        from server.gdl.interpreter import Interpreter
    except ImportError:
        return None
    try:
        return Interpreter(rules, memo=False)
    except TypeError:  # a checkout from before the memo
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
    print(f"engine modules: {native.summary()}")
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


CORPUS_COLUMNS = [
    "game",
    "setup s",
    "engine",
    "failed compile s",
    "api/s",
    "playout/s",
    "prover/s",
    "ratio",
    "state budget",
]
"""The columns of ``--corpus``: CPU seconds to load the game with engine ``auto``, the
engine it chose, the CPU time of a failed compile attempt, transitions per second
through the public ``Game`` API and in the generated playout loop, the reference
prover's transitions per second, our public API's figure over it, and on the interpreter
the budget of state relations its timed trials kept ("-" where it needed none)."""


def reference_speeds(path: Path) -> dict[str, float]:
    """GGP-Base prover transitions per second by game; empty when the file is absent."""
    if not path.is_file():
        return {}
    speeds: dict[str, float] = {}
    for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines()):
        speeds[row["game"]] = float(row["prover_transitions_per_second"])
    return speeds


def timed_rate(
    step: Callable[[random.Random, Callable[[], bool]], int],
    seconds: float,
    warm_up: float | None = None,
) -> float:
    """Transitions per CPU second of ``step`` (called until ``seconds`` of CPU time
    have passed; it is given the test of that deadline and stops there, even inside a
    playout), after ``warm_up`` seconds of it (by default a fifth of ``seconds``)."""
    rng = random.Random(1)
    warmed = cpu_deadline_passed(
        time.process_time() + (seconds / 5 if warm_up is None else warm_up)
    )
    while not warmed():
        step(rng, warmed)
    transitions = 0
    start = time.process_time()
    passed = cpu_deadline_passed(start + seconds)
    while True:
        transitions += step(rng, passed)
        if passed():
            return transitions / (time.process_time() - start)


def cpu_deadline_passed(deadline: float) -> Callable[[], bool]:
    """A test of whether ``time.process_time()`` has reached ``deadline`` that seldom
    reads that clock.

    Reading the process's CPU clock is a system call: 0.5 µs with one core free, 7 µs
    with both busy. Read after every transition, it cost knightfight (56,000 transitions
    a second) about 4 % of its figure. The benchmark runs one thread, whose CPU time runs
    no faster than the wall clock. So the CPU clock is read only once the wall clock
    (``time.perf_counter``, 50 ns) says the deadline may have passed, and the wall
    deadline is moved on by what is left."""
    wall = time.perf_counter() + deadline - time.process_time()

    def passed() -> bool:
        nonlocal wall
        if time.perf_counter() < wall:
            return False
        left = deadline - time.process_time()
        wall = time.perf_counter() + left
        return left <= 0

    return passed


def api_steps(game: Game) -> Callable[[random.Random, Callable[[], bool]], int]:
    """Random playouts through the public API, cut when the deadline has ``passed``."""

    def run(rng: random.Random, passed: Callable[[], bool]) -> int:
        state = game.initial_state()
        steps = 0
        while not game.is_terminal(state):
            choices = [game.legal_moves(state, role) for role in game.roles]
            if not all(choices):  # a role without a legal move: the playout is stuck
                return steps
            state = game.next_state(state, [rng.choice(moves) for moves in choices])
            steps += 1
            if passed():
                return steps
        game.defined_goals(state)
        return steps

    return run


def loop_steps(engine: CompiledEngine) -> Callable[[random.Random, Callable[[], bool]], int]:
    """The generated playout loop (a playout is short enough not to be cut)."""

    def run(rng: random.Random, passed: Callable[[], bool]) -> int:
        return loop_playout(engine)(rng)

    return run


def corpus_speeds(
    directory: Path,
    reference: Path,
    seconds: float,
    names: list[str],
    start_clock: float | None = None,
    warm_up: float | None = None,
    compile_aside: bool = False,
) -> None:
    """Per corpus game: set-up, the engine ``auto`` picks, speeds, ratio to the prover;
    ``start_clock``: compile within what a match with that start clock allows;
    ``warm_up``: seconds played before each figure (by default a fifth of ``seconds``);
    ``compile_aside``: compile the games that fall back in another process meanwhile."""
    speeds = reference_speeds(reference)
    if not speeds:
        print(f"no reference figures at {reference}: the ratio is left out")
    budget = CompileBudget.for_start_clock(start_clock)
    limits = f"{budget.time_limit:g} s, {budget.max_ground_rules:,} ground rules" + (
        "" if start_clock is None else f": what a {start_clock:g} s start clock buys"
    )
    warming = f"{seconds / 5 if warm_up is None else warm_up:g} s"
    print(
        f"{seconds:g} s of CPU time per figure after {warming} of warm-up; "
        f"engine auto within {limits}"
        + (", games that fall back compiled aside" if compile_aside else "")
    )
    print(f"engine modules: {native.summary()}")
    widths = [34, 9, 12, 17, 12, 12, 11, 9, 14]
    print(
        "".join(
            f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
            for i, (c, w) in enumerate(zip(CORPUS_COLUMNS, widths, strict=True))
        )
    )
    totals = {"games": 0, "compiled": 0, "ratios": [], "failed": []}
    forms: dict[str, list[str]] = {}
    """Compiled games by how their rules were compiled, when not as written or raced."""
    setups: dict[str, list[float]] = {"compiled": [], "interpreter": []}
    reasons: Counter[str] = Counter()
    aside_cpu: list[float] = []
    """The other process's CPU time of each compile aside that switched its game."""
    for path in corpus_paths(directory, names):
        if not path.is_file():
            print(f"{path.stem:<34} (not found)", flush=True)
            continue
        start = time.process_time()
        try:
            game = Game.from_file(
                path,
                engine="auto",
                compile_time_limit=budget.time_limit,
                max_ground_rules=budget.max_ground_rules,
                compile_aside=compile_aside,
            )
        except GdlError as error:
            print(f"{path.stem:<34} refused: {error}", flush=True)
            continue
        setup = time.process_time() - start
        loaded = game.engine.name
        api = timed_rate(api_steps(game), seconds, warm_up)
        engine = game.engine
        switched = game.compile_aside if engine.name != loaded else None
        if switched is not None:
            aside_cpu.append(switched.cpu_seconds)
        loop = (
            timed_rate(loop_steps(engine), seconds, warm_up)
            if isinstance(engine, CompiledEngine)
            else None
        )
        prover = speeds.get(path.stem)
        ratio = api / prover if prover else None
        totals["games"] += 1
        totals["compiled"] += engine.name == "compiled"
        if ratio is not None:
            totals["ratios"].append((ratio, path.stem))
        setups[loaded].append(setup)
        if isinstance(engine, CompiledEngine):
            form = engine.form
            if engine.form_race is not None:
                form += " after a race with the other form"
            if form != AS_WRITTEN:
                forms.setdefault(form, []).append(path.stem)
        if game.fallback_reason is not None:
            totals["failed"].append(game.failed_compile_seconds)
            reasons[_reason_kind(game.fallback_reason)] += 1
        cells = [
            path.stem,
            f"{setup:.2f}",
            _engine_cell(game, switched),
            f"{game.failed_compile_seconds:.2f}" if game.fallback_reason else "-",
            f"{api:,.0f}",
            "-" if loop is None else f"{loop:,.0f}",
            "-" if prover is None else f"{prover:,.4g}",
            "-" if ratio is None else f"{ratio:.3g}",
            getattr(engine, "budget_choice", None) or "-",
        ]
        print(
            "".join(
                f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ),
            flush=True,
        )
        # A game's generated code is a cycle (its functions refer to their namespace):
        # free it now, so that the process stays the size of the largest game and the
        # collection does not fall inside the next game's figures.
        del game, engine
        gc.collect()
    games, compiled = totals["games"], totals["compiled"]
    print(f"\n{compiled} of {games} games on the compiled engine")
    if aside_cpu:
        print(
            f"{len(aside_cpu)} of them compiled aside, in another process: "
            f"median {statistics.median(aside_cpu):.2f} s of its CPU time, "
            f"longest {max(aside_cpu):.2f} s (not in the figures)"
        )
    for form, stems in sorted(forms.items()):
        print(f"compiled {form}: {', '.join(stems)}")
    for name, times in setups.items():
        if times:
            print(
                f"set-up on the {name}: median {statistics.median(times):.2f} s, "
                f"longest {max(times):.2f} s"
            )
    if reasons:
        print(
            "fallbacks by reason: "
            + "; ".join(f"{reason} ({count})" for reason, count in reasons.most_common())
        )
    failed = sorted(totals["failed"])  # type: ignore[arg-type]
    if failed:
        print(
            f"failed compile attempts: median {statistics.median(failed):.2f} s, "
            f"longest {failed[-1]:.2f} s"
        )
    ratios = sorted(totals["ratios"])  # type: ignore[arg-type]
    if ratios:
        below = [f"{name} ({ratio:.2g})" for ratio, name in ratios if ratio < 10]
        print(
            f"ratio to the prover: lowest {ratios[0][0]:.3g} ({ratios[0][1]}); "
            f"{len(below)} of {len(ratios)} under 10: {', '.join(below) or 'none'}"
        )


def _engine_cell(game: Game, switched: AsideCompile | None) -> str:
    """The engine a game played on: ``stored`` when read from the engine store."""
    if switched is not None:
        return f"aside {switched.seconds or 0:.1f}s"
    return "stored" if game.engine_stored else game.engine.name


def _reason_kind(reason: str) -> str:
    """A fallback reason without the details that differ from game to game."""
    return re.sub(r"\(.*\)|'[^']*'|\bat \S+", "...", reason).strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", default=DEFAULT_GAMES)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (median)")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one run")
    parser.add_argument("--batch", type=int, default=4096, help="states per batch")
    parser.add_argument("--no-interpreter", action="store_true", help="skip the slow column")
    parser.add_argument(
        "--corpus",
        action="store_true",
        help="every corpus game (or the named ones): set-up, engine, speeds, prover ratio",
    )
    parser.add_argument("--corpus-dir", type=Path, default=CORPUS, help="games for --corpus")
    parser.add_argument(
        "--reference", type=Path, default=REFERENCE, help="prover figures (CSV) for --corpus"
    )
    parser.add_argument(
        "--start-clock",
        type=float,
        default=None,
        help="--corpus: compile within what a match with this start clock allows "
        "(default: the engine's own limits)",
    )
    parser.add_argument(
        "--warm-up",
        type=float,
        default=None,
        help="--corpus: seconds of random playouts before each figure (default: a fifth of "
        "--seconds; the prover's reference figures had 3)",
    )
    parser.add_argument(
        "--compile-aside",
        action="store_true",
        help="--corpus: compile the games that fall back in another process meanwhile, and "
        "switch to that engine when it is ready",
    )
    parser.add_argument(
        "--engine-store",
        type=Path,
        default=None,
        help="--corpus: take compiled engines from this engine store and keep them there "
        "(default: none, so that every figure pays its own compile)",
    )
    parser.add_argument(
        "--collector",
        choices=["python", "settled"],
        default="python",
        help="the cyclic garbage collector: Python's settings (default), or settled as the "
        "ggp processes settle it once up",
    )
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(CORPUS_COLUMNS if args.corpus else COLUMNS))
        return 0
    os.environ["GGP_ENGINE_STORE"] = str(args.engine_store) if args.engine_store else "off"
    if args.collector == "settled":
        settle_after_start()
    young, middle, oldest = gc.get_threshold()
    print(
        f"collector: {args.collector} (thresholds {young:,}, {middle}, {oldest};"
        f" {gc.get_freeze_count():,} objects frozen)"
    )
    if args.corpus:
        if not args.corpus_dir.is_dir():
            print(f"no corpus at {args.corpus_dir}")
            return 1
        names = [] if args.games == DEFAULT_GAMES else args.games
        corpus_speeds(
            args.corpus_dir,
            args.reference,
            args.seconds,
            names,
            args.start_clock,
            args.warm_up,
            args.compile_aside,
        )
        return 0
    benchmark(args.games, args.runs, args.seconds, args.batch, args.no_interpreter)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
