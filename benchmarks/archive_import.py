"""``ggp import`` of an archive: how long storing and replaying one match takes.

Plays ``--matches`` random matches of ``--game`` (a bundled game, or a ``.kif`` file)
with the rules embedded in each record, as ggp.org's archives and other servers write
them, dumps them as one archive (JSON Lines), and imports it with ``ggp import`` into a
fresh SQLite database, in this process. Every line is checked and replayed against the
rules it carries, so each one loads the game: the figures show what a load costs when
the process compiles the rules for every line, and when it keeps the compiled engine.

Prints one row: the game, the engine it runs on, the matches, their steps, the CPU time
of the whole import and per match, and the wall time.

Usage: ``python benchmarks/archive_import.py [--game NAME_OR_KIF] [--matches N]``;
``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.table import print_row  # noqa: E402

from server.cli import main  # noqa: E402
from server.games import game_text, load_game  # noqa: E402
from server.gdl import Game, GdlError  # noqa: E402
from server.gdl.terms import to_ggp  # noqa: E402
from server.records import MatchRecord  # noqa: E402
from server.records.archive import dump_archive_line  # noqa: E402

COLUMNS = (
    "game",
    "engine",
    "matches",
    "steps",
    "import cpu s",
    "cpu ms per match",
    "wall s",
)
STEP_LIMIT = 200
"""Steps after which a random match is cut short (its record ends unfinished)."""


def load(name_or_path: str) -> tuple[Game, str]:
    """The game and its rules text."""
    path = Path(name_or_path)
    if path.suffix == ".kif":
        text = path.read_text(encoding="utf-8")
        return Game.from_text(text), text
    return load_game(name_or_path), game_text(name_or_path)


def random_record(game: Game, rules: str, number: int, rng: random.Random) -> dict:
    """A finished random match of ``game`` as a ggp.org record with the rules embedded."""
    state = game.initial_state()
    states, moves, times = [state.to_ggp()], [], [1_000]
    while not game.is_terminal(state) and len(moves) < STEP_LIMIT:
        joint = [rng.choice(game.legal_moves(state, role)) for role in game.roles]
        state = game.next_state(state, joint)
        moves.append([to_ggp(move) for move in joint])
        states.append(state.to_ggp())
        times.append(times[-1] + 1_000)
    over = game.is_terminal(state)
    rule_goals = [game.goal(state, role) for role in game.roles] if over else None
    goals = [goal or 0 for goal in rule_goals] if rule_goals else []
    record = MatchRecord(
        match_id=f"bench.{number}",
        start_clock=10,
        play_clock=2,
        game_rulesheet=rules,
        game_role_names=list(game.roles),
        states=states,
        moves=moves,
        state_times=times,
        errors=[["" for _ in game.roles] for _ in states],
        goal_values=goals,
        rule_goal_values=rule_goals,
        is_completed=over,
    )
    return json.loads(record.model_dump_json(by_alias=True, exclude_none=True))


def run(game_name: str, game: Game, rules: str, matches: int) -> dict[str, object]:
    rng = random.Random(1)
    records = [random_record(game, rules, number, rng) for number in range(matches)]
    steps = sum(len(record["moves"]) for record in records)
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "archive.jsonl"
        archive.write_text(
            "".join(
                dump_archive_line(f"http://bench.example.org/{n}/", record) + "\n"
                for n, record in enumerate(records)
            ),
            encoding="utf-8",
        )
        database = f"sqlite:///{Path(folder) / 'ggp.db'}"
        with contextlib.redirect_stdout(io.StringIO()):
            if main(["db", "upgrade", "--database", database]) != 0:
                raise SystemExit("cannot create the database")
        output = io.StringIO()
        cpu, wall = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(output):
            status = main(["import", str(archive), "--database", database])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if status != 0 or output.getvalue().count("replay ok") != matches:
        raise SystemExit(f"the import did not replay every match:\n{output.getvalue()}")
    values = (
        Path(game_name).stem,
        game.engine.name,
        matches,
        steps,
        f"{cpu:.2f}",
        f"{1000 * cpu / matches:.1f}",
        f"{wall:.2f}",
    )
    return dict(zip(COLUMNS, values, strict=True))


def main_args(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="nineBoardTicTacToe", help="bundled game or .kif")
    parser.add_argument("--matches", type=int, default=50, help="matches in the archive")
    parser.add_argument("--list-columns", action="store_true", help="print the columns")
    args = parser.parse_args(argv)
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    if args.matches < 1:
        parser.error("--matches must be at least 1")
    try:
        game, rules = load(args.game)
    except (LookupError, OSError, GdlError) as error:
        parser.error(f"cannot load --game {args.game}: {error}")
    print_row(COLUMNS, run(args.game, game, rules, args.matches))
    return 0


if __name__ == "__main__":
    raise SystemExit(main_args())
