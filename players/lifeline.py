"""Tying a player process to the process that started it, so it never outlives it.

On Linux the kernel sends the child SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), even when the parent is itself killed with SIGKILL.
A watchdog thread that polls the parent's pid backs this up on every system.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
WATCH_INTERVAL = 0.5
"""Seconds between two looks at the parent's pid."""


def _set_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    return False


def _parent_gone(parent: int) -> bool:
    return os.getppid() != parent


def _watch(parent: int) -> None:
    while not _parent_gone(parent):
        time.sleep(WATCH_INTERVAL)
    log.warning("the parent process %d is gone; exiting", parent)
    os._exit(1)


def tie_to_parent(parent: int) -> None:
    """End this process when process ``parent`` (its parent) ends, however it ends."""
    _set_death_signal()
    if _parent_gone(parent):  # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()
