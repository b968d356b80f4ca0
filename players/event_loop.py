"""The event loop a player (or the server) runs on: uvloop when installed, else asyncio's."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

EVENT_LOOP_ENV = "GGP_EVENT_LOOP"
"""Set to ``asyncio`` to keep asyncio's own loop even when uvloop is installed."""


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on uvloop when it is installed (the ``fast`` extra), else
    on asyncio; ``GGP_EVENT_LOOP=asyncio`` keeps asyncio's loop."""
    if os.environ.get(EVENT_LOOP_ENV, "").lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)
