"""``ggp export``: the service's ended matches as a ggp.org archive (JSON Lines)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write ended matches as a ggp.org archive (JSON Lines)",
        description="Write every ended match (or those of a tournament, game or player) as "
        'one line of {"url": ..., "data": <signed match log>} each, the ggp.org archive format.',
    )
    from ._service_options import add_database_arguments

    add_database_arguments(parser)
    parser.add_argument("--tournament", help="only this tournament's matches")
    parser.add_argument("--game", help="only matches of this game")
    parser.add_argument("--player", help="only matches of this player")
    parser.add_argument(
        "--base-url",
        default="http://127.0.0.1:9000",
        help="the service's public address, for each line's url (default http://127.0.0.1:9000)",
    )
    parser.add_argument("--out", type=Path, metavar="FILE", help="write here (default stdout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ._service_options import database_url

    return asyncio.run(_export(args, database_url(args)))


async def _export(args: argparse.Namespace, url: str) -> int:
    import json

    from server.records.archive import dump_archive_line
    from server.store import Store, redacted

    store = Store(url)
    try:
        await store.open()
    except Exception as error:
        print(f"ggp export: cannot open {redacted(url)}: {error}", file=sys.stderr)
        return 1
    stream = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    count = 0
    try:
        offset = 0
        while True:
            batch = await store.list_matches(
                game=args.game,
                player=args.player,
                tournament=args.tournament,
                limit=500,
                offset=offset,
                oldest_first=True,
            )
            if not batch:
                break
            offset += len(batch)
            for match in batch:
                text = await store.signed_record(match.id)
                if text is None:
                    continue
                link = f"{args.base_url.rstrip('/')}/api/matches/{match.id}/log"
                stream.write(dump_archive_line(link, json.loads(text)) + "\n")
                count += 1
    finally:
        if args.out:
            stream.close()
        await store.close()
    print(f"{count} matches exported", file=sys.stderr)
    return 0
