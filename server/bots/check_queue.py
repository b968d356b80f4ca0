"""The service's player checks: the checker run in the background, its reports kept.

>>> checks = PlayerChecks(store, reach)              # doctest: +SKIP
>>> row = await checks.request("mybot", "registered")  # answers at once: the check is queued
>>> await checks.wait("mybot")                         # doctest: +SKIP

A check runs when a player is registered or its URL changes, when an outbound bot
first connects, and when its owner or the administrator asks.  At most
``concurrency`` checks run at once and one per player; a request never waits for the
check.  A check plays a few short matches with the player, so while it runs it holds
the player's seats in the match queue (``max_matches``), after waiting for the
player's running matches to end: a real match never finds the player busy with the
checker, nor the checker with a real match.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from server.match import PlayerChannel
from server.store import NotFound, PlayerRecord, Store
from server.store.bot_tokens import OUTBOUND
from server.store.player_checks import (
    CheckRow,
    add_check,
    finish_check,
    get_check,
    interrupt_unfinished,
    latest_checks,
    start_check,
)

from .checker import CheckerError, check_channel, check_player
from .report import CheckReport

log = logging.getLogger(__name__)

OUTBOUND_TARGET = "outbound"
"""The ``target`` of a check made over an outbound bot's socket."""


class SeatKeeper(Protocol):
    """The match queue's count of each player's taken seats."""

    def seats_taken(self, name: str) -> int: ...

    def hold_seats(self, name: str, count: int) -> None: ...

    def release_seats(self, name: str, count: int) -> None: ...


Reach = Callable[[PlayerRecord], PlayerChannel | str | None]
"""How to reach a player for a check: a channel (outbound bots), a reason it cannot be
reached now (a bot that is not connected), or ``None`` for its URL."""


@dataclass(frozen=True)
class CheckSettings:
    """How the service checks players."""

    concurrency: int = 2
    start_clock: int = 5
    play_clock: int = 2
    wait_seconds: float = 600.0
    """How long a check waits for the player's running matches to end."""


def target_of(player: PlayerRecord) -> str:
    return OUTBOUND_TARGET if player.connection == OUTBOUND else player.url


class PlayerChecks:
    """Runs the checker against players in the background and keeps every report."""

    def __init__(
        self,
        store: Store,
        reach: Reach,
        settings: CheckSettings | None = None,
        *,
        seats: Callable[[], SeatKeeper | None] = lambda: None,
    ) -> None:
        self.store = store
        self.reach = reach
        self.settings = settings or CheckSettings()
        self.seats = seats
        self._limit = asyncio.Semaphore(self.settings.concurrency)
        self._running: dict[str, tuple[asyncio.Future[int], asyncio.Task[None]]] = {}
        """The check of each player in flight: its id once queued, and its task."""

    async def recover(self) -> int:
        """Mark checks a stop left unfinished as interrupted; how many."""
        return await interrupt_unfinished(self.store)

    async def close(self) -> None:
        """Stop the checks in flight (they are kept as interrupted)."""
        tasks = [task for _, task in self._running.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await interrupt_unfinished(self.store)

    def pending(self, name: str) -> bool:
        """True while a check of ``name`` is queued or running."""
        return name in self._running

    async def request(self, name: str, trigger: str) -> CheckRow:
        """Queue a check of ``name`` (unless one is queued or running: that one is answered).

        Raises :class:`~server.store.NotFound` for an unknown player."""
        running = self._running.get(name)
        if running is None:
            queued: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            task = asyncio.create_task(self._run(queued, name, trigger), name=f"check {name}")
            running = self._running[name] = (queued, task)
            task.add_done_callback(lambda _: self._running.pop(name, None))
        return await get_check(self.store, await asyncio.shield(running[0]))

    async def request_if_new_connection(self, name: str) -> CheckRow | None:
        """An outbound bot connected: check it unless it was checked over its socket already."""
        latest = (await latest_checks(self.store, status=None, players=[name])).get(name)
        if name in self._running or (latest is not None and latest.target == OUTBOUND_TARGET):
            return None
        return await self.request(name, "connected")

    async def wait(self, name: str) -> None:
        """Until the check of ``name`` in flight (if any) has ended."""
        running = self._running.get(name)
        if running is not None:
            await asyncio.gather(running[1], return_exceptions=True)

    async def _run(self, queued: asyncio.Future[int], name: str, trigger: str) -> None:
        try:
            player = await self.store.get_player(name)
            row = await add_check(
                self.store,
                name,
                trigger=trigger,
                target=target_of(player),
                start_clock=self.settings.start_clock,
                play_clock=self.settings.play_clock,
            )
        except BaseException as error:  # cancelled too: whoever asked must not wait forever
            queued.set_exception(
                error if isinstance(error, Exception) else RuntimeError("the service is stopping")
            )
            if not isinstance(error, Exception):
                raise
            return
        queued.set_result(row.id)
        check_id = row.id
        try:
            async with self._limit:
                await self._check(check_id, name)
        except asyncio.CancelledError:
            raise
        except NotFound:
            return  # the player was removed meanwhile (its checks went with it)
        except Exception as error:
            log.exception("the check of %s failed", name)
            with contextlib.suppress(Exception):
                await finish_check(
                    self.store, check_id, passed=False, items=[], error=f"the check failed: {error}"
                )

    async def _check(self, check_id: int, name: str) -> None:
        player = await self.store.get_player(name)
        keeper = self.seats()
        seats = player.max_matches
        if keeper is not None and not await self._wait_for_free_seats(keeper, name):
            why = f"the player stayed in matches for {self.settings.wait_seconds:g} s"
            await finish_check(self.store, check_id, passed=False, items=[], error=why)
            return
        if keeper is not None:
            keeper.hold_seats(name, seats)
        try:
            player = await self.store.get_player(name)  # its URL as it is now
            await start_check(self.store, check_id, target=target_of(player))
            try:
                report = await self._report(player)
            except CheckerError as error:
                await finish_check(self.store, check_id, passed=False, items=[], error=str(error))
                return
            await finish_check(
                self.store,
                check_id,
                passed=report.passed,
                items=[item.model_dump(mode="json") for item in report.items],
                latency_ms=report.latency_ms,
            )
            log.info("check of %s: %s", name, "passed" if report.passed else "failed")
        finally:
            if keeper is not None:
                keeper.release_seats(name, seats)

    async def _wait_for_free_seats(self, keeper: SeatKeeper, name: str) -> bool:
        """Wait until no match holds a seat of ``name``; False past ``wait_seconds``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.wait_seconds):
                while keeper.seats_taken(name) > 0:  # noqa: ASYNC110 - counts, no event
                    await asyncio.sleep(0.2)
        return keeper.seats_taken(name) <= 0

    async def _report(self, player: PlayerRecord) -> CheckReport:
        start, play = self.settings.start_clock, self.settings.play_clock
        reached = self.reach(player)
        if isinstance(reached, str):
            raise CheckerError(reached)
        if reached is None:
            return await check_player(player.url, start_clock=start, play_clock=play)
        label = f"outbound bot {player.name}"
        return await check_channel(reached, label, start_clock=start, play_clock=play)
