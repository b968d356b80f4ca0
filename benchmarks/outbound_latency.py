"""Outbound bots: the latency the WebSocket path adds, and how many bots one service holds.

Starts a real ``Service`` (SQLite in a temporary folder) on a loopback port and, in
processes of their own, the bundled random player over HTTP, the same player connected
outbound (``ggp player random --server URL --token T``) and a relay
(``ggp connect --player URL``) in front of a second HTTP random player.  Then, in one run:

- sends ``--messages`` INFO messages one after another to each, the way the match loop
  sends every message (a channel's ``send`` with a deadline), and reports the median and
  99th percentile round trip of direct HTTP, of the outbound bot and of the relay, and
  the median the outbound path adds to a step against direct HTTP (``added_ms``);
- opens ``--connections`` outbound bot sockets from one client process (each with its
  own registered token), then sends INFO to every one at once and counts the answers:
  how many the service holds, how long connecting them took, the INFO round over all of
  them, and the service's memory per connection.

Prints one row.  Usage: ``python benchmarks/outbound_latency.py [--messages N]
[--connections N]``; ``--list-columns`` prints the column names, one per line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from support.table import print_row

COLUMNS = (
    "messages",
    "http_median_ms",
    "http_p99_ms",
    "outbound_median_ms",
    "outbound_p99_ms",
    "relay_median_ms",
    "relay_p99_ms",
    "added_ms",
    "connections",
    "held",
    "connect_s",
    "info_round_s",
    "answered",
    "kb_per_connection",
)
ADMIN = "benchmark-admin-token"


def _raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@contextlib.asynccontextmanager
async def process(*args: str, ready: str) -> AsyncIterator[str]:
    """A child process; yields the first line (stdout or stderr) that contains ``ready``."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert child.stdout is not None
    try:
        async with asyncio.timeout(120):
            while True:
                line = (await child.stdout.readline()).decode()
                if not line:
                    raise RuntimeError(f"{args} ended before saying {ready!r}")
                if ready in line:
                    break
        drain = asyncio.create_task(child.stdout.read())
        yield line.strip()
        drain.cancel()
    finally:
        if child.returncode is None:
            child.terminate()
        await child.wait()


async def hold_connections(server: str, tokens: list[str]) -> None:
    """The client process: one socket per token, answering INFO on each until killed."""
    import aiohttp

    from server.protocol.envelope import BotMessage, BotReply, dump_frame, parse_frame

    url = server.rstrip("/").replace("http://", "ws://") + "/api/bots/connect"

    async def one(session: aiohttp.ClientSession, token: str) -> None:
        async with session.ws_connect(url, headers={"Authorization": f"Bearer {token}"}) as ws:
            await ws.receive()  # the welcome
            async for message in ws:
                frame = parse_frame(message.data, BotMessage)
                reply = "( ( name held ) ( status available ) )"
                await ws.send_str(dump_frame(BotReply(id=frame.id, reply=reply)))

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        tasks = [asyncio.create_task(one(session, token)) for token in tokens]
        print(f"opening {len(tasks)}", flush=True)
        await asyncio.gather(*tasks, return_exceptions=True)


async def round_trips(channel: object, count: int) -> list[float]:
    from server.protocol import Info, render

    text = render(Info())
    times = []
    for _ in range(count):
        started = time.perf_counter()
        reply = await channel.send(text, time_limit=5.0)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - started) * 1000)
        if not reply.ok:
            raise RuntimeError(f"a message failed: {reply.message}")
    return times


def _p99(times: list[float]) -> float:
    return sorted(times)[max(0, round(0.99 * len(times)) - 1)]


