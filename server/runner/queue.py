"""The match queue: queued matches in the database, run by an in-process pool.

>>> runner = QueueRunner(store, key, RunnerSettings(concurrency=8))  # doctest: +SKIP
>>> await runner.start()        # recovers interrupted matches, then takes from the queue
>>> await runner.close()

The queue is the ``matches`` table itself: matches are claimed by moving them from
``queued`` to ``running`` in one conditional update (a page of them per transaction),
so nothing queued is lost when the process stops.  A player is never in more matches at once than its
``max_matches`` allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, Field

from server.errors import InvalidInput
from server.gdl import Game
from server.match import MatchConfig, MatchRunner, Player, default_step_limit, new_match_id
from server.match.channel import HttpChannel, PlayerChannel
from server.match.events import Observer
from server.match.transport import PlayerAddress
from server.protocol import Abort, render
from server.records import EndReason, MatchRecord, SubstitutePolicy
from server.store import MatchRow, MatchStatus, NotFound, PlayerRecord, StepErrors, Store, now_ms

from .logs import rebuild_record, signed_text
from .metrics import RunnerMetrics
from .observer import StoreObserver

log = logging.getLogger(__name__)

SERVER_RESTART = "server_restart"
"""The end reason of a match that was running when the service stopped."""
SERVER_STOP = "server_stop"
"""The end reason of a match cancelled because the service shut down."""
STORE_FAILED = "store_failed"
"""The end reason of a match whose steps could not be saved."""
PLAYER_UNAVAILABLE = "player_unavailable"
"""The end reason of a match a player could not join (unreachable or suspended)."""

TAKE_INTERVAL = 0.02
"""Seconds between two passes over the queue, at the least."""

PreMatchCheck = Callable[[Sequence[PlayerRecord]], Awaitable[str | None]]
"""Called before a match with its players; returns why it cannot start, or ``None``."""

Ended = tuple[MatchRow, list[StepErrors]]
"""An ended match as the runner stored it: its row and each stored step's errors."""

MatchEndListener = Callable[[MatchRow, Sequence[StepErrors] | None], None]
"""Told of each ended match: its row as stored and, when the runner kept them, each
stored step's errors and response times (``None``: read them from the store)."""

ChannelFor = Callable[[PlayerRecord], PlayerChannel | None]
"""How to reach a player other than by HTTP to its URL (an outbound bot), or ``None``."""


class RunnerSettings(BaseModel):
    """How the queue is run."""

    concurrency: int = Field(default=16, ge=1)
    """The most matches running at once in this process."""
    requeue_interrupted: bool = False
    """Queue a fresh copy of every match the last stop interrupted."""
    poll_seconds: float = Field(default=1.0, gt=0)
    """How often the queue is read when nothing wakes the runner."""


class MatchRequest(BaseModel):
    """What it takes to queue a match."""

    game: str
    players: list[str | None]
    start_clock: int = Field(default=10, ge=0, le=3600)
    play_clock: int = Field(default=5, ge=0, le=3600)
    policy: SubstitutePolicy = SubstitutePolicy.RANDOM
    step_limit: int | None = Field(default=None, ge=1, le=100_000)
    seed: int | None = None
    scramble: bool = False
    tournament: str | None = None
    schedule_key: str | None = None
    """The match's place in the tournament's schedule; unique per tournament."""


@dataclass
class _GameCache:
    games: dict[tuple[str, int], asyncio.Future[tuple[Game, int]]] = field(default_factory=dict)

    async def load(self, store: Store, name: str, version: int) -> tuple[Game, int]:
        """The game (parsed, compiled off the event loop) and its default step limit.

        Loaded once however many matches of it start at once: they await one load.
        """
        key = (name, version)
        loading = self.games.get(key)
        if loading is None:
            loading = self.games[key] = asyncio.ensure_future(self._load(store, name, version))
        try:
            return await asyncio.shield(loading)
        except Exception:
            if self.games.get(key) is loading:
                del self.games[key]  # the next match tries again
            raise

    @staticmethod
    async def _load(store: Store, name: str, version: int) -> tuple[Game, int]:
        record = await store.get_game(name, version)
        return await asyncio.to_thread(_prepare_game, record.rules_text)


