"""Two versions of the engine timed at the same moment, one per core: the ratio of their speeds.

    python benchmarks/side_by_side.py --base ../old-checkout chineseCheckers6 kalaha_2009
    python benchmarks/side_by_side.py --base ../old-checkout --rounds 4 --seconds 8 chess

On a shared machine one process's figures swing by 20 to 30 % from one minute to the next,
more than most changes to the engine move them, and the two cores differ as well. So each
round runs the same random playouts through the public ``Game`` API in two processes at
once, the code in ``--base`` pinned to one core and the code in ``--new`` (this checkout by
default) to the other, and the next round swaps the cores: what the machine does to one
side it does to the other, and the cores' difference cancels out over an even number of
rounds. Both sides of a round take the same hash seed (the round's number): the order of
sets of names decides the order of the generated code, and with it a process's figure by
up to a tenth. Each side loads the game with ``--engine`` (the engine's modules compiled with mypyc
when that tree has them built, else its sources: the header names both), plays
``--warm-up`` seconds of CPU time, then counts transitions over ``--seconds`` of CPU time.

Per game it prints both sides' transitions a second (the mean over the rounds) and
``new/base``, the geometric mean of the rounds' ratios, with the lowest and highest round.
The state budget column gives what the interpreter's budget trials kept on each side in the
last round, base/new (``-`` for none needed).

Needs two cores (``os.sched_setaffinity``, Linux). Games: names from the shared conformance
corpus (``../shared/conformance/games``), bundled names, or ``.kif`` paths.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "conformance" / "games"

COLUMNS = ["game", "base/s", "new/s", "new/base", "lowest", "highest", "state budget"]


def child(tree: str, name: str, engine: str, warm_up: float, seconds: float, core: int) -> None:
    """One side of a round: pinned to ``core``, the code of ``tree``; prints a JSON line."""
    os.sched_setaffinity(0, {core})
    sys.path.insert(0, tree)
    import server
    from server.games import is_bundled, load_game
    from server.gdl import Game, native

    root = Path(server.__file__).resolve().parent.parent
    if root != Path(tree):
        raise SystemExit(f"imported the code of {root}, not of {tree}")

    if is_bundled(name):
        game = load_game(name, engine=engine)
    else:
        path = Path(name) if name.endswith(".kif") else CORPUS / f"{name}.kif"
        game = Game.from_file(path, engine=engine)
    rng = random.Random(1)
    clock = time.process_time

    def play(budget: float) -> int:
        transitions = 0
        deadline = clock() + budget
        while clock() < deadline:
            state = game.initial_state()
            while not game.is_terminal(state):
                moves = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
                state = game.next_state(state, moves)
                transitions += 1
            game.defined_goals(state)
        return transitions

    play(warm_up)
    started = clock()
    transitions = play(seconds)
    rate = transitions / (clock() - started)
    budget = getattr(game.engine, "budget_choice", None) or "-"
    print(json.dumps({"rate": rate, "budget": budget, "modules": native.summary()}))


def run_round(args: argparse.Namespace, name: str, number: int) -> tuple[dict, dict]:
    """Both sides of round ``number``, at the same time; each side's JSON line."""
    cores = (1, 0) if number % 2 else (0, 1)
    # the same hash seed on both sides of a round: the order of sets of names decides the
    # order of the generated code, and moves one process's figure by up to a tenth
    environment = {**os.environ, "PYTHONHASHSEED": str(number + 1)}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--child",
                str(Path(tree).resolve()),
                name,
                args.engine,
                str(args.warm_up),
                str(args.seconds),
                str(core),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for tree, core in zip((args.base, args.new), cores, strict=True)
    ]
    results = []
    for process in processes:
        out, err = process.communicate()
        if process.returncode != 0 or not out.strip():
            last = (err.strip().splitlines() or ["(no output)"])[-1]
            raise SystemExit(f"{name}: a side failed: {last}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results[0], results[1]


def positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def not_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def found(name: str) -> bool:
    """Whether ``name`` is a bundled game, a corpus game or a ``.kif`` file."""
    sys.path.insert(0, str(ROOT))
    from server.games import is_bundled

    if name.endswith(".kif"):
        return Path(name).is_file()
    return is_bundled(name) or (CORPUS / f"{name}.kif").is_file()


def even_rounds(text: str) -> int:
    value = int(text)
    if value < 2 or value % 2:
        raise argparse.ArgumentTypeError(f"must be an even number of 2 or more, not {text}")
    return value


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tree, name, engine, warm_up, seconds, core = sys.argv[2:8]
        child(tree, name, engine, float(warm_up), float(seconds), int(core))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*")
    parser.add_argument("--base", help="a checkout of the code to compare against")
    parser.add_argument("--new", default=str(ROOT), help="the code compared (default: this one)")
    parser.add_argument(
        "--engine", default="interpreter", choices=("interpreter", "compiled", "auto")
    )
    parser.add_argument("--seconds", type=positive, default=8.0, help="CPU s counted a side")
    parser.add_argument("--warm-up", type=not_negative, default=4.0, help="CPU s played first")
    parser.add_argument("--rounds", type=even_rounds, default=2, help="even: cores swap")
    parser.add_argument("--list-columns", action="store_true", help="print the columns and exit")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if not args.base or not args.games:
        parser.error("give --base and at least one game")
    for tree in (args.base, args.new):
        if not (Path(tree) / "server" / "gdl").is_dir():
            parser.error(f"{tree} is not a checkout of this project (no server/gdl)")
    missing = [name for name in args.games if not found(name)]
    if missing:
        parser.error(f"no such game: {', '.join(missing)} (a corpus or bundled name, or a .kif)")
    if len(os.sched_getaffinity(0)) < 2:
        parser.error("needs two cores to run the sides at the same time")

    print(
        f"{args.rounds} rounds of {args.seconds:g} s of CPU time a side after "
        f"{args.warm_up:g} s of warm-up, engine {args.engine}; base {args.base}, new {args.new}"
    )
    header = False
    for name in args.games:
        rounds = [run_round(args, name, number) for number in range(args.rounds)]
        if not header:
            print(f"base modules: {rounds[0][0]['modules']}")
            print(f"new modules: {rounds[0][1]['modules']}")
            print(
                "  ".join(
                    f"{column:>12}" if i else f"{column:<22}" for i, column in enumerate(COLUMNS)
                )
            )
            header = True
        ratios = [new["rate"] / base["rate"] for base, new in rounds]
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        base_rate = sum(base["rate"] for base, _ in rounds) / len(rounds)
        new_rate = sum(new["rate"] for _, new in rounds) / len(rounds)
        budgets = f"{rounds[-1][0]['budget']}/{rounds[-1][1]['budget']}"
        cells = [f"{base_rate:,.0f}", f"{new_rate:,.0f}", f"{mean:.2f}"]
        cells += [f"{min(ratios):.2f}", f"{max(ratios):.2f}", budgets]
        print(f"{name:<22}  " + "  ".join(f"{cell:>12}" for cell in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
