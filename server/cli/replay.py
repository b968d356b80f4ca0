"""``ggp replay LOG``: re-run a match log against its rules, step by step."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-run a match log against its rules and check every step",
        description="Replay a match log (ours or any server's, in the ggp.org match format): "
        "every joint move must be legal, every recorded state must be the state the rules "
        "compute, and the goals must be the rules' goals. The rules come from --game, else "
        "from the log (embedded rules, or the bundled game it names by gameName or "
        "gameMetaURL). Exit status: 0 consistent (also for an aborted or unfinished log), "
        "1 mismatch, 2 unusable log or rules.",
    )
    parser.add_argument("log", metavar="LOG", help="the match log (JSON)")
    parser.add_argument(
        "--game",
        metavar="NAME_OR_KIF",
        help="replay against these rules: a bundled game's name or a .kif file",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="print only the verdict (naming the first bad step); exit 1 on any mismatch",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.games import is_bundled
    from server.replay import LogUnreadable, RulesNotFound, render_replay, replay_file

    from ._common import EXIT_USAGE, check_rule_file, one_line

    if args.game is not None and not is_bundled(args.game) and Path(args.game).is_file():
        check_rule_file(Path(args.game))
    try:
        replay = replay_file(args.log, args.game)
    except (LogUnreadable, RulesNotFound) as error:
        print(f"ggp replay: {one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    if args.check:
        print(replay.verdict())
    else:
        sys.stdout.write(render_replay(replay))
    return 0 if replay.ok else 1
