"""Python's cyclic garbage collector paused while a game is set up.

A compile attempt allocates hundreds of thousands of small tuples that it keeps (the
ground rules, the network's bodies, the plan's literal sets) and makes no garbage
cycles worth collecting before it ends. With the collector on, the growing heap is
scanned over and over: in a process that had loaded games before, a failed attempt
on kalaha5x2x3 took 0.28 to 0.52 s with it and 0.26 s without. The interpreter's
static relations are the same kind of work (gt_two_thirds_4p's arithmetic tables: the
collector was a fifth of the interpreter's set-up). The pause covers only the set-up (a
compile attempt's is at most its time limit of CPU time); cycles left meanwhile, by any
thread, are collected once it ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0
"""Attempts running now (in any thread)."""
_was_enabled = False
"""Whether the collector was on when the first of them started."""


@contextmanager
def garbage_collection_paused() -> Iterator[None]:
    """The collector off inside, back as it was once the last attempt running ends."""
    global _paused, _was_enabled
    with _lock:
        if not _paused:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if not _paused and _was_enabled:
                gc.enable()


__all__ = ["garbage_collection_paused"]
