"""``ggp db upgrade`` / ``ggp db status``: the database schema, as a named step."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "db",
        help="upgrade the database schema, or show its revision",
        description="Manage the service's database schema (Alembic migrations). `upgrade` "
        "brings it to the latest revision; `status` prints the revision it is at.",
    )
    parser.add_argument("action", choices=("upgrade", "status"), help="what to do")
    from ._service_options import add_database_arguments

    add_database_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ._service_options import database_url

    return asyncio.run(_run(args.action, database_url(args)))


async def _run(action: str, url: str) -> int:
    from pathlib import Path

    from server.store import Store, redacted

    try:
        store = Store(url)
        if store.is_sqlite:
            Path(store.driver_url.split(":///", 1)[1]).parent.mkdir(parents=True, exist_ok=True)
        await store.open(upgrade=action == "upgrade")
    except Exception as error:
        if action == "status" and type(error).__name__ == "SchemaOutOfDate":
            print(f"{redacted(url)}: {error}")
            return 1
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp db: cannot open {redacted(url)}: {reason}", file=sys.stderr)
        return 1
    current, head = await store.revision()
    await store.close()
    print(f"{redacted(url)}: at revision {current} (latest {head})")
    return 0
