"""Compiled engines kept on disk, for every process of this machine to load.

:mod:`.compile_memo` keeps what one process compiled. A new process (a restarted server,
a scale-out worker, a player's process, each ``ggp`` command) compiles again: up to the
2 s of set-up for a game that compiles, and 0.3 to 0.5 s for nothing on a game that
does not. A game compiled with a larger budget (aside, or by ``ggp games compile``)
would play on the interpreter again in every process that loads it at the default
budget. The store keeps, per set of rules:

- the compiled engine that won its race, pickled as another process receives it
  (:class:`~server.gdl.compiled.engine.PortableEngine`), with the race and the budget it
  was compiled within. Any later load of the same rules takes it, whatever its own
  budget: loading costs no grounding and no code generation (0.35 s for urmAdd's 40 MB,
  against 5.7 s of CPU time to compile it);
- the compile attempts that failed for a reason that would fail again (a count past a
  cap, rules the compiler refuses, a lost race), per budget, so that the same budget
  falls back at once.

Entries are named by a digest of the rules and of this package's engine code, so that
an upgrade never loads an engine made by other code. An entry that cannot be read is
removed and the game compiled as if it were not there. Past the size limit the engines
loaded longest ago are removed.

The store is at ``$XDG_CACHE_HOME/ggp/engines`` (``~/.cache/ggp/engines``), or where the
environment variable ``GGP_ENGINE_STORE`` says; ``GGP_ENGINE_STORE=off`` turns it off.
``GGP_ENGINE_STORE_MB`` sets its size limit (default 2048). Pickles run code when loaded,
so a directory that another user owns, or that others may write to, is not used.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import marshal
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .compile_budget import CompileBudget
from .engine_trial import Race
from .errors import GdlError
from .parser import Rule

if TYPE_CHECKING:
    from .compiled.engine import CompiledEngine, PortableEngine

log = logging.getLogger(__name__)

STORE_VARIABLE = "GGP_ENGINE_STORE"
SIZE_VARIABLE = "GGP_ENGINE_STORE_MB"
DEFAULT_MEGABYTES = 2048
"""The store's size limit without ``GGP_ENGINE_STORE_MB``: 27 engines of urmAdd's size."""
OFF = ("0", "off", "no", "false", "none")

MIN_COMPILE_SECONDS = 0.5
"""Engines that took less CPU time than this to compile (and race) are compiled again
rather than stored: most of the corpus compiles in 0.1 to 0.3 s, and reading their
pickles would save little."""

_FAILURES_LOCK = threading.Lock()
"""Held while a thread of this process rewrites a file of failures (processes may still
interleave: a failure lost that way is only found again)."""

FORMAT = 1
"""The layout of an entry; part of every digest, so another layout is never read."""

STALE_WRITE_SECONDS = 3600
"""A file being written that is older than this was left by a process stopped midway."""

ENGINE_SUFFIX = ".engine"
FAILURES_SUFFIX = ".failures"

FAILURE_KINDS = (
    "CompileError",
    "GroundingTooLarge",
    "GroundingOverBudget",
    "GroundingPastStretch",
    "NetworkOverBudget",
    "SlowerThanInterpreter",
)
"""The failures kept, by class name: the class is made again on loading, so that a
failure read from the store leads to what the same failure would (a compile aside for a
budget too small, none for rules the compiler refuses)."""

SHRINKING_FAILURES = frozenset(
    {
        "CompileError",
        "GroundingTooLarge",
        "GroundingOverBudget",
        "GroundingPastStretch",
        "NetworkOverBudget",
    }
)
"""Failures that any smaller budget (less time and no more rules) meets too: rules the
compiler refuses whatever the budget, and counts past caps or past the time the
estimate allows, which only shrink with it. A lost race is kept for its own budget only
(another budget may compile another form)."""


@dataclass(frozen=True)
class StoredEngine:
    """An engine read from the store."""

    engine: CompiledEngine
    race: Race | None
    """The race ``auto`` ran when it was compiled (None: compiled for engine ``compiled``)."""
    budget: CompileBudget
    """The budget it was compiled within."""


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the engine code of this package (every module of ``server.gdl``), of
    the Python that runs it and of the entries' layout: what a stored engine was made by."""
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{sys.version}\0{marshal.version}\0".encode())
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def rules_digest(rules: Iterable[Rule]) -> str:
    """The name of the entry of ``rules``: rules that differ only in layout share it."""
    digest = hashlib.sha256(code_fingerprint().encode())
    for rule in rules:
        digest.update(repr((rule.head, rule.body)).encode() + b"\n")
    return digest.hexdigest()[:40]


