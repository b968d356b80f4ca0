"""Loaded rules workers kept for the next match of the same game.

A worker serves one match at a time (so a budget spent by one match stops only
that match's worker), and goes back to the pool when its match ends in good order.
Workers are kept per game, keyed by the rules text, the engine and the budget, so a
tournament of many matches of one game loads the game once per concurrent match,
not once per match.  Idle workers are stopped after :data:`IDLE_SECONDS`.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field

from .budget import RulesBudget
from .process import WorkerProcess

IDLE_SECONDS = 30.0
"""An idle worker is stopped after this long without a match."""
MAX_IDLE_PER_GAME = 32
"""At most this many idle workers are kept per game."""


@dataclass(frozen=True, slots=True)
class GameKey:
    """What a loaded worker is good for."""

    rules_text: str
    engine: str
    budget: RulesBudget


@dataclass
class LoadedWorker:
    """A worker with a game loaded, and what loading it told us."""

    process: WorkerProcess
    key: GameKey
    roles: list[str]
    step_limit: int | None
    _idle_timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class RulesPool:
    """Idle loaded workers per game; see the module documentation."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._idle: dict[GameKey, list[LoadedWorker]] = {}
        self._step_limits: dict[GameKey, int] = {}

    async def acquire(self, key: GameKey, want_step_limit: bool) -> LoadedWorker:
        """A worker with ``key``'s game loaded (and its default step limit if wanted).

        Raises :class:`~server.gdl.GdlError` when the rules do not load and
        :class:`~.errors.RulesFailure` when loading goes past its budget.
        """
        idle = self._idle.get(key, [])
        while idle:
            worker = idle.pop()
            if worker._idle_timer is not None:
                worker._idle_timer.cancel()
            if worker.process.usable:
                if want_step_limit and worker.step_limit is None:
                    worker.step_limit = self._step_limits.get(key)
                if not want_step_limit or worker.step_limit is not None:
                    return worker
                await worker.process.close()
        process = await WorkerProcess.start(key.budget.memory_mb)
        known = self._step_limits.get(key)
        try:
            roles, limit = await process.call(
                (
                    "load",
                    key.rules_text,
                    key.engine,
                    want_step_limit and known is None,
                    key.budget.step_cpu,
                    key.budget.load_cpu,
                ),
                key.budget.load_cpu,
                "to load the game",
            )
        except BaseException:
            await process.close()
            raise
        if limit is not None:
            self._step_limits[key] = limit
        return LoadedWorker(process, key, roles, limit if limit is not None else known)

    async def release(self, worker: LoadedWorker) -> None:
        """Take back a worker whose match is over; a worker out of order is stopped."""
        idle = self._idle.setdefault(worker.key, [])
        if not worker.process.usable or len(idle) >= MAX_IDLE_PER_GAME:
            await worker.process.close()
            return
        try:
            await worker.process.call(("reset",), worker.key.budget.step_cpu, "to reset")
        except Exception:
            await worker.process.close()
            return
        loop = asyncio.get_running_loop()
        worker._idle_timer = loop.call_later(self.idle_seconds, self._expire, worker)
        idle.append(worker)

    def _expire(self, worker: LoadedWorker) -> None:
        idle = self._idle.get(worker.key, [])
        if worker in idle:
            idle.remove(worker)
            worker.process.kill()

    async def close(self) -> None:
        """Stop every idle worker."""
        workers = [worker for idle in self._idle.values() for worker in idle]
        self._idle.clear()
        for worker in workers:
            if worker._idle_timer is not None:
                worker._idle_timer.cancel()
            await worker.process.close()

    @property
    def idle_count(self) -> int:
        return sum(len(idle) for idle in self._idle.values())


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
