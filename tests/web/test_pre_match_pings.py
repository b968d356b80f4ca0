"""Before a match the registry pings its players: who is pinged, and what stops a match."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from players.serve import url_of
from server.registry import Registry, RegistrySettings
from server.store import PlayerRecord, Store
from server.store.player_checks import add_check, finish_check


class InfoPlayer:
    """A player that answers INFO with a fixed status, after a delay, and counts the pings."""

    def __init__(self, status: str = "available", delay: float = 0.0) -> None:
        self.status = status
        self.delay = delay
        self.pings = 0
        self.url = ""

    async def answer(self, request: web.Request) -> web.Response:
        body = await request.text()
        assert body.strip().lower() == "( info )", body
        self.pings += 1
        await asyncio.sleep(self.delay)
        return web.Response(text=f"( ( status {self.status} ) )", content_type="text/acl")


@contextlib.asynccontextmanager
async def info_players(*players: InfoPlayer) -> AsyncIterator[None]:
    """Serve each player on a loopback port of its own."""
    runners = []
    try:
        for player in players:
            app = web.Application()
            app.router.add_post("/", player.answer)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            runners.append(runner)
            player.url = url_of(runner.addresses[0])
        yield
    finally:
        for runner in runners:
            await runner.cleanup()


@contextlib.asynccontextmanager
async def opened_store(folder: Path) -> AsyncIterator[Store]:
    store = Store(f"sqlite:///{folder / 'ggp.db'}")
    await store.open(upgrade=True)
    try:
        yield store
    finally:
        await store.close()


async def registered(store: Store, **urls: str) -> list[PlayerRecord]:
    return [await store.add_player(name, url) for name, url in urls.items()]


async def test_a_player_heard_from_lately_is_not_pinged_again(tmp_path: Path) -> None:
    first, second = InfoPlayer(), InfoPlayer()
    async with opened_store(tmp_path) as store, info_players(first, second):
        players = await registered(store, first=first.url, second=second.url)
        registry = Registry(store, RegistrySettings(fresh_seconds=60))

        assert await registry.check_before_match(players) is None
        assert (first.pings, second.pings) == (1, 1)

        pinged = [await store.get_player(player.name) for player in players]
        assert [player.status for player in pinged] == ["available", "available"]
        assert await registry.check_before_match(pinged) is None
        assert (first.pings, second.pings) == (1, 1)  # answered a moment ago

        # a record read before the ping knows of no answer: its player is pinged again
        assert await registry.check_before_match([players[0], pinged[1]]) is None
        assert (first.pings, second.pings) == (2, 1)

        eager = Registry(store, RegistrySettings(fresh_seconds=0))
        await asyncio.sleep(0.01)
        assert await eager.check_before_match(pinged) is None
        assert (first.pings, second.pings) == (3, 2)


async def test_a_busy_player_is_invited_and_one_that_does_not_answer_stops_the_match(
    tmp_path: Path,
) -> None:
    busy = InfoPlayer("busy")
    async with opened_store(tmp_path) as store, info_players(busy):
        players = await registered(store, busy=busy.url, gone="http://127.0.0.1:9/")
        registry = Registry(store, RegistrySettings(ping_timeout=2))

        assert await registry.check_before_match(players[:1]) is None
        assert (await store.get_player("busy")).status == "busy"
        # a busy answer is fresh: the player is not pinged again before the next match
        assert await registry.check_before_match([await store.get_player("busy")]) is None
        assert busy.pings == 1

        assert await registry.check_before_match(players) == "player gone did not answer INFO"
        gone = await store.get_player("gone")
        assert (gone.status, gone.failures) == ("unreachable", 1)
        # an unreachable player is pinged again whatever the time of its last ping
        assert await registry.check_before_match([gone]) == "player gone did not answer INFO"
        assert (await store.get_player("gone")).failures == 2


async def test_a_suspended_player_stops_the_match_without_a_ping(tmp_path: Path) -> None:
    idle, banned = InfoPlayer(), InfoPlayer()
    async with opened_store(tmp_path) as store, info_players(idle, banned):
        await registered(store, idle=idle.url, banned=banned.url)
        suspended = await store.update_player(
            "banned", {"suspended": True, "suspended_reason": "cheated"}
        )
        registry = Registry(store, RegistrySettings())

        problem = await registry.check_before_match([await store.get_player("idle"), suspended])

        assert problem == "player banned is suspended: cheated"
        assert (idle.pings, banned.pings) == (0, 0)
        assert [player.name for player in await registry.ping_all()] == ["idle"]
        assert (idle.pings, banned.pings) == (1, 0)


async def test_matches_starting_together_share_one_ping_of_a_player(tmp_path: Path) -> None:
    slow = InfoPlayer(delay=0.3)
    async with opened_store(tmp_path) as store, info_players(slow):
        (player,) = await registered(store, slow=slow.url)
        registry = Registry(store, RegistrySettings())

        answers = await asyncio.gather(*(registry.check_before_match([player]) for _ in range(3)))

        assert answers == [None, None, None]
        assert slow.pings == 1
        assert len(await store.ping_history("slow")) == 1
        # once answered, the next match's ping is a new one (it is not kept in flight)
        assert await registry.check_before_match([player]) is None
        assert slow.pings == 2


async def test_a_player_whose_url_does_not_read_is_unreachable_with_the_reason(
    tmp_path: Path,
) -> None:
    async with opened_store(tmp_path) as store:
        (player,) = await registered(store, odd="ftp://example.org/")
        registry = Registry(store, RegistrySettings(suspend_after=1))

        assert await registry.check_before_match([player]) == "player odd did not answer INFO"

        odd = await store.get_player("odd")
        (ping,) = await store.ping_history("odd")
        assert (odd.status, ping.status, ping.latency_ms) == ("unreachable", "unreachable", None)
        assert "ftp" in ping.message
        assert odd.suspended and odd.suspended_reason is not None
        assert odd.suspended_reason.startswith("1 failed pings in a row; last: ")


async def test_with_passed_checks_required_a_player_whose_latest_check_failed_stays_out(
    tmp_path: Path,
) -> None:
    good, bad, unchecked = InfoPlayer(), InfoPlayer(), InfoPlayer()
    async with opened_store(tmp_path) as store, info_players(good, bad, unchecked):
        players = await registered(store, good=good.url, bad=bad.url, unchecked=unchecked.url)
        registry = Registry(store, RegistrySettings(require_passed_check=True))

        async def checked(
            name: str, passed: bool, items: list[dict[str, object]], error: str | None = None
        ) -> None:
            check = await add_check(
                store, name, trigger="registered", target="", start_clock=5, play_clock=2
            )
            await finish_check(store, check.id, passed=passed, items=items, error=error)

        await checked("good", True, [{"name": "info", "passed": True}])
        await checked("bad", False, [], "nobody listening")
        assert await registry.check_before_match(players) == (
            "player bad failed its latest check (nobody listening)"
        )
        await checked("bad", False, [])
        assert await registry.check_before_match(players) == (
            "player bad failed its latest check (not checked)"
        )
        failing_items = [
            {"name": "info", "passed": True},
            {"name": "stop", "passed": False},
            {"name": "abort", "passed": False},
        ]
        await checked("bad", False, failing_items)
        assert await registry.check_before_match(players) == (
            "player bad failed its latest check (stop, abort)"
        )
        assert (good.pings, bad.pings, unchecked.pings) == (0, 0, 0)  # refused before pinging
        # by default a failed check is a report only
        assert await Registry(store, RegistrySettings()).check_before_match(players) is None
        # a player never checked, and one whose latest check passed, may play
        assert await registry.check_before_match([players[0], players[2]]) is None
        await checked("bad", True, [{"name": "info", "passed": True}])
        assert await registry.check_before_match(players) is None
