"""The hosting service as one object: settings, store, host key, registry and runner.

>>> service = Service(ServiceSettings(data_dir=Path("data")))  # doctest: +SKIP
>>> await service.start()     # opens (and on first start creates) the database
>>> app = service.app()       # the aiohttp application
>>> await service.close()

The CLI only builds it; tests build it too and serve ``app()`` with aiohttp's test server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import resource
from concurrent.futures import ProcessPoolExecutor

from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.bots.check_queue import CheckSettings, PlayerChecks
from server.bots.hub import BotHub
from server.catalog import seed_bundled_games
from server.errors import InvalidInput
from server.league import TournamentDriver
from server.match import PlayerChannel
from server.records.signing import load_or_create_host_key
from server.registry import Registry, RegistrySettings
from server.runner import QueueRunner, RunnerMetrics, RunnerSettings
from server.store import PlayerRecord, Store, is_sqlite
from server.store.bot_tokens import OUTBOUND, player_for_bot_token
from server.workers import EventListener, JobControl, JobRunner, ScaleOutMetrics, WorkerSettings
from server.workers.runner import default_worker_name

from .auth import admin_token_hash
from .settings import ServiceSettings
from .site.hub import LiveHub

log = logging.getLogger(__name__)


def raise_open_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the new soft limit.

    Every match holds a connection per player while a message is out, a rules worker
    pipe and a journal; a thousand matches at once need more than the usual soft limit
    of 1,024 descriptors.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft


class Service:
    """Everything the service runs; :meth:`start` and :meth:`close` bracket its life."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.store = Store(settings.effective_database_url)
        self.metrics = RunnerMetrics()
        self.bots = BotHub(
            lambda token: player_for_bot_token(self.store, token),
            heartbeat=settings.bot_heartbeat,
            on_change=self._bot_changed,
        )
        self.registry = Registry(
            self.store,
            RegistrySettings(
                ping_seconds=settings.ping_seconds,
                suspend_after=settings.suspend_after,
                require_passed_check=settings.require_passed_check,
            ),
            channel_for=lambda player: self.channel_for(player, wait=False),
        )
        self.checks = PlayerChecks(
            self.store,
            self._reach_for_check,
            CheckSettings(concurrency=settings.check_concurrency),
            seats=lambda: self._runner,
        )
        """The player checker, run in the background (see :mod:`server.bots.check_queue`)."""
        self._key: Ed25519PrivateKey | None = None
        self._runner: QueueRunner | None = None
        self._events: EventListener | None = None
        """On PostgreSQL: match events from every worker, for the hub and the driver."""
        self._monitor: asyncio.Task[None] | None = None
        self.tournaments: TournamentDriver | None = None
        """Drives the running tournaments (set by :meth:`start`)."""
        self.admin_hash = ""
        self.generated_admin_token: str | None = None
        """The admin token made on this start (print it once), if one was made."""
        self.executor: ProcessPoolExecutor | None = None
        self.extra_cleanup = contextlib.AsyncExitStack()
        self.started = False
        self.live = LiveHub()
        """Live match events for the pages' viewers."""
        self._pings: set[asyncio.Task[None]] = set()

    @property
    def key(self) -> Ed25519PrivateKey:
        if self._key is None:
            raise RuntimeError("the service is not started")
        return self._key

    @property
    def runner(self) -> QueueRunner:
        if self._runner is None:
            raise RuntimeError("the service is not started")
        return self._runner

    async def start(self) -> None:
        """Open the database (the embedded one is created and upgraded), then start work.

        Raises :class:`server.store.SchemaOutOfDate` for a database given by URL that is
        not at the latest revision.  Idempotent.
        """
        if self.started:
            return
        settings = self.settings
        raise_open_file_limit()
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self._key = load_or_create_host_key(settings.key_path)
        self.admin_hash, self.generated_admin_token = admin_token_hash(
            settings.data_dir, settings.admin_token
        )
        await self.store.open(upgrade=settings.embedded)
        try:
            await seed_bundled_games(self.store)
            await self.checks.recover()
            self.executor = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
            self._runner = self._make_runner()
            await self._runner.start()
            self.tournaments = TournamentDriver(
                self.store,
                poll_seconds=max(settings.poll_seconds, 0.5),
                on_queued=self._runner.wake,
                # With the job system, workers claim queued matches in SQL; the driver
                # only queues them. The in-process runner starts them at once.
                starter=None if isinstance(self._runner, JobRunner | JobControl) else self._runner,
            )
            self._runner.on_match_end.append(self.tournaments.wake)
            await self.tournaments.start()
            if isinstance(self._runner, JobRunner | JobControl):
                await self._start_scale_out(self._runner, self.tournaments)
            await self.registry.start()
        except BaseException:
            await self.close()
            raise
        self.started = True

    async def close(self) -> None:
        """Stop the runner (running matches are aborted), the pings and the database."""
        await self.extra_cleanup.aclose()
        await self.checks.close()
        if self._monitor is not None:
            self._monitor.cancel()
            await asyncio.gather(self._monitor, return_exceptions=True)
        if self._events is not None:
            await self._events.close()
        await self.registry.close()
        if self.tournaments is not None:
            await self.tournaments.close()
        if self._runner is not None:
            await self._runner.close()
        await self.bots.close()  # after the runner, so ABORT still reaches connected bots
        await asyncio.gather(*self._pings, return_exceptions=True)
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None
        await self.store.close()
        self.started = False

    def _make_runner(self) -> QueueRunner:
        """The in-process runner on SQLite; on PostgreSQL a worker of the shared job queue
        (or, with ``no_runner``, queue control without running matches)."""
        settings = self.settings
        assert self._key is not None
        if is_sqlite(settings.effective_database_url):
            if settings.no_runner:
                raise InvalidInput(
                    "--no-runner needs a PostgreSQL database that workers share",
                    field="no_runner",
                )
            return QueueRunner(
                self.store,
                self._key,
                RunnerSettings(
                    concurrency=settings.concurrency,
                    requeue_interrupted=settings.requeue_interrupted,
                    poll_seconds=settings.poll_seconds,
                ),
                metrics=self.metrics,
                pre_match_check=self.registry.check_before_match,
                watchers=[self.live.publish],
                channel_for=self.channel_for,
            )
        if settings.no_runner:
            return JobControl(
                self.store,
                self._key,
                requeue_interrupted=settings.requeue_interrupted,
                metrics=self.metrics,
                channel_for=self.channel_for,
            )
        return JobRunner(
            self.store,
            self._key,
            WorkerSettings(
                name=f"serve-{default_worker_name()}",
                concurrency=settings.concurrency,
                requeue_interrupted=settings.requeue_interrupted,
                poll_seconds=min(settings.poll_seconds, 0.5),
            ),
            metrics=self.metrics,
            pre_match_check=self.registry.check_before_match,
            watchers=[self.live.publish],
            channel_for=self.channel_for,
        )

    async def _start_scale_out(
        self, runner: JobRunner | JobControl, driver: TournamentDriver
    ) -> None:
        """Listen to every worker's match events; keep the scale-out gauges fresh."""
        local = runner.running

        def end(match_id: str, maybe_in_tournament: bool) -> None:
            if maybe_in_tournament:
                driver.wake()
            else:
                driver.other_match_ended()

        self._events = EventListener(
            self.store,
            publish=self.live.publish_payload,
            watched=lambda match_id: match_id not in local and self.live.viewers(match_id) > 0,
            on_end=end,
        )
        await self._events.start()
        gauges = ScaleOutMetrics(self.metrics.registry)
        self._monitor = asyncio.create_task(
            gauges.keep_fresh(self.store, runner.jobs, runner.sweeper), name="scale-out-metrics"
        )

    def channel_for(self, player: PlayerRecord, *, wait: bool = True) -> PlayerChannel | None:
        """How the runner and the registry reach an outbound bot (``None``: by HTTP)."""
        if player.connection != OUTBOUND:
            return None
        return self.bots.channel(player.name, wait=wait)

    def _reach_for_check(self, player: PlayerRecord) -> PlayerChannel | str | None:
        """How the checker reaches a player: its socket, why not, or ``None`` (its URL)."""
        if player.connection != OUTBOUND:
            return None
        if not self.bots.connected(player.name):
            return "the bot is not connected"
        return self.bots.channel(player.name)

    def _bot_changed(self, name: str) -> None:
        """A bot connected or went away: ping it now, so its status says so at once; a bot
        that connects for the first time is checked."""
        if not self.started:
            return
        connected = self.bots.connected(name)

        async def ping() -> None:
            try:
                await self.registry.ping(await self.store.get_player(name))
                if connected and self.settings.check_players:
                    await self.checks.request_if_new_connection(name)
            except Exception as error:  # a deleted player, a closed store: the next round sees it
                log.info("ping of bot %s after its connection changed failed: %s", name, error)

        task = asyncio.create_task(ping())
        self._pings.add(task)
        task.add_done_callback(self._pings.discard)

    def app(self) -> web.Application:
        """The aiohttp application: the REST API, /openapi.json, /metrics and a home page."""
        from .routes import build_app

        return build_app(self)
