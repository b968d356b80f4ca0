"""The cyclic garbage collector, tuned for a long-running server process.

Start-up leaves a large heap that lives as long as the process (modules, loaded games,
the database schema, the web routes), and every step of every match then allocates many
short-lived containers.  With Python's defaults, each collection of the oldest
generation walks the whole start-up heap, and a young collection runs every 700
allocations.  :func:`settle_after_start` moves what start-up left alive out of the
collector's sight (:func:`gc.freeze`) and lets the young generation grow to
:data:`YOUNG_THRESHOLD` objects before it is collected.  Objects made later are
collected as usual, so cycles of a match's own objects are still freed.

On ``ggp serve`` with SQLite at 50 matches at once, the collector's share of the
server's CPU time after start-up went from 6.6% to 1.4% (``benchmarks/serve_throughput.py``,
at 5,000). The rules interpreter on the heavy games makes many containers that live for
one state (a chess position's tables on demand): collected every 5,000 allocations they
are still traced several times each, and chess ran 8% faster than with Python's default,
against 17% at 20,000 (``benchmarks/RESULTS.md``). Only whole processes
call it (``ggp serve``, ``ggp worker``, ``ggp match``, and the player processes, ``ggp
player`` and ``python -m players``): a library must not change its host's collector. It
sits with the engine, whose work it tunes, so that the players, which reach only the
engine and the protocol, use it too.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
"""Allocations (net of frees) between two collections of the youngest generation
(Python's default: 700)."""


def settle_after_start() -> None:
    """Collect once, freeze what is left alive, and collect young objects less often."""
    gc.collect()
    gc.freeze()
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, young), middle, oldest)
