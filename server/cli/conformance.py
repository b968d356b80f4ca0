"""``ggp conformance DIR``: check the rules engine against reference traces."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ._common import positive_float, positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="check the rules engine against reference traces",
        description=(
            "For every trace in DIR/traces, load DIR/games/NAME.kif, replay every playout "
            "and check states, legal moves, terminal flags, goals and illegal-move probes."
        ),
    )
    parser.add_argument("folder", metavar="DIR", type=Path, help="folder with games/ and traces/")
    parser.add_argument("names", nargs="*", metavar="GAME", help="only these games")
    parser.add_argument(
        "--engine",
        choices=("interpreter", "compiled", "auto"),
        default="interpreter",
        help="engine to check (default: interpreter); with 'compiled', games that do not "
        "compile are reported as skipped, with the reason",
    )
    parser.add_argument(
        "--jobs", type=positive_int, default=os.cpu_count() or 1, help="games checked in parallel"
    )
    parser.add_argument(
        "--time-limit",
        type=positive_float,
        default=120.0,
        help="seconds allowed per game, kept by killing the check (default 120)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.gdl import conformance

    if args.folder.exists() and not args.folder.is_dir():
        print(f"ggp conformance: {args.folder} is not a folder", file=sys.stderr)
        return 2
    try:
        results = conformance.run(
            args.folder,
            names=args.names or None,
            jobs=args.jobs,
            limit=args.time_limit,
            engine=args.engine,
        )
        passed = failed = skipped = 0
        for result in results:
            print(result.line(), flush=True)
            if result.skipped:
                skipped += 1
            elif result.passed:
                passed += 1
            else:
                failed += 1
    except FileNotFoundError as error:
        print(f"ggp conformance: {error}", file=sys.stderr)
        return 2
    if args.names and passed + failed + skipped < len(set(args.names)):
        print("ggp conformance: some named games have no trace", file=sys.stderr)
        return 2
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0
