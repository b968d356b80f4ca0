"""The threads a player's work runs in: reused when idle, never waited for."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from players import threads


def _current() -> threading.Thread:
    return threading.current_thread()


async def test_work_in_a_row_reuses_the_thread_that_finished() -> None:
    first = await threads.in_thread(_current)
    second = await threads.in_thread(_current)
    assert first is second
    assert first is not threading.main_thread() and first.daemon


class _SlowToRest(threads._Pool):
    """A pool whose threads take a while to note that they are idle."""

    def rest(self, worker: threads._Worker) -> None:
        time.sleep(0.2)
        super().rest(worker)


async def test_a_thread_is_idle_before_its_caller_hears_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller's next work reuses the thread however late the thread is scheduled
    after handing over its outcome: it rests first (CI once saw a second thread here)."""
    monkeypatch.setattr(threads, "_pool", _SlowToRest(idle_seconds=30.0))
    first = await threads.in_thread(_current)
    assert threads.idle_threads() == 1
    second = await threads.in_thread(_current)
    assert first is second


async def test_work_never_waits_behind_a_thread_that_is_stuck() -> None:
    release = threading.Event()
    stuck = threads.in_thread(release.wait)
    try:
        assert await asyncio.wait_for(threads.in_thread(sum, [1, 2, 3]), timeout=10) == 6
        assert not stuck.done()
    finally:
        release.set()
    assert await stuck is True


async def test_errors_reach_the_caller_and_finished_runs_even_after_a_cancel() -> None:
    with pytest.raises(ZeroDivisionError):
        await threads.in_thread(divmod, 1, 0)
    finished = asyncio.Event()
    release = threading.Event()
    future = threads.in_thread(release.wait, finished=finished.set)
    future.cancel()
    release.set()
    await asyncio.wait_for(finished.wait(), timeout=10)


async def test_idle_threads_end_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "_pool", threads._Pool(idle_seconds=0.05))
    done = await threads.in_thread(_current)
    for _ in range(200):
        if not done.is_alive():
            break
        await asyncio.sleep(0.05)
    assert not done.is_alive()
    assert threads.idle_threads() == 0
