"""Rewrite the playthrough files of the bundled games.

    python -m tests.games.regenerate              # every bundled game
    python -m tests.games.regenerate tictactoex9  # just one

Run it only when a change to a game's rules (or to the engine) is intended, then read
the diff of tests/games/playthroughs/ before committing it.
"""

from __future__ import annotations

import argparse
import sys

from .playthrough import DIRECTORY, SETTINGS, path_of, record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.games.regenerate", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME", help="games to rewrite (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in SETTINGS]
    if unknown:
        parser.error(
            f"no playthrough settings for {', '.join(unknown)}; known: {', '.join(SETTINGS)}"
        )
    DIRECTORY.mkdir(exist_ok=True)
    for name in args.names or list(SETTINGS):
        path = path_of(name)
        path.write_text(record(name), encoding="utf-8")
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
