"""Running blocking work off the event loop in daemon threads, kept for reuse.

Daemon threads never hold up the process at exit, so a player whose thinking
overruns cannot keep its agent from shutting down.  A thread that finished its work
waits a while for the next (:data:`IDLE_SECONDS`) instead of ending: starting a thread
costs far more than handing work to one, and a player asks for work several times a
step.  Work never waits for a thread: when none is idle (they are all thinking, or one
is stuck in a hook that overran), a new one starts.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_SECONDS = 30.0
"""How long a thread with no work waits for more before it ends."""

_Job = tuple[
    Callable[..., Any],
    tuple[Any, ...],
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    Callable[[], None] | None,
]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _run(job: _Job) -> tuple[Any, BaseException | None]:
    """Do one job: its result, or the error it raised."""
    function, args = job[0], job[1]
    try:
        return function(*args), None
    except BaseException as raised:  # handed over to the awaiting coroutine
        return None, raised


def _hand_over(job: _Job, result: Any, error: BaseException | None) -> None:
    """Hand a job's outcome to its event loop."""
    _, _, loop, future, finished = job
    try:
        loop.call_soon_threadsafe(_settle, future, result, error)
        if finished is not None:
            loop.call_soon_threadsafe(finished)
    except RuntimeError:  # the event loop is gone: nobody is waiting any more
        pass


class _Worker:
    """A daemon thread doing jobs one after another, idle in between."""

    def __init__(self, pool: _Pool, name: str) -> None:
        self._pool = pool
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=self._pool.idle_seconds)
            except queue.Empty:
                if self._pool.retire(self):
                    return
                continue  # taken for a job just now: it is on its way
            result, error = _run(job)
            # idle before the caller hears back, so that the work it asks for next
            # comes to this thread rather than to a new one
            self._pool.rest(self)
            _hand_over(job, result, error)
            del job, result, error  # no reference to the work's result kept while idle


class _Pool:
    """The idle threads, last rested first (the most recently used stays warm)."""

    def __init__(self, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def submit(self, job: _Job, name: str) -> None:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self, name)
            worker.thread.start()
        else:
            worker.thread.name = name
        worker.jobs.put(job)

    def rest(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Whether an idle ``worker`` may end (no job was handed to it meanwhile)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False

    @property
    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)


_pool = _Pool(IDLE_SECONDS)


def idle_threads() -> int:
    """How many threads wait for work now."""
    return _pool.idle_count


def in_thread(
    function: Callable[..., T],
    *args: Any,
    name: str = "player-work",
    finished: Callable[[], None] | None = None,
) -> asyncio.Future[T]:
    """Run ``function(*args)`` in a daemon thread; the future settles with its outcome.

    ``finished`` is called on the event loop once ``function`` has returned or raised,
    even when nobody awaits the future any more (it was cancelled at a deadline)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _pool.submit((function, args, loop, future, finished), name)
    return future
