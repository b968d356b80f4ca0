"""Loaded games kept for the next match: one template process per game, a few
workers forked from it, shared by the game's matches.

A game is loaded once, by its template (:mod:`.process`), keyed by the rules text,
the engine and the budget.  Its workers are forked from the template, so they start
with the game loaded; each serves many matches, one request at a time, and the
states it holds are the matches' (by handle).  A match's request goes to the worker
that holds its state when that worker is free, else to a free worker of the game
(with the state as text), else to a newly forked one, up to
:data:`MAX_WORKERS_PER_GAME`, else it waits its turn; so a thousand matches of a game
need a handful of processes, and a slow step holds up only the worker it runs in.

Budgets are per request: a request past its CPU or memory budget ends the worker
and the match that sent it (``rules_limit``); the other matches the worker served go
on in another worker from their states' text.  A worker killed from outside ends the
match whose request meets it.  When no match of a game has been running for
:data:`IDLE_SECONDS`, its template and workers are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass, field
from typing import Any

from .budget import RulesBudget
from .process import NotSent, Template, Worker

IDLE_SECONDS = 30.0
"""A game without a match for this long has its processes stopped."""
MAX_WORKERS_PER_GAME = 8
"""At most this many workers are forked per game; past them, requests wait their turn."""


@dataclass(frozen=True, slots=True)
class GameKey:
    """What a template is loaded with."""

    rules_text: str
    engine: str
    budget: RulesBudget


@dataclass(eq=False)
class _Loaded:
    template: Template
    roles: list[str]
    step_limit: int | None
    engine: str
    """The engine the template loaded the game with (its workers inherit it)."""
    workers: list[Worker] = field(default_factory=list)
    forking: int = 0
    forked: asyncio.Condition = field(default_factory=asyncio.Condition)
    leases: int = 0
    timer: asyncio.TimerHandle | None = None

    def prune(self) -> None:
        """Forget workers that stopped."""
        if any(not worker.usable for worker in self.workers):
            self.workers = [worker for worker in self.workers if worker.usable]


@dataclass(eq=False)
class _Held:
    """A state a match holds: the worker keeping it, its handle there, its text."""

    worker: Worker
    handle: int
    text: str


class MatchWorker:
    """One match's view of its game's workers: looks like a worker of its own.

    Requests and answers are a worker's (:meth:`Worker.call`); handles in them are
    this match's, mapped to the worker that holds each state.
    """

    def __init__(self, loaded: _Loaded, key: GameKey, home: Worker) -> None:
        self._loaded = loaded
        self._key = key
        self._home = home
        self._held: dict[int, _Held] = {}
        self._left: list[_Held] = []
        """States left in a busy worker when the match moved on elsewhere."""
        self._next_handle = 1

    @property
    def pid(self) -> int:
        """The process id of the worker that answered this match last."""
        return self._home.pid

    async def call(self, request: tuple[Any, ...], cpu: float, what: str) -> Any:
        """Send ``request`` to a worker of the game; see :meth:`Worker.call`."""
        kind = request[0]
        held = None
        if kind in ("step", "goals"):
            held = self._held.pop(request[1]) if kind == "step" else self._held[request[1]]
        while True:
            preferred = held.worker if held is not None else self._home
            if preferred.usable and not preferred.busy:
                worker = preferred  # the usual case, without a coroutine
            else:
                worker = await _choose(self._loaded, self._key, preferred)
            if held is None:
                sent = request
            elif worker is held.worker:
                sent = (kind, held.handle, *request[2:])
            elif kind == "step":
                sent = ("step_from", held.text, *request[2:])
            else:
                sent = ("goals_at", held.text)
            try:
                answer = await worker.call(sent, cpu, what)
            except NotSent:
                continue  # it stopped (another match's budget): ask another worker
            self._home = worker
            if held is not None and kind == "step" and worker is not held.worker:
                self._left.append(held)
            break
        if kind in ("initial", "step", "state"):
            handle = self._next_handle
            self._next_handle += 1
            self._held[handle] = _Held(worker, answer[0], answer[1])
            return (handle, *answer[1:])
        return answer

    def forget(self) -> None:
        """Drop the states this match holds in its workers (without waiting: the
        workers do not answer, see :meth:`Worker.tell`)."""
        by_worker: dict[Worker, list[int]] = {}
        for held in [*self._held.values(), *self._left]:
            by_worker.setdefault(held.worker, []).append(held.handle)
        self._held.clear()
        self._left.clear()
        for worker, handles in by_worker.items():
            if worker.usable:
                worker.tell(("forget", handles))


async def _choose(loaded: _Loaded, key: GameKey, preferred: Worker | None) -> Worker:
    """The worker for the next request: ``preferred`` when free, else a free one,
    else a new one (up to the cap), else ``preferred`` (or another) to wait its turn."""
    while True:
        if preferred is not None and preferred.usable and not preferred.busy:
            return preferred
        loaded.prune()
        for worker in loaded.workers:
            if not worker.busy:
                return worker
        if len(loaded.workers) + loaded.forking < MAX_WORKERS_PER_GAME:
            loaded.forking += 1
            try:
                worker = await loaded.template.fork(key.budget.step_cpu)
                loaded.workers.append(worker)
                return worker
            finally:
                loaded.forking -= 1
                async with loaded.forked:
                    loaded.forked.notify_all()
        if loaded.workers:
            if preferred is not None and preferred.usable:
                return preferred
            return loaded.workers[0]
        async with loaded.forked:  # every worker is still being forked
            await loaded.forked.wait()


@dataclass(eq=False)
class Lease:
    """A match's share of its game's workers, and what loading the game told us."""

    worker: MatchWorker
    key: GameKey
    roles: list[str]
    step_limit: int | None
    engine: str
    """The engine that answers: ``compiled`` or ``interpreter``."""


class RulesPool:
    """Templates and their workers per game; see the module documentation."""

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
            worker = MatchWorker(loaded, key, await _choose(loaded, key, None))
        except BaseException:
            await self._done(key, loaded)
            if not loaded.template.usable:
                self._forget(key, loaded)
            raise
        return Lease(worker, key, loaded.roles, loaded.step_limit, loaded.engine)

    async def release(self, lease: Lease) -> None:
        """End a match's lease: the states it holds are dropped."""
        task = self._games.get(lease.key)
        loaded = task.result() if task is not None and task.done() else None
        lease.worker.forget()
        if loaded is not None:
            await self._done(lease.key, loaded)

    async def close(self) -> None:
        """Stop every template and worker."""
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
            roles, limit, engine = await template.call(
                (
                    "load",
                    key.rules_text,
                    key.engine,
                    False,
                    key.budget.step_cpu,
                    key.budget.load_cpu,
                    key.budget.compile_time_limit,
                    key.budget.max_ground_rules,
                ),
                key.budget.load_cpu,
                "to load the game",
            )
        except BaseException:
            await template.close()
            raise
        return _Loaded(template, roles, limit, engine)

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
        if loaded.leases == 0:
            for worker in loaded.workers:
                worker.close()
            loaded.workers.clear()
            loaded.template.connection.close()
            loaded.template.kill()

    async def _stop(self, loaded: _Loaded) -> None:
        if loaded.timer is not None:
            loaded.timer.cancel()
        for worker in loaded.workers:
            worker.close()
        loaded.workers.clear()
        await loaded.template.close()

    @property
    def game_count(self) -> int:
        """How many games are loaded (or loading)."""
        return len(self._games)

    @property
    def process_count(self) -> int:
        """How many rules processes run: templates and their workers."""
        loaded = [
            task.result() for task in self._games.values() if task.done() and not task.exception()
        ]
        return sum(1 + len(game.workers) for game in loaded)


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
