"""``ggp worker``: runs matches taken from the shared queue of a PostgreSQL database."""

from __future__ import annotations

import argparse
import os
import sys

EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="run matches from the shared queue of a PostgreSQL database",
        description="Take queued matches from the database that `ggp serve --database URL` "
        "uses and run them, until stopped (Ctrl-C or SIGTERM: its running matches are aborted "
        "and kept). Any number of workers on any number of machines may share one database; "
        "each signs its logs with the host key (GGP_HOST_KEY).",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="postgresql://user:password@host:port/name (default $GGP_DATABASE_URL)",
    )
    parser.add_argument(
        "--games",
        metavar="NAME,NAME",
        help="take only matches of these games (default: every game)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, metavar="N", help="matches at once (default 16)"
    )
    parser.add_argument("--name", help="the worker's name (default HOST-PID), unique per database")
    parser.add_argument(
        "--lost-after",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds without a heartbeat after which a worker counts as lost (default 10)",
    )
    parser.add_argument(
        "--check-alive",
        metavar="NAME",
        help="do not work: exit 0 when the worker NAME has sent a heartbeat within "
        "--lost-after seconds, else 1 (a health check)",
    )
    parser.add_argument(
        "--requeue-interrupted",
        action="store_true",
        help="queue again a match outside a tournament whose worker was lost",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from server.workers import WorkerSettings

    url = args.database or os.environ.get("GGP_DATABASE_URL")
    if not url:
        print("ggp worker: --database: give the PostgreSQL URL the service uses", file=sys.stderr)
        return EXIT_USAGE
    from server.store import is_sqlite

    try:
        sqlite = is_sqlite(url)
    except ValueError as error:
        print(f"ggp worker: --database: {error}", file=sys.stderr)
        return EXIT_USAGE
    if sqlite:
        print(
            "ggp worker: --database: workers share a PostgreSQL database; the embedded SQLite "
            "database is run by `ggp serve` itself",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.check_alive:
        from players.event_loop import run_event_loop

        return run_event_loop(_check_alive(url, args.check_alive, args.lost_after))
    games = [name.strip() for name in args.games.split(",") if name.strip()] if args.games else None
    options: dict[str, object] = {
        "games": games,
        "concurrency": args.concurrency,
        "lost_after": args.lost_after,
        "requeue_interrupted": args.requeue_interrupted,
    }
    if args.name:
        options["name"] = args.name
    try:
        settings = WorkerSettings.model_validate(options)
    except ValidationError as error:
        problem = error.errors()[0]
        field = str(problem["loc"][0]).replace("_", "-")
        print(f"ggp worker: --{field}: {problem['msg']}", file=sys.stderr)
        return EXIT_USAGE
    from players.event_loop import run_event_loop

    return run_event_loop(_work(url, settings))


async def _work(url: str, settings: object) -> int:
    import asyncio
    import contextlib
    import logging
    import signal

    from server.errors import GgpError
    from server.gdl.collector import settle_after_start
    from server.records.signing import load_or_create_host_key
    from server.registry import Registry, RegistrySettings
    from server.store import NotFound, Store, redacted
    from server.web.settings import ServiceSettings
    from server.workers import JobRunner, WorkerSettings

    assert isinstance(settings, WorkerSettings)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    store = Store(url)
    try:
        await store.open()
        for name in settings.games or ():
            await store.get_game(name)
        key = load_or_create_host_key(ServiceSettings().key_path)
    except NotFound as error:
        print(f"ggp worker: --games: {error}", file=sys.stderr)
        await store.close()
        return EXIT_USAGE
    except GgpError as error:
        print(f"ggp worker: {error}", file=sys.stderr)
        await store.close()
        return EXIT_FAILED
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp worker: cannot start on {redacted(url)}: {reason}", file=sys.stderr)
        await store.close()
        return EXIT_FAILED
    registry = Registry(store, RegistrySettings())  # pings players before a match; no rounds
    runner = JobRunner(store, key, settings, pre_match_check=registry.check_before_match)
    try:
        await runner.start()
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp worker: cannot start on {redacted(url)}: {reason}", file=sys.stderr)
        await store.close()
        return EXIT_FAILED
    settle_after_start()
    games = ", ".join(settings.games) if settings.games else "every game"
    print(
        f"worker {settings.name}: running up to {settings.concurrency} matches of {games}",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    waiting = asyncio.create_task(stop.wait())
    alive = asyncio.create_task(runner.wait_stopped())
    await asyncio.wait([waiting, alive], return_when=asyncio.FIRST_COMPLETED)
    failed = alive.done()
    waiting.cancel()
    alive.cancel()
    print(f"worker {settings.name}: stopping; running matches are aborted", file=sys.stderr)
    await runner.close()
    await store.close()
    return EXIT_FAILED if failed else 0


async def _check_alive(url: str, name: str, lost_after: float) -> int:
    from server.store import Store, now_ms, redacted
    from server.workers.claims import workers_table

    store = Store(url)
    try:
        await store.open()
        rows = {row["name"]: row for row in await workers_table(store)}
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp worker: cannot read {redacted(url)}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        await store.close()
    row = rows.get(name)
    if row is None:
        print(f"worker {name}: never started", file=sys.stderr)
        return EXIT_FAILED
    age = (now_ms() - row["heartbeat_at"]) / 1000
    if row["stopped_at"] is not None or age > lost_after:
        state = "stopped" if row["stopped_at"] is not None else f"silent for {age:.0f} s"
        print(f"worker {name}: {state}", file=sys.stderr)
        return EXIT_FAILED
    print(f"worker {name}: alive, {row['running']} of {row['concurrency']} matches running")
    return 0
