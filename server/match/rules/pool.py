"""Loaded games kept for the next match: one template process per game, a forked
worker per match.

A game is loaded once, by its template (:mod:`.process`), keyed by the rules text,
the engine and the budget.  Each match leases a worker forked from the template,
so it starts with the game loaded, and a budget spent by one match stops only that
match's worker.  A worker whose match ended in good order goes back to the pool for
the next match of the game.  When no match of a game has been running for
:data:`IDLE_SECONDS`, its template and idle workers are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass, field

from .budget import RulesBudget
from .process import Template, Worker

IDLE_SECONDS = 30.0
"""A game without a match for this long has its processes stopped."""
MAX_IDLE_WORKERS = 32
"""At most this many idle workers are kept per game."""


@dataclass(frozen=True, slots=True)
class GameKey:
    """What a template is loaded with."""

    rules_text: str
    engine: str
    budget: RulesBudget


@dataclass(eq=False)
class Lease:
    """A worker leased to one match, and what loading the game told us."""

    worker: Worker
    key: GameKey
    roles: list[str]
    step_limit: int | None


@dataclass(eq=False)
class _Loaded:
    template: Template
    roles: list[str]
    step_limit: int | None
    idle: list[Worker] = field(default_factory=list)
    leases: int = 0
    timer: asyncio.TimerHandle | None = None


class RulesPool:
    """Templates and idle workers per game; see the module documentation."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._games: dict[GameKey, asyncio.Task[_Loaded]] = {}

    async def acquire(self, key: GameKey, want_step_limit: bool) -> Lease:
        """A worker with ``key``'s game loaded (and its default step limit if wanted).

        Raises :class:`~server.gdl.GdlError` when the rules do not load and
        :class:`~.errors.RulesFailure` when loading goes past its budget.
        """
        loaded = await self._loaded(key)
        if not loaded.template.usable:
            self._forget(key, loaded)
            loaded = await self._loaded(key)
        loaded.leases += 1
        if loaded.timer is not None:
            loaded.timer.cancel()
            loaded.timer = None
        try:
            if want_step_limit and loaded.step_limit is None:
                loaded.step_limit = await loaded.template.call(
                    ("step_limit",), key.budget.load_cpu, "to load the game"
                )
            worker = await self._worker(key, loaded)
        except BaseException:
            await self._done(key, loaded)
            if not loaded.template.usable:
                self._forget(key, loaded)
            raise
        return Lease(worker, key, loaded.roles, loaded.step_limit)

    async def release(self, lease: Lease) -> None:
        """Take back a worker whose match is over; a worker out of order is stopped."""
        task = self._games.get(lease.key)
        loaded = task.result() if task is not None and task.done() else None
        worker = lease.worker
        if loaded is None or not worker.usable or len(loaded.idle) >= MAX_IDLE_WORKERS:
            worker.close()
        else:
            try:
                await worker.call(("reset",), lease.key.budget.step_cpu, "to reset")
            except Exception:
                worker.close()
            else:
                loaded.idle.append(worker)
        if loaded is not None:
            await self._done(lease.key, loaded)

    async def close(self) -> None:
        """Stop every template and idle worker."""
        tasks = list(self._games.values())
        self._games.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                continue
            if task.exception() is None:
                await self._stop(task.result())

    # -- helpers --------------------------------------------------------------------

    async def _loaded(self, key: GameKey) -> _Loaded:
        task = self._games.get(key)
        if task is None:
            task = self._games[key] = asyncio.ensure_future(self._load(key))
        try:
            return await asyncio.shield(task)
        except Exception:
            if self._games.get(key) is task:
                del self._games[key]  # the next match tries again
            raise

    async def _load(self, key: GameKey) -> _Loaded:
        template = await Template.start(key.budget.memory_mb)
        try:
            roles, limit = await template.call(
                (
                    "load",
                    key.rules_text,
                    key.engine,
                    False,
                    key.budget.step_cpu,
                    key.budget.load_cpu,
                ),
                key.budget.load_cpu,
                "to load the game",
            )
        except BaseException:
            await template.close()
            raise
        return _Loaded(template, roles, limit)

    async def _worker(self, key: GameKey, loaded: _Loaded) -> Worker:
        while loaded.idle:
            worker = loaded.idle.pop()
            if worker.usable:
                return worker
        return await loaded.template.fork(key.budget.step_cpu)

    async def _done(self, key: GameKey, loaded: _Loaded) -> None:
        loaded.leases -= 1
        if loaded.leases == 0 and loaded.timer is None:
            loop = asyncio.get_running_loop()
            loaded.timer = loop.call_later(self.idle_seconds, self._expire, key, loaded)

    def _expire(self, key: GameKey, loaded: _Loaded) -> None:
        loaded.timer = None
        if loaded.leases == 0:
            self._forget(key, loaded)

    def _forget(self, key: GameKey, loaded: _Loaded) -> None:
        task = self._games.get(key)
        if task is not None and task.done() and not task.exception() and task.result() is loaded:
            del self._games[key]
        for worker in loaded.idle:
            worker.close()
        loaded.idle.clear()
        if loaded.leases == 0:
            loaded.template.connection.close()
            loaded.template.kill()

    async def _stop(self, loaded: _Loaded) -> None:
        if loaded.timer is not None:
            loaded.timer.cancel()
        for worker in loaded.idle:
            worker.close()
        loaded.idle.clear()
        await loaded.template.close()

    @property
    def game_count(self) -> int:
        """How many games are loaded (or loading)."""
        return len(self._games)


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RulesPool] = (
    weakref.WeakKeyDictionary()
)


def default_pool() -> RulesPool:
    """The pool shared by the matches of the running event loop."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = RulesPool()
    return pool