async def queue_again(store: Store, match: MatchRow) -> MatchRow:
    """Queue a fresh copy of an interrupted ``match`` (same game version, players, clocks
    and policy), recording which match it replays."""
    return await store.queue_match(
        new_match_id("ggp", match.game_name),
        game_name=match.game_name,
        game_version=match.game_version,
        players=match.players,
        start_clock=match.start_clock,
        play_clock=match.play_clock,
        policy=match.policy,
        config=match.config,
        tournament_id=match.tournament_id,
        requeued_from=match.id,
    )


def _prepare_game(rules_text: str) -> tuple[Game, int]:
    game = Game.from_text(rules_text)
    return game, default_step_limit(game)


async def queue_match(
    store: Store,
    request: MatchRequest,
    *,
    match_id: str | None = None,
    audit_actor: str | None = None,
) -> MatchRow:
    """Check a match request against the game and the registry, then queue it (with
    ``audit_actor``, the audit line goes in the same transaction)."""
    game, known = await store.match_inputs(
        request.game, (name for name in request.players if name is not None)
    )
    if game is None:
        raise InvalidInput(f"no game named {request.game!r}", field="game")
    if len(request.players) != len(game.roles):
        raise InvalidInput(
            f"{game.name} has {len(game.roles)} roles ({', '.join(game.roles)}); "
            f"give one player per role, got {len(request.players)}",
            field="players",
        )
    seated: dict[str, int] = {}
    for index, name in enumerate(request.players):
        if name is None:
            continue
        if name not in known:
            raise InvalidInput(f"no player named {name!r}", field=f"players.{index}")
        if name in seated:
            raise InvalidInput(
                f"{name!r} is in seats {seated[name]} and {index}: a player takes one role "
                "per match (its messages carry the match id, not the role)",
                field=f"players.{index}",
            )
        seated[name] = index
    config = MatchConfig(
        start_clock=request.start_clock,
        play_clock=request.play_clock,
        policy=request.policy,
        step_limit=request.step_limit,
        seed=request.seed,
        scramble=request.scramble,
        tournament_name=request.tournament,
        match_id_prefix="ggp",
    )
    return await store.queue_match(
        match_id or new_match_id("ggp", game.name),
        game_name=game.name,
        game_version=game.version,
        players=request.players,
        start_clock=request.start_clock,
        play_clock=request.play_clock,
        policy=request.policy.value,
        config=config.model_dump(mode="json"),
        tournament_id=request.tournament,
        schedule_key=request.schedule_key,
        audit_actor=audit_actor,
    )


