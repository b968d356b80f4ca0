"""``ggp serve``: the hosting service (REST API, match queue, player registry) until stopped."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the hosting service: REST API, match queue, player registry",
        description="Serve the REST API, run queued matches and ping registered players until "
        "stopped (Ctrl-C or SIGTERM). The embedded SQLite database and the host key live in "
        "--data and are created on first start; --database (or GGP_DATABASE_URL) selects "
        "PostgreSQL, which must be at the latest schema (ggp db upgrade).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9000, help="port (default 9000)")
    from ._service_options import add_database_arguments

    add_database_arguments(parser)
    parser.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="the administrator's bearer token (default $GGP_ADMIN_TOKEN; generated and "
        "printed once on first start when neither is given)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, metavar="N", help="matches at once (default 16)"
    )
    parser.add_argument(
        "--requeue-interrupted",
        action="store_true",
        help="queue again the matches a stop interrupted (they are aborted either way)",
    )
    parser.add_argument(
        "--ping-seconds",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds between INFO pings of players (default 60)",
    )
    parser.add_argument(
        "--suspend-after",
        type=int,
        default=5,
        metavar="N",
        help="failed pings in a row that suspend a player (default 5; 0 never)",
    )
    parser.add_argument(
        "--no-player-checks",
        action="store_true",
        help="do not check players when they register, change URL or first connect",
    )
    parser.add_argument(
        "--require-passed-check",
        action="store_true",
        help="keep a player whose latest check failed out of matches",
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=2_000_000,
        metavar="BYTES",
        help="largest request body (default 2 MB)",
    )
    parser.add_argument(
        "--no-runner",
        action="store_true",
        help="PostgreSQL only: serve the API and pages, run no matches (ggp worker runs them)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="start the bundled players, register them and queue a few matches to watch",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:

    from pydantic import ValidationError

    from server.web import ServiceSettings
    from server.web.settings import default_data_dir

    try:
        settings = ServiceSettings(
            host=args.host,
            port=args.port,
            data_dir=Path(args.data) if args.data else default_data_dir(),
            database_url=args.database or os.environ.get("GGP_DATABASE_URL") or None,
            admin_token=args.admin_token or os.environ.get("GGP_ADMIN_TOKEN") or None,
            concurrency=args.concurrency,
            requeue_interrupted=args.requeue_interrupted,
            ping_seconds=args.ping_seconds,
            suspend_after=args.suspend_after,
            max_body_bytes=args.max_body,
            demo=args.demo,
            check_players=not args.no_player_checks,
            require_passed_check=args.require_passed_check,
            no_runner=args.no_runner,
        )
    except ValidationError as error:
        problem = error.errors()[0]
        field = ".".join(str(part) for part in problem["loc"]).replace("_", "-")
        option = {"data-dir": "data", "database-url": "database", "max-body-bytes": "max-body"}
        message = str(problem["msg"]).removeprefix("Value error, ")
        print(f"ggp serve: --{option.get(field, field)}: {message}", file=sys.stderr)
        return EXIT_USAGE
    from players.event_loop import run_event_loop

    return run_event_loop(_serve(settings))  # uvloop when installed, as `ggp player`


async def _serve(settings: object) -> int:
    import asyncio
    import contextlib
    import signal

    from aiohttp import web

    from server.errors import GgpError
    from server.gdl.collector import settle_after_start
    from server.store import redacted
    from server.web import Service, ServiceSettings

    assert isinstance(settings, ServiceSettings)
    service = Service(settings)
    try:
        await service.start()
    except GgpError as error:
        print(f"ggp serve: {error}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # a database that cannot be reached, a key that cannot be read
        where = redacted(settings.effective_database_url)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"ggp serve: cannot start on {where}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    runner = web.AppRunner(service.app(), access_log=None, shutdown_timeout=5.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
    except OSError as error:
        print(
            f"ggp serve: cannot listen on {settings.host}:{settings.port}: {error.strerror}",
            file=sys.stderr,
        )
        await runner.cleanup()
        await service.close()
        return EXIT_FAILED
    settle_after_start()
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    port = runner.addresses[0][1] if runner.addresses else settings.port  # --port 0: the one bound
    print(
        f"serving on http://{host}:{port}/  (API at /api, OpenAPI at /openapi.json)",
        flush=True,
    )
    if service.generated_admin_token:
        print(f"admin token (shown once, keep it): {service.generated_admin_token}", flush=True)
    if settings.demo:
        from server.web.demo import start_demo

        queued = await start_demo(service)
        print(
            f"demo: players random and legal registered, {len(queued)} matches queued", flush=True
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    print("stopping: running matches are aborted", file=sys.stderr, flush=True)
    await runner.cleanup()
    await service.close()
    return 0
