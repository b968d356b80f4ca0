"""Running blocking work off the event loop in daemon threads.

Daemon threads never hold up the process at exit, so a player whose thinking
overruns cannot keep its agent from shutting down.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def in_thread(
    function: Callable[..., T],
    *args: Any,
    name: str = "player-work",
    finished: Callable[[], None] | None = None,
) -> asyncio.Future[T]:
    """Start ``function(*args)`` in a new daemon thread; the future settles with its outcome.

    ``finished`` is called on the event loop once ``function`` has returned or raised,
    even when nobody awaits the future any more (it was cancelled at a deadline)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = function(*args)
        except BaseException as raised:  # handed over to the awaiting coroutine
            error = raised
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
            if finished is not None:
                loop.call_soon_threadsafe(finished)
        except RuntimeError:  # the event loop is gone: nobody is waiting any more
            pass

    threading.Thread(target=work, name=name, daemon=True).start()
    return future