class QueueRunner:
    """Takes queued matches from the store and runs them, up to ``concurrency`` at once."""

    def __init__(
        self,
        store: Store,
        key: Ed25519PrivateKey,
        settings: RunnerSettings | None = None,
        *,
        metrics: RunnerMetrics | None = None,
        pre_match_check: PreMatchCheck | None = None,
        watchers: Sequence[Observer] = (),
        channel_for: ChannelFor | None = None,
    ) -> None:
        self.store = store
        self.key = key
        self.settings = settings or RunnerSettings()
        self.metrics = metrics or RunnerMetrics()
        self.pre_match_check = pre_match_check
        self.watchers = tuple(watchers)
        """More observers of every match (the live pages' hub), after the store's."""
        self.channel_for = channel_for or (lambda player: None)
        self.running: dict[str, MatchRunner] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._seats: Counter[str] = Counter()
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._games = _GameCache()
        self._closing = False
        self._held = 0
        """Matches being claimed, or held by `hold` until they start."""
        self.on_match_end: list[MatchEndListener] = []
        """Called (synchronously) after each match this runner took has ended."""

    # -- life cycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Deal with matches the last stop interrupted, then start taking from the queue."""
        await self.recover_interrupted()
        self._loop_task = asyncio.create_task(self._take_loop(), name="match-queue")

    @property
    def alive(self) -> bool:
        """True while the queue loop runs."""
        return self._loop_task is not None and not self._loop_task.done()

    def wake(self) -> None:
        """Read the queue now (a match was just queued)."""
        self._wake.set()

    def seats_taken(self, name: str) -> int:
        """How many of the player's seats running matches (and held seats) take now."""
        return self._seats[name]

    def hold_seats(self, name: str, count: int) -> None:
        """Take ``count`` of the player's seats outside any match (while it is checked)."""
        self._seats[name] += count

    def release_seats(self, name: str, count: int) -> None:
        """Give back seats taken by :meth:`hold_seats`; queued matches may take them."""
        self._seats[name] -= count
        self._wake.set()

    async def close(self) -> None:
        """Stop taking matches; abort the running ones (ABORT to their players)."""
        self._closing = True
        self._wake.set()
        if self._loop_task is not None:
            try:  # let the pass in flight finish rather than cancel it mid-write
                await asyncio.wait_for(asyncio.shield(self._loop_task), 10)
            except TimeoutError:
                self._loop_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._loop_task
        for match_id, task in list(self._tasks.items()):
            runner = self.running.get(match_id)
            if runner is not None:
                runner.abort()  # ABORT to its players; the match is kept as aborted
            else:
                task.cancel()  # not started yet: it stays running and a restart aborts it
        if self._tasks:
            await asyncio.wait(list(self._tasks.values()), timeout=10)

    # -- restart ---------------------------------------------------------------------

    async def recover_interrupted(self) -> list[str]:
        """Abort every match left ``running`` by a stop (reason ``server_restart``).

        ABORT goes to its players, the log so far is signed and kept, and with
        ``requeue_interrupted`` a fresh copy is queued.  Returns the aborted ids.
        """
        interrupted = await self.store.list_matches(status=MatchStatus.RUNNING, limit=100_000)
        aborted = []
        for match in interrupted:
            await self._send_abort(match)
            header = await self.store.header(match.id)
            signed = None
            message = "the service stopped while the match was running"
            if header is not None:
                record = rebuild_record(header, await self.store.steps(match.id))
                record.update(
                    isAborted=True,
                    isCompleted=False,
                    endReason=EndReason.ABORTED.value,
                    endMessage=f"{SERVER_RESTART}: {message}",
                )
                signed = signed_text(record, self.key)
            if await self.store.end_match(
                match.id,
                status=MatchStatus.ABORTED,
                end_reason=SERVER_RESTART,
                end_message=message,
                signed_record=signed,
                only_if=(MatchStatus.RUNNING,),
            ):
                aborted.append(match.id)
                log.warning("match %s was interrupted by a stop; aborted", match.id)
            if self.settings.requeue_interrupted and match.schedule_key is None:
                # a tournament's match is played again by its tournament (`key#2`)
                copy = await queue_again(self.store, match)
                log.warning("match %s queued again as %s", match.id, copy.id)
        return aborted

    async def _send_abort(self, match: MatchRow) -> None:
        async def one(name: str) -> None:
            try:
                player = await self.store.get_player(name)
                channel = self.channel_for(player) or HttpChannel(PlayerAddress.parse(player.url))
            except (NotFound, ValueError):
                return
            await channel.send(render(Abort(match_id=match.id)), time_limit=2.0)

        await asyncio.gather(*(one(name) for name in match.players if name))

    # -- aborting ----------------------------------------------------------------------

    async def abort(self, match_id: str) -> MatchRow:
        """Abort a queued or running match; an ended match is left as it is."""
        match = await self.store.get_match(match_id)
        runner = self.running.get(match_id)
        if runner is not None:
            runner.abort()
            task = self._tasks.get(match_id)
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
        elif match.status is MatchStatus.QUEUED:
            await self.store.end_match(
                match_id,
                status=MatchStatus.ABORTED,
                end_reason=EndReason.ABORTED.value,
                end_message="aborted while queued",
                only_if=(MatchStatus.QUEUED,),
            )
        return await self.store.get_match(match_id)

    # -- taking matches ------------------------------------------------------------------

    async def _take_loop(self) -> None:
        while not self._closing:
            try:
                await self._take_some()
            except Exception:
                log.exception("reading the match queue failed; trying again")
            self._wake.clear()
            if self._closing:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.poll_seconds)
            await asyncio.sleep(TAKE_INTERVAL)  # many wake-ups in a burst make one pass

    async def _take_some(self) -> None:
        free = self.settings.concurrency - self._taken
        if free <= 0:
            return
        # The oldest max(50, 4 * free) queued matches are considered, read a page at a
        # time: a pass that fills its free seats from the first page reads no more.
        cap = max(50, free * 4)
        page = max(8, free * 2)
        considered = 0
        skipped = 0  # still queued after this pass (a player busy): later pages start past them
        registered: dict[str, PlayerRecord] | None = None
        while free > 0 and considered < cap and not self._closing:
            wanted = min(page, cap - considered)
            queued = await self.store.list_matches(
                status=MatchStatus.QUEUED, limit=wanted, offset=skipped, oldest_first=True
            )
            if not queued:
                return
            if registered is None:
                registered = {player.name: player for player in await self.store.list_players()}
            chosen: list[tuple[MatchRow, list[PlayerRecord], list[str]]] = []
            for match in queued:
                if free <= 0 or self._closing or self._taken >= self.settings.concurrency:
                    break  # (matches held or started meanwhile by `hold` count too)
                considered += 1
                names = [name for name in match.players if name]
                missing = [name for name in names if name not in registered]
                if missing:
                    await self._end_unstarted(
                        match, PLAYER_UNAVAILABLE, f"no player named {missing[0]!r}"
                    )
                    continue
                seats = Counter(names)
                if any(
                    self._seats[name] + seats[name] > registered[name].max_matches for name in seats
                ):
                    skipped += 1
                    continue  # a player is busy in another match: it waits its turn
                self._seats.update(names)  # held while the claim is written
                self._held += 1  # counted while claiming, so `has_room` sees it
                free -= 1
                chosen.append((match, [registered[name] for name in names], names))
            # the page's matches are claimed in one transaction
            try:
                claimed = set(await self._claim([match.id for match, _, _ in chosen]))
            finally:
                self._held -= len(chosen)
            for match, players, names in chosen:
                if match.id not in claimed:
                    self._seats.subtract(names)  # taken by another runner meanwhile
                    free += 1
                    continue
                self._tasks[match.id] = asyncio.create_task(
                    self._run(match, players), name=f"match {match.id}"
                )
            if len(queued) < wanted:
                return

    async def _claim(self, match_ids: list[str]) -> list[str]:
        if not match_ids:
            return []
        try:
            return await self.store.claim_matches(match_ids)
        except Exception:
            # seats taken for the claim are given back by the caller
            log.exception("claiming %d matches failed", len(match_ids))
            return []

    @property
    def _taken(self) -> int:
        return len(self._tasks) + self._held

    def has_room(self, seated: Sequence[str | None], players: Sequence[PlayerRecord]) -> bool:
        """Whether this runner could start a match of these players now (its own room and
        the players' ``max_matches``)."""
        seats = Counter(name for name in seated if name)
        limits = {player.name: player.max_matches for player in players}
        return (
            not self._closing
            and self._taken < self.settings.concurrency
            and all(name in limits for name in seats)
            and all(self._seats[name] + seats[name] <= limits[name] for name in seats)
        )

    def hold(self, seated: Sequence[str | None], players: Sequence[PlayerRecord]) -> bool:
        """Keep room for a match about to be stored as running (then `start_queued` it
        with ``claimed``, or `release` the room); false when there is none."""
        if not self.has_room(seated, players):
            return False
        self._held += 1
        self._seats.update(name for name in seated if name)
        return True

    def release(self, seated: Sequence[str | None]) -> None:
        """Give back the room `hold` kept, for a match that was not stored."""
        self._held -= 1
        self._seats.subtract(name for name in seated if name)

    async def start_queued(
        self, match: MatchRow, players: Sequence[PlayerRecord], *, claimed: bool = False
    ) -> bool:
        """Start a match now: one `hold` kept room for and stored as running (``claimed``),
        or one just queued, claimed here if there is room for it and its players; false
        otherwise (the queue loop takes a queued match in its turn)."""
        names = [name for name in match.players if name]
        if claimed:
            self._held -= 1
        else:
            if not self.has_room(match.players, players):
                return False
            self._seats.update(names)
            self._held += 1
            try:
                started = await self.store.claim_match(match.id)
            finally:
                self._held -= 1
            if not started:
                self._seats.subtract(names)
                return False
        self._tasks[match.id] = asyncio.create_task(
            self._run(match, list(players)), name=f"match {match.id}"
        )
        return True

    async def _end_unstarted(self, match: MatchRow, reason: str, message: str) -> None:
        await self.store.end_match(
            match.id, status=MatchStatus.ABORTED, end_reason=reason, end_message=message
        )
        self.metrics.finished.labels(MatchStatus.ABORTED.value).inc()

    async def _run(self, match: MatchRow, players: list[PlayerRecord]) -> None:
        self.metrics.running.inc()
        ended: Ended | None = None
        try:
            ended = await self._play(match, players)
        except Exception as error:
            log.exception("match %s failed", match.id)
            await self.store.end_match(
                match.id,
                status=MatchStatus.ABORTED,
                end_reason=EndReason.ERROR.value,
                end_message=f"the server failed: {error}",
                only_if=(MatchStatus.RUNNING,),
            )
        finally:
            self.metrics.running.dec()
            self._seats.subtract(name for name in match.players if name)
            self._tasks.pop(match.id, None)
            self.running.pop(match.id, None)
            self._wake.set()
            row, steps = ended or (match, None)
            for listener in self.on_match_end:
                listener(row, steps)

    async def _with_connections_known(self, players: list[PlayerRecord]) -> list[PlayerRecord]:
        """``players`` read again where the check before the match may have been the first
        ping to show whether a player left at ``auto`` keeps connections open."""
        return [
            await self.store.get_player(player.name)
            if player.keep_alive == "auto" and player.keeps_connections is None
            else player
            for player in players
        ]

    async def _play(self, match: MatchRow, players: list[PlayerRecord]) -> Ended | None:
        """Play a match to its end and store it; returns what `_save_end` returns, or None
        when the match never started."""
        if self.pre_match_check is not None:
            problem = await self.pre_match_check(players)
            if problem is not None:
                await self.store.end_match(
                    match.id,
                    status=MatchStatus.ABORTED,
                    end_reason=PLAYER_UNAVAILABLE,
                    end_message=problem,
                    only_if=(MatchStatus.RUNNING,),
                )
                self.metrics.finished.labels(MatchStatus.ABORTED.value).inc()
                return None
            players = await self._with_connections_known(players)
        game, step_limit = await self._games.load(self.store, match.game_name, match.game_version)
        config = MatchConfig.model_validate(match.config)
        if config.step_limit is None:
            config = config.model_copy(update={"step_limit": step_limit})
        known = {player.name: player for player in players}
        seated = [
            None
            if name is None
            else Player(
                name,
                known[name].url,
                self.channel_for(known[name]),
                keep_alive=known[name].uses_kept_connections,
            )
            for name in match.players
        ]
        runner: MatchRunner | None = None

        def fail() -> None:
            if runner is not None:
                runner.abort()

        observer = StoreObserver(self.store, fail)
        runner = MatchRunner(
            game,
            seated,
            config,
            game_name=match.game_name,
            match_id=match.id,
            observers=[observer, self.metrics.watcher(), *self.watchers],
        )
        self.running[match.id] = runner
        # The match runs in a task of its own, so that aborting it never cancels this one.
        playing = asyncio.create_task(runner.run(), name=f"play {match.id}")
        try:
            record = await playing
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not playing.cancelled() or (current is not None and current.cancelling()):
                raise
            record = runner.record  # aborted just as it ended: keep what was played
        return await self._save_end(match, record, observer)

    async def _save_end(
        self, match: MatchRow, record: MatchRecord, observer: StoreObserver
    ) -> Ended | None:
        """Store how the match ended; returns the row as stored and the steps' errors (for
        the match's listeners), or None when the store does not hold all of it."""
        error = observer.error
        if error is not None:
            status, reason = MatchStatus.ABORTED, STORE_FAILED
            message: str | None = f"saving the match failed: {error}"
        elif record.is_completed:
            status, reason, message = MatchStatus.FINISHED, str(record.end_reason), None
        else:
            status = MatchStatus.ABORTED
            reason = SERVER_STOP if self._closing else str(record.end_reason or "aborted")
            message = record.end_message
        signed = signed_text(record, self.key)
        message = message or record.end_message
        goals, at = record.goal_values, now_ms()
        stored = await self.store.end_match(
            match.id,
            status=status,
            end_reason=reason,
            end_message=message,
            goals=goals,
            signed_record=signed,
            only_if=(MatchStatus.RUNNING,),
            finished_at=at,
        )
        self.metrics.finished.labels(status.value).inc()
        if not stored or error is not None:
            return None
        row = match.model_copy(
            update={
                "status": status,
                "end_reason": reason,
                "end_message": message,
                "goals": None if goals is None else list(goals),
                "finished_at": at,
            }
        )
        return row, observer.steps
