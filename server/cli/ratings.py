"""``ggp ratings recompute``: every rating again from the match archive in the database."""

from __future__ import annotations

import argparse
import asyncio
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ratings",
        help="recompute the players' ratings from the stored matches",
        description="Recompute every rating (all games, and each game) from the finished "
        "matches in the service's database, in the order they finished, and store them; "
        "prints whether they equal the ratings stored before.",
    )
    parser.add_argument("action", choices=("recompute",), help="what to do")
    from ._service_options import add_database_arguments

    add_database_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ._service_options import database_url

    return asyncio.run(_recompute(database_url(args)))


async def _recompute(url: str) -> int:
    from server.league import recompute_stored_ratings
    from server.store import Store, TournamentStore, redacted

    store = Store(url)
    try:
        await store.open()
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp ratings: cannot open {redacted(url)}: {reason}", file=sys.stderr)
        return 1
    try:
        count, ratings, same = await recompute_stored_ratings(TournamentStore(store))
    finally:
        await store.close()
    players = len({row.player for row in ratings})
    verdict = "equal to" if same else "different from"
    print(
        f"{count} matches, {players} players rated; the ratings are {verdict} those stored before"
    )
    for row in sorted((r for r in ratings if r.scope == "*"), key=lambda r: -(r.mu - 3 * r.sigma)):
        print(f"{row.player}\tmu {row.mu:.3f}\tsigma {row.sigma:.3f}\tmatches {row.matches}")
    return 0