async def benchmark(args: argparse.Namespace) -> dict[str, object]:
    from aiohttp import web

    from server.match import HttpChannel, PlayerAddress
    from server.store.bot_tokens import add_outbound_player
    from server.web import Service, ServiceSettings

    row: dict[str, object] = {"messages": args.messages, "connections": args.connections}
    with tempfile.TemporaryDirectory() as folder:
        service = Service(
            ServiceSettings(
                data_dir=Path(folder),
                admin_token=ADMIN,
                port=0,
                ping_seconds=3600.0,
                check_players=False,  # checks would run over every socket as it connects
            )
        )
        await service.start()
        runner = web.AppRunner(service.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        server = f"http://{host}:{port}"
        try:
            _, bot_token = await add_outbound_player(service.store, "outbound")
            _, relay_token = await add_outbound_player(service.store, "relayed")
            serve = ["-m", "players", "random", "--port", "0"]
            async with (
                process(*serve, ready="listening on") as direct_line,
                process(*serve, ready="listening on") as behind_line,
            ):
                direct = direct_line.split()[-1]
                behind = behind_line.split()[-1]
                bot = ["-m", "server.cli", "player", "random", "--server", server]
                relay = ["-m", "server.cli", "connect", "--server", server]
                relay += ["--journal", str(Path(folder) / "relay.jsonl")]
                async with (
                    process(*bot, "--token", bot_token, ready="connected to"),
                    process(*relay, "--token", relay_token, "--player", behind, ready="connected"),
                ):
                    http = HttpChannel(PlayerAddress.parse(direct))
                    channels = {
                        "http": http,
                        "outbound": service.bots.channel("outbound"),
                        "relay": service.bots.channel("relayed"),
                    }
                    for channel in channels.values():  # warm up
                        await round_trips(channel, 20)
                    times: dict[str, list[float]] = {name: [] for name in channels}
                    for _ in range(10):  # interleaved, so load changes hit every path alike
                        for name, channel in channels.items():
                            times[name] += await round_trips(channel, args.messages // 10)
            for name, values in times.items():
                row[f"{name}_median_ms"] = f"{statistics.median(values):.3f}"
                row[f"{name}_p99_ms"] = f"{_p99(values):.3f}"
            added = statistics.median(times["outbound"]) - statistics.median(times["http"])
            row["added_ms"] = f"{added:.3f}"
            row.update(await capacity(service, server, args.connections, Path(folder)))
        finally:
            await runner.cleanup()
            await service.close()
    return row


async def capacity(service: object, server: str, count: int, folder: Path) -> dict[str, object]:
    from server.match import ping_channel
    from server.store.bot_tokens import add_outbound_player

    hub = service.bots  # type: ignore[attr-defined]
    store = service.store  # type: ignore[attr-defined]
    tokens = [(await add_outbound_player(store, f"held{index}"))[1] for index in range(count)]
    tokens_file = folder / "tokens"
    tokens_file.write_text("\n".join(tokens))
    before = _rss_kb()
    started = time.perf_counter()
    args = [__file__, "--hold", server, str(tokens_file)]
    async with process(*args, ready="opening"):
        async with asyncio.timeout(300):
            while True:
                if sum(name.startswith("held") for name in hub.connections) >= count:
                    break
                await asyncio.sleep(0.05)
        connect_s = time.perf_counter() - started
        await asyncio.sleep(1.0)  # let the pings on connect settle
        held = sum(name.startswith("held") for name in hub.connections)
        started = time.perf_counter()
        results = await asyncio.gather(
            *(ping_channel(hub.channel(f"held{i}"), timeout=30) for i in range(count))
        )
        info_round_s = time.perf_counter() - started
        answered = sum(result.reachable for result in results)
        grown = _rss_kb() - before
    return {
        "held": held,
        "connect_s": f"{connect_s:.1f}",
        "info_round_s": f"{info_round_s:.2f}",
        "answered": answered,
        "kb_per_connection": f"{grown / max(count, 1):.1f}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="INFO round trips per path")
    parser.add_argument("--connections", type=int, default=1000, help="bot sockets to hold")
    parser.add_argument("--list-columns", action="store_true", help="print the column names")
    parser.add_argument("--hold", nargs=2, metavar=("SERVER", "TOKENS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list_columns:
        print("\n".join(COLUMNS))
        return 0
    _raise_file_limit()
    if args.hold is not None:
        with contextlib.suppress(KeyboardInterrupt):
            server, tokens_file = args.hold
            asyncio.run(hold_connections(server, Path(tokens_file).read_text().split()))
        return 0
    row = asyncio.run(benchmark(args))
    print_row(COLUMNS, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