def _budget_key(budget: CompileBudget) -> str:
    return f"{budget.time_limit!r}s/{budget.max_ground_rules}"


def _budget_of(key: str) -> CompileBudget:
    seconds, rules = key.split("s/")
    return CompileBudget(float(seconds), int(rules))


def _failure_within(failures: dict[str, list[str]], budget: CompileBudget) -> list[str] | None:
    """The failure kept for ``budget``, else one kept for a budget at least as large in
    both time and rules that a smaller budget would meet too (:data:`SHRINKING_FAILURES`)."""
    found = failures.get(_budget_key(budget))
    if found is None:
        for key, failure in failures.items():
            larger = _budget_of(key)
            if (
                failure[0] in SHRINKING_FAILURES
                and larger.time_limit >= budget.time_limit
                and larger.max_ground_rules >= budget.max_ground_rules
            ):
                found = failure
                break
    if found is None:
        return None
    kind, reason = found
    if kind not in FAILURE_KINDS or not isinstance(reason, str):
        return None
    return [kind, reason]


class EngineStore:
    """A directory of stored engines and failures (see the module's docstring)."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes

    def path_of(self, digest: str, suffix: str) -> Path:
        return self.directory / f"{digest}{suffix}"

    def problem(self) -> str | None:
        """Why the directory cannot be used, if it cannot: it is made if need be, and
        must be this user's alone to write (None when it can be used)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            status = self.directory.stat()
        except OSError as error:
            return error.strerror or str(error)
        if not self.directory.is_dir():
            return "not a directory"
        if hasattr(os, "getuid") and status.st_uid != os.getuid():
            return "another user owns it"
        if status.st_mode & 0o022:
            return "others may write to it"
        return None

    def usable(self) -> bool:
        """Whether the directory can be used (a warning says why not)."""
        problem = self.problem()
        if problem is not None:
            log.warning("engine store %s not used: %s", self.directory, problem)
        return problem is None

    def entry(self, rules: list[Rule]) -> StoreEntry:
        """The entry of ``rules`` (its name worked out once for all that asks of it)."""
        return StoreEntry(self, rules_digest(rules))

    # -- files ---------------------------------------------------------------------

    def write_whole(self, path: Path, data: bytes) -> bool:
        """Write ``data`` to ``path`` whole or not at all (a reader never sees a part)."""
        try:
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".writing-")
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                os.replace(temporary, path)
            finally:
                Path(temporary).unlink(missing_ok=True)
        except OSError as error:
            log.warning("engine store: %s not written: %s", path.name, error)
            return False
        return True

    def trim(self) -> None:
        """Remove the engines loaded longest ago while the store is over its limit, and
        what writers that were stopped midway left (an hour old)."""
        now = time.time()
        for path in self.directory.glob(".writing-*"):
            try:
                if now - path.stat().st_mtime > STALE_WRITE_SECONDS:
                    path.unlink(missing_ok=True)
            except OSError:
                continue
        entries = []
        for path in self.directory.glob(f"*{ENGINE_SUFFIX}"):
            try:
                status = path.stat()
            except OSError:
                continue
            entries.append((status.st_mtime, status.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries, key=lambda entry: entry[0]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size

    def clear(self) -> int:
        """Remove every entry; how many files were removed."""
        removed = 0
        for pattern in (f"*{ENGINE_SUFFIX}", f"*{FAILURES_SUFFIX}"):
            for path in self.directory.glob(pattern):
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def summary(self) -> dict[str, Any]:
        """What the store holds: its directory, engines, failures and megabytes."""
        engines = list(self.directory.glob(f"*{ENGINE_SUFFIX}"))
        failures = list(self.directory.glob(f"*{FAILURES_SUFFIX}"))
        size = sum(path.stat().st_size for path in engines + failures if path.exists())
        return {
            "directory": str(self.directory),
            "engines": len(engines),
            "failures": len(failures),
            "megabytes": round(size / 2**20, 1),
            "limit_megabytes": round(self.max_bytes / 2**20),
        }


@dataclass(frozen=True)
class StoreEntry:
    """What the store holds for one set of rules: its engine, its failures per budget."""

    store: EngineStore
    digest: str
    """The entry's name (:func:`rules_digest`)."""

    # -- engines -------------------------------------------------------------------

    def engine(self) -> StoredEngine | None:
        """The engine stored, or None (an unreadable entry is removed)."""
        digest, store = self.digest, self.store
        path = store.path_of(digest, ENGINE_SUFFIX)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            log.warning("stored engine %s not read: %s", path.name, error)
            return None
        if not store.usable():
            return None
        from .compiled.engine import CompiledEngine

        try:
            entry = pickle.loads(data)  # noqa: S301 - written by this code, in a private directory
            if entry["format"] != FORMAT or entry["digest"] != digest:
                raise ValueError("written by other code")
            engine = CompiledEngine.from_portable(entry["portable"])
            stored = StoredEngine(engine, entry["race"], CompileBudget(*entry["budget"]))
        except Exception as error:  # noqa: BLE001 - any damage: compile as if it were not there
            log.warning("stored engine %s removed: %s", path.name, error)
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # loaded last: removed last
        except OSError:
            pass
        return stored

    def keep_engine(
        self, portable: PortableEngine, race: Race | None, budget: CompileBudget
    ) -> bool:
        """Store an engine compiled within ``budget``; whether it was."""
        digest, store = self.digest, self.store
        entry = {
            "format": FORMAT,
            "digest": digest,
            "portable": portable,
            "race": race,
            "budget": (budget.time_limit, budget.max_ground_rules),
        }
        try:
            data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # noqa: BLE001 - an engine that does not pickle: not stored
            log.warning("engine not stored: %s", error)
            return False
        if len(data) > store.max_bytes:
            log.info("engine not stored: %d MB, over the store's limit", len(data) >> 20)
            return False
        if not store.usable() or not store.write_whole(store.path_of(digest, ENGINE_SUFFIX), data):
            return False
        store.trim()
        return True

    # -- failures ------------------------------------------------------------------

    def failure(self, budget: CompileBudget) -> GdlError | None:
        """Why compiling within ``budget`` failed before, when it would fail again; None
        when nothing is stored."""
        path = self.store.path_of(self.digest, FAILURES_SUFFIX)
        try:
            failures = json.loads(path.read_text(encoding="utf-8"))
            found = _failure_within(failures, budget)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, AttributeError) as error:
            log.warning("stored failures %s removed: %s", path.name, error)
            path.unlink(missing_ok=True)
            return None
        if found is None:
            return None
        from .compiled import errors

        kind, reason = found
        failure: GdlError = getattr(errors, kind)(reason)
        return failure

    def keep_failure(self, budget: CompileBudget, error: GdlError) -> bool:
        """Store a failure that would fail again (see :func:`.compile_memo.fails_again`);
        whether it was (one that the clock made is not)."""
        kind = type(error).__name__
        store = self.store
        if kind not in FAILURE_KINDS or not store.usable():
            return False
        path = store.path_of(self.digest, FAILURES_SUFFIX)
        with _FAILURES_LOCK:
            try:
                failures = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(failures, dict):
                    failures = {}
            except (OSError, ValueError):
                failures = {}
            failures[_budget_key(budget)] = [kind, getattr(error, "reason", str(error))]
            return store.write_whole(path, json.dumps(failures, sort_keys=True).encode())


def store_directory() -> Path | None:
    """Where the store is, as ``GGP_ENGINE_STORE`` says (None: turned off)."""
    said = os.environ.get(STORE_VARIABLE)
    if said is not None:
        if said.strip().lower() in OFF or not said.strip():
            return None
        return Path(said).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ggp" / "engines"


def store_megabytes() -> int:
    """The store's size limit in megabytes, as ``GGP_ENGINE_STORE_MB`` says (a
    :class:`ValueError` that says what it takes when it says something else)."""
    said = os.environ.get(SIZE_VARIABLE, "").strip()
    if not said:
        return DEFAULT_MEGABYTES
    try:
        megabytes = int(said)
    except ValueError:
        megabytes = -1
    if megabytes < 0:
        raise ValueError(f"{SIZE_VARIABLE} is {said!r}; give a whole number of megabytes")
    return megabytes


def engine_store() -> EngineStore | None:
    """The store this process uses now (None when turned off)."""
    directory = store_directory()
    if directory is None:
        return None
    return EngineStore(directory, store_megabytes() * 2**20)


def store_entry(rules: list[Rule]) -> StoreEntry | None:
    """The entry of ``rules`` in the store this process uses now (None when turned off)."""
    store = engine_store()
    return store.entry(rules) if store is not None else None


__all__ = [
    "MIN_COMPILE_SECONDS",
    "SIZE_VARIABLE",
    "STORE_VARIABLE",
    "EngineStore",
    "StoreEntry",
    "StoredEngine",
    "code_fingerprint",
    "engine_store",
    "rules_digest",
    "store_directory",
    "store_entry",
]
