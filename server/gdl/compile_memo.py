"""What a process remembers of compiling games: the compiled engines of the rules it
loaded before, and the compile attempts that failed for a reason that would fail again.

Loading the same rules again with the same limits then costs no compile and no timed
race: the compiled engine is shared (its generated functions keep no state between
calls, and the few caches it keeps are replaced whole, so threads may share it), and a
known failure falls back to the interpreter at once. Each line of an archive that
``ggp import`` replays loads the rules it carries anew, and so does each lint, page
drawing and replay of the same game in one process (nineBoardTicTacToe costs 0.1 s to
compile and race, pawnToQueen 1.1 s).

Interpreters are never shared: they keep per-match caches and budget trials.

>>> key = memo_key(rules, max_ground_rules=80_000, time_limit=2.0)  # doctest: +SKIP
>>> with COMPILE_MEMO.loading(key):                                 # doctest: +SKIP
...     known = COMPILE_MEMO.compiled(key) or COMPILE_MEMO.failure(key)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .engine import Engine
from .engine_trial import Race
from .errors import GdlError
from .parser import Rule

REMEMBERED_ENGINES = 8
"""Compiled engines kept per process, the one loaded longest ago dropped first. One
holds 4 MB (tron_10x10) to 75 MB (knightwar) of generated code and tables."""

REMEMBERED_FAILURES = 64
"""Games whose compile attempt failed for a reason that does not depend on the machine's
load (a size cap, the rule budget, rules the compiler refuses, a lost race) remembered per
process, so that loading one again falls back at once."""

MemoKey = tuple[tuple[Any, ...], int, float]
"""The rules (heads and bodies: not where they were written), the rule cap and the
compile time limit."""


def fails_again(error: GdlError) -> bool:
    """Whether a failed compile attempt would fail again whatever the load (a count
    past a cap, rules the compiler refuses), not only on a busy machine (the clock)."""
    from .compiled import GroundingOverBudget, GroundingTooSlow

    return isinstance(error, GroundingOverBudget) or not isinstance(error, GroundingTooSlow)


def memo_key(rules: Iterable[Rule], *, max_ground_rules: int, time_limit: float) -> MemoKey:
    """What a compile is remembered by: rules that differ only in layout share it."""
    return tuple((rule.head, rule.body) for rule in rules), max_ground_rules, time_limit


@dataclass(frozen=True)
class Compiled:
    """A compiled engine kept for later loads, with the race ``auto`` ran on it."""

    engine: Engine
    race: Race | None
    """``None`` when it was loaded with engine ``compiled``, which runs no race."""


class CompileMemo:
    """The compiled engines and the lasting failures of one process, each bounded."""

    def __init__(
        self, engines: int = REMEMBERED_ENGINES, failures: int = REMEMBERED_FAILURES
    ) -> None:
        self.engines = engines
        self.failures = failures
        self._compiled: OrderedDict[MemoKey, Compiled] = OrderedDict()
        self._failed: OrderedDict[MemoKey, GdlError] = OrderedDict()
        self._lock = threading.Lock()
        self._loads: dict[MemoKey, list[Any]] = {}
        """Per key being loaded: its lock and how many threads hold or wait for it."""

    @contextmanager
    def loading(self, key: MemoKey) -> Iterator[None]:
        """Hold while loading ``key``: another thread loading the same rules waits, then
        finds what this one compiled (or why it failed) instead of compiling again."""
        with self._lock:
            entry = self._loads.get(key)
            if entry is None:
                entry = self._loads[key] = [threading.Lock(), 0]
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._loads[key]

    def compiled(self, key: MemoKey) -> Compiled | None:
        """The engine compiled for ``key`` before, if still kept."""
        with self._lock:
            return _recent(self._compiled, key)

    def keep_compiled(self, key: MemoKey, engine: Engine, race: Race | None) -> None:
        """Keep a compiled engine (and the race ``auto`` ran on it, if any)."""
        with self._lock:
            _keep(self._compiled, key, Compiled(engine, race), self.engines)

    def failure(self, key: MemoKey) -> GdlError | None:
        """Why compiling ``key`` failed before, when it would fail again."""
        with self._lock:
            return _recent(self._failed, key)

    def keep_failure(self, key: MemoKey, error: GdlError) -> None:
        """Remember a failure that does not depend on the load (a lost race included)."""
        error.__traceback__ = None  # its frames would keep the attempt's ground program alive
        error.__context__ = error.__cause__ = None
        with self._lock:
            _keep(self._failed, key, error, self.failures)

    def forget_failures(self) -> None:
        """Forget every failure: the next load of each game tries to compile it."""
        with self._lock:
            self._failed.clear()

    def forget_engines(self) -> None:
        """Forget every compiled engine: the next load of each game compiles it again."""
        with self._lock:
            self._compiled.clear()


def _recent(kept: OrderedDict[MemoKey, Any], key: MemoKey) -> Any:
    """``kept[key]`` (now the one used last), or None."""
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
    return found


def _keep(kept: OrderedDict[MemoKey, Any], key: MemoKey, value: Any, most: int) -> None:
    """Keep ``value`` as the one used last, dropping the oldest past ``most``."""
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > most:
        kept.popitem(last=False)


COMPILE_MEMO = CompileMemo()
"""The memo every :class:`~server.gdl.game.Game` of this process consults."""
