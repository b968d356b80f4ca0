"""The player registry: scheduled INFO pings, status, history, suspension after failures.

>>> registry = Registry(store, RegistrySettings(ping_seconds=60))  # doctest: +SKIP
>>> await registry.start()      # pings every player on a schedule
>>> await registry.ping("random")
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from server.match import HttpChannel, PlayerAddress, PlayerChannel, PlayerStatus, ping_channel
from server.store import PlayerRecord, Store, now_ms
from server.store.player_checks import latest_checks

log = logging.getLogger(__name__)


class RegistrySettings(BaseModel):
    """How players are watched."""

    ping_seconds: float = Field(default=60.0, gt=0)
    """Seconds between two rounds of pings."""
    ping_timeout: float = Field(default=3.0, gt=0)
    """Seconds a player has to answer INFO."""
    suspend_after: int = Field(default=5, ge=0)
    """Failed pings in a row that suspend a player (0: never)."""
    fresh_seconds: float = Field(default=10.0, ge=0)
    """Before a match, a player that answered a ping this recently is not pinged again."""
    require_passed_check: bool = False
    """Keep a player whose latest check failed out of matches (off: a report only)."""


class Registry:
    """Pings registered players and keeps what it finds in the store."""

    def __init__(
        self,
        store: Store,
        settings: RegistrySettings | None = None,
        *,
        channel_for: Callable[[PlayerRecord], PlayerChannel | None] | None = None,
    ) -> None:
        """``channel_for`` reaches players that are not pinged by HTTP (outbound bots)."""
        self.store = store
        self.channel_for = channel_for or (lambda player: None)
        self.settings = settings or RegistrySettings()
        self._task: asyncio.Task[None] | None = None
        self._in_flight: dict[str, asyncio.Task[PlayerRecord]] = {}
        self._stop = asyncio.Event()
        self.first_round_done = asyncio.Event()
        """Set once the round of pings at :meth:`start` is done."""

    async def start(self) -> None:
        """Start the scheduled pings."""
        self._stop.clear()
        self._task = asyncio.create_task(self._loop(), name="player-pings")

    @property
    def alive(self) -> bool:
        """Whether the scheduled pings are running (started and not stopped or crashed)."""
        return self._task is not None and not self._task.done()

    async def close(self) -> None:
        """Stop the pings after the round in flight (never mid-write)."""
        self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 10)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    async def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                await self.ping_all()
            except Exception:
                log.exception("a round of player pings failed")
            self.first_round_done.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.settings.ping_seconds)

    async def ping_all(self) -> list[PlayerRecord]:
        """Ping every player that is not suspended and not in a running match, all at once.

        A player in a match is left alone: many players (GGP-Base's, or any HTTP server
        that handles one connection at a time, all the more on a kept connection) answer
        nothing else until the match's message in hand is done, and a ping that waits
        would count as a failure against a player that is doing its job."""
        playing = await self.store.players_in_running_matches()
        players = [
            player
            for player in await self.store.list_players()
            if not player.suspended and player.name not in playing
        ]
        return list(await asyncio.gather(*(self.ping(player) for player in players)))

    async def ping(self, player: PlayerRecord) -> PlayerRecord:
        """Ping one player and keep the result (status, latency, history, suspension)."""
        channel = self.channel_for(player)
        try:
            if channel is None:
                channel = HttpChannel(PlayerAddress.parse(player.url), keep_alive=True)
        except ValueError as error:
            return await self.store.record_ping(
                player.name,
                status=PlayerStatus.UNREACHABLE.value,
                latency_ms=None,
                message=str(error),
                reply=None,
                suspend_after=self.settings.suspend_after,
            )
        result = await ping_channel(channel, timeout=self.settings.ping_timeout)
        return await self.store.record_ping(
            player.name,
            status=result.status.value,
            latency_ms=result.latency_ms,
            message=result.message,
            reply=result.raw_reply,
            suspend_after=self.settings.suspend_after,
            keeps_connections=result.keeps_connections,
        )

    async def _shared_ping(self, player: PlayerRecord) -> PlayerRecord:
        """One ping per player at a time: matches starting together share its answer."""
        task = self._in_flight.get(player.name)
        if task is None:
            task = asyncio.create_task(self.ping(player))
            self._in_flight[player.name] = task
            task.add_done_callback(lambda _: self._in_flight.pop(player.name, None))
        return await asyncio.shield(task)

    async def _failed_check(self, players: Sequence[PlayerRecord]) -> str | None:
        """Why a player may not play: its latest finished check failed (``None``: none did)."""
        checks = await latest_checks(self.store, players=[player.name for player in players])
        for player in players:
            check = checks.get(player.name)
            if check is not None and check.passed is False:
                failed = [str(item.get("name")) for item in check.items if not item.get("passed")]
                what = ", ".join(failed) if failed else (check.error or "not checked")
                return f"player {player.name} failed its latest check ({what})"
        return None

    async def check_before_match(self, players: Sequence[PlayerRecord]) -> str | None:
        """Ping a match's players; why the match cannot start, or ``None`` when it can.

        A suspended or unreachable player keeps the match from starting (and, with
        ``require_passed_check``, one whose latest check failed); a player that
        says it is busy is still invited (it may be busy with this very server).  A
        player that answered a ping in the last ``fresh_seconds`` is not pinged again.
        """
        for player in players:
            if player.suspended:
                return f"player {player.name} is suspended: {player.suspended_reason}"
        if self.settings.require_passed_check:
            problem = await self._failed_check(players)
            if problem is not None:
                return problem
        now = now_ms()
        stale = [
            player
            for player in players
            if player.status not in (PlayerStatus.AVAILABLE.value, PlayerStatus.BUSY.value)
            or player.last_ping_at is None
            or now - player.last_ping_at > self.settings.fresh_seconds * 1000
        ]
        checked = await asyncio.gather(*(self._shared_ping(player) for player in stale))
        for player in checked:
            if player.status == PlayerStatus.UNREACHABLE.value:
                return f"player {player.name} did not answer INFO"
        return None
