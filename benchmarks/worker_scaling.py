"""Matches run by 1, 2 and 4 `ggp worker` processes sharing one PostgreSQL.

For each number of workers (``--workers 1,2,4``): a fresh database, a service that runs
no matches itself (``no_runner``: the API and the sweeper), the worker processes, and
``--player-processes`` light players (``support/fast_players.py``).  ``--matches``
matches of ``--game`` are queued through the API at once; when every one has ended it
prints a row:

- matches per minute and steps per second over the run;
- CPU time per match of the workers (all of them) and of PostgreSQL (every server
  process of the cluster), read from ``/proc``; their ratio estimates how many busy
  workers one PostgreSQL core serves (``workers_per_db_core``);
- the claim latency: with the workers idle, ``--probes`` matches are queued one at a
  time and the time from the insert to the claim's commit (``started_at - queued_at``)
  is taken, median and 95th percentile;
- matches that did not finish (aborted or lost; 0 when nothing was lost).

PostgreSQL is a throwaway cluster started from the system's binaries (as the tests do),
or ``--database-base postgresql://user@host:port`` to create the databases in one that
runs already (its CPU is then not measured).

Usage: ``python benchmarks/worker_scaling.py [--workers 1,2,4] [--matches N]
[--concurrency C] [--game NAME] [--player-processes N]``; ``--list-columns`` prints the
column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the throwaway cluster helper of the tests

from support.fast_players import fast_player_process  # noqa: E402

COLUMNS = (
    "workers",
    "matches",
    "steps",
    "wall_s",
    "matches_per_minute",
    "steps_per_second",
    "worker_cpu_ms_per_match",
    "db_cpu_ms_per_match",
    "workers_per_db_core",
    "claim_ms_median",
    "claim_ms_p95",
    "not_finished",
)
TOKEN = "benchmark-token"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, in seconds (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / TICKS


def postgres_pids(data: Path | None) -> list[int]:
    """The postmaster of the cluster in ``data`` and its children."""
    if data is None:
        return []
    try:
        master = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    pids = [master]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == master:
                pids.append(int(stat.parent.name))
    return pids


@contextlib.contextmanager
def cluster(base: str | None) -> Iterator[tuple[str, Path | None]]:
    """(a base URL, the data folder when the cluster is ours)."""
    if base:
        yield base, None
        return
    from pgcluster import find_bindir, postgres_cluster

    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL binaries found: install postgresql or give --database-base")
    folder = Path(tempfile.mkdtemp(prefix="ggp-workers-bench-"))
    with postgres_cluster(bindir, folder) as url:
        yield url, folder / "data"


@contextlib.asynccontextmanager
async def served(url: str, folder: Path) -> AsyncIterator[tuple[object, str]]:
    """The service (no runner) on a loopback port; (service, base URL)."""
    from aiohttp import web

    from server.web import Service, ServiceSettings

    service = Service(
        ServiceSettings(
            data_dir=folder, database_url=url, admin_token=TOKEN, no_runner=True, ping_seconds=3600
        )
    )
    await service.start()
    runner = web.AppRunner(service.app(), access_log=None, shutdown_timeout=1)
    try:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        yield service, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
        await service.close()


def start_workers(url: str, count: int, concurrency: int, key: Path) -> list[subprocess.Popen[str]]:
    processes = []
    for index in range(count):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.cli",
                "worker",
                "--database",
                url,
                "--name",
                f"bench-{index}",
                "--concurrency",
                str(concurrency),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "GGP_HOST_KEY": str(key)},
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("worker "):
            raise RuntimeError(f"a worker did not start: {line!r}")
        processes.append(process)
    return processes


async def one_run(
    args: argparse.Namespace, base: str, data: Path | None, workers: int, number: int
) -> dict[str, object]:
    import aiohttp
    from pgcluster import create_database
    from sqlalchemy import func, select

    from server.catalog import seed_bundled_games
    from server.records.signing import load_or_create_host_key
    from server.store import MatchStatus, Store
    from server.store.tables import match_steps, matches

    url = create_database(base, f"bench_{os.getpid()}_{number}")
    store = Store(url)
    await store.open(upgrade=True)
    await seed_bundled_games(store)
    folder = Path(tempfile.mkdtemp(prefix="ggp-workers-bench-service-"))
    key = folder / "host_key.pem"
    load_or_create_host_key(key)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with contextlib.AsyncExitStack() as stack:
        _, api = await stack.enter_async_context(served(url, folder))
        session = await stack.enter_async_context(aiohttp.ClientSession(headers=headers))
        names = []
        for index in range(args.player_processes):
            player_url = await stack.enter_async_context(fast_player_process(index + 1))
            names.append(f"p{index + 1}")
            body = {"name": names[-1], "url": player_url, "max_matches": 1000}
            async with session.post(f"{api}/api/players", json=body) as response:
                assert response.status == 201, await response.text()
        processes = start_workers(url, workers, args.concurrency, key)
        try:
            pg = postgres_pids(data)
            db_before = sum(cpu_seconds(pid) for pid in pg)
            workers_before = sum(cpu_seconds(process.pid) for process in processes)
            started = time.monotonic()
            for index in range(args.matches):
                body = {
                    "game": args.game,
                    "players": [names[index % len(names)], names[(index + 1) % len(names)]],
                    "startclock": 5,
                    "playclock": 2,
                    "seed": 1,
                }
                async with session.post(f"{api}/api/matches", json=body) as response:
                    assert response.status == 201, await response.text()
            while True:
                counts = await store.count_matches()
                if counts[MatchStatus.QUEUED] + counts[MatchStatus.RUNNING] == 0:
                    break
                await asyncio.sleep(0.2)
            wall = time.monotonic() - started
            db_cpu = sum(cpu_seconds(pid) for pid in postgres_pids(data)) - db_before
            worker_cpu = sum(cpu_seconds(process.pid) for process in processes) - workers_before
            async with store.engine.connect() as connection:
                steps = int(
                    await connection.scalar(select(func.count()).select_from(match_steps)) or 0
                )
            claims = []
            for _ in range(args.probes):
                body = {"game": args.game, "players": names[:2], "startclock": 5, "playclock": 2}
                async with session.post(f"{api}/api/matches", json=body) as response:
                    probe = (await response.json())["id"]
                while True:
                    match = await store.get_match(probe)
                    if match.started_at is not None:
                        break
                    await asyncio.sleep(0.01)
                claims.append(match.started_at - match.queued_at)
                while True:  # one probe at a time: the workers are idle for the next
                    if (await store.get_match(probe)).status is not MatchStatus.RUNNING:
                        break
                    await asyncio.sleep(0.05)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:  # a loaded machine may take a while to stop them
                try:
                    process.wait(120)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
        async with store.engine.connect() as connection:
            finished = int(
                await connection.scalar(
                    select(func.count()).where(matches.c.status == MatchStatus.FINISHED.value)
                )
                or 0
            )
    await store.close()
    total = args.matches + args.probes
    per_match_worker = 1000 * worker_cpu / args.matches
    per_match_db = 1000 * db_cpu / args.matches if pg else float("nan")
    claims.sort()
    return {
        "workers": workers,
        "matches": args.matches,
        "steps": steps,
        "wall_s": f"{wall:.1f}",
        "matches_per_minute": f"{60 * args.matches / wall:.0f}",
        "steps_per_second": f"{steps / wall:.0f}",
        "worker_cpu_ms_per_match": f"{per_match_worker:.0f}",
        "db_cpu_ms_per_match": f"{per_match_db:.0f}",
        "workers_per_db_core": f"{per_match_worker / per_match_db:.1f}" if pg else "-",
        "claim_ms_median": f"{statistics.median(claims):.0f}",
        "claim_ms_p95": f"{claims[max(0, round(0.95 * len(claims)) - 1)]:.0f}",
        "not_finished": total - finished,
    }


async def benchmark(args: argparse.Namespace) -> list[dict[str, object]]:
    rows = []
    with cluster(args.database_base) as (base, data):
        for number, workers in enumerate(args.workers):
            row = await one_run(args, base, data, workers, number)
            print_rows([row], header=not rows)
            rows.append(row)
    return rows


def print_rows(rows: list[dict[str, object]], *, header: bool) -> None:
    widths = [max(len(name), 8) for name in COLUMNS]
    if header:
        print("  ".join(name.ljust(width) for name, width in zip(COLUMNS, widths, strict=True)))
    for row in rows:
        print(
            "  ".join(
                str(row[name]).ljust(width) for name, width in zip(COLUMNS, widths, strict=True)
            ),
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4", help="numbers of workers (default 1,2,4)")
    parser.add_argument("--matches", type=int, default=60, help="matches per run (default 60)")
    parser.add_argument("--concurrency", type=int, default=8, help="matches per worker at once")
    parser.add_argument("--game", default="tictactoex9", help="the game (default tictactoex9)")
    parser.add_argument("--player-processes", type=int, default=2, help="light player processes")
    parser.add_argument("--probes", type=int, default=20, help="matches of the claim latency probe")
    parser.add_argument("--database-base", metavar="URL", help="an existing PostgreSQL cluster")
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    try:
        args.workers = [int(part) for part in args.workers.split(",")]
    except ValueError:
        parser.error("--workers takes numbers separated by commas, e.g. 1,2,4")
    asyncio.run(benchmark(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
