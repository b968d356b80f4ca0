"""Compiling a game in another process while the interpreter plays it.

Engine ``auto`` compiles a game only within the set-up budget (2 s of CPU time by
default, :mod:`.compile_budget`). Past it, it falls back to the interpreter. On the large
games of the corpus the interpreter runs 2 to 8 times faster than GGP-Base's prover, the
compiled engine 15 to 35 times (chineseCheckers4, pacman3p, crossers3, urmAdd, brawl).

A :class:`~server.gdl.game.Game` loaded with ``compile_aside=True`` (or with the
environment variable ``GGP_COMPILE_ASIDE=1``) then compiles the rules in another process,
within the budget a 60 s start clock buys (:func:`aside_budget`). It plays on the
interpreter meanwhile. The other process runs the same timed race as ``auto``
(:mod:`.engine_trial`). When the compiled engine wins, it is sent back pickled
(:class:`~server.gdl.compiled.engine.PortableEngine`: no grounding and no code generation
here), and the game switches to it between two calls.

Results do not change, only speed: both engines answer every query alike, and states
made by either work with the other.

- One compile runs at a time per process. The others wait in a queue (at most
  :data:`MAX_WAITING`).
- A compile whose games have all been dropped is skipped, or stopped if under way.
- What a compile aside ends with is kept in :data:`~.compile_memo.COMPILE_MEMO` under its
  budget. The next load of the same rules with ``compile_aside`` gets the compiled engine
  at once, and a failure that would fail again is not tried again.
- The other process is a daemon: it ends with the process that started it.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .compile_budget import MAX_TIME_LIMIT, CompileBudget
from .compile_memo import COMPILE_MEMO, MemoKey, fails_again, memo_key
from .engine import Engine
from .engine_trial import Race
from .errors import GdlError
from .parser import Rule

if TYPE_CHECKING:
    from .compiled.engine import PortableEngine

log = logging.getLogger(__name__)

ASIDE_VARIABLE = "GGP_COMPILE_ASIDE"
MAX_WAITING = 8
"""Compiles that may wait for the one under way; past them a game plays on the
interpreter only."""
POLL_SECONDS = 0.25
"""How often the thread that waits for the other process looks whether its games were
all dropped."""


def aside_budget() -> CompileBudget:
    """The budget of a compile aside: what a 60 s start clock buys (10 s of CPU time,
    480,000 ground rules), whatever ``GGP_COMPILE_TIME_LIMIT`` and
    ``GGP_COMPILE_MAX_RULES`` say: they set the budget of set-up, which failed."""
    from .compiled.engine import DEFAULT_MAX_GROUND_RULES, rule_budget

    return CompileBudget(MAX_TIME_LIMIT, max(DEFAULT_MAX_GROUND_RULES, rule_budget(MAX_TIME_LIMIT)))


YES = ("1", "true", "yes", "on")
NO = ("", "0", "false", "no", "off")


def wanted(compile_aside: bool | None) -> bool:
    """Whether a game compiles aside: as asked, else as ``GGP_COMPILE_ASIDE`` says
    (a :class:`ValueError` that says what it takes when it says something else)."""
    if compile_aside is not None:
        return compile_aside
    said = os.environ.get(ASIDE_VARIABLE, "").strip().lower()
    if said not in YES and said not in NO:
        raise ValueError(
            f"{ASIDE_VARIABLE} is {said!r}; use 1, true, yes or on to compile aside, "
            "0, false, no or off not to"
        )
    return said in YES


class Switchable(Protocol):
    """A game that can take the compiled engine between two calls."""

    roles: list[str]

    def _switch_to(self, engine: Engine) -> None: ...


@dataclass(frozen=True)
class AsideOutcome:
    """What the other process sends back."""

    portable: PortableEngine | None
    reason: str | None
    """Why there is no engine (None when there is one)."""
    race: Race | None
    cpu_seconds: float
    fails_again: bool
    """Whether the failure does not depend on the machine's load (kept in the memo)."""


class AsideCompile:
    """One compile aside: its budget, the games waiting for it and how it ended."""

    def __init__(
        self, key: MemoKey, rules: list[Rule], budget: CompileBudget, race_seconds: float = 0.25
    ) -> None:
        self.key = key
        self.rules = rules
        self.budget = budget
        self.race_seconds = race_seconds
        """CPU time each engine is timed at most in the race."""
        self.games: weakref.WeakSet[Any] = weakref.WeakSet()
        self.finished = threading.Event()
        self._switching = threading.Lock()
        """Held while games join and while the engine is handed to them, so that none
        joins between the hand-over and the end."""
        self.engine: Engine | None = None
        """The compiled engine, once it is here and won its race."""
        self.reason: str | None = None
        """Why it ended without an engine."""
        self.race: Race | None = None
        self.cpu_seconds = 0.0
        """CPU time the other process spent compiling and racing."""
        self.started: float | None = None
        self.seconds: float | None = None
        """Wall-clock seconds from the start of the other process to the switch."""
        self.reused = False
        """Whether the engine was kept from an earlier compile aside (no process)."""

    @classmethod
    def kept(
        cls,
        key: MemoKey,
        rules: list[Rule],
        budget: CompileBudget,
        engine: Engine,
        race: Race | None,
    ) -> AsideCompile:
        """A compile aside that ended before, in this process: its engine at once."""
        aside = cls(key, rules, budget)
        aside.engine, aside.race, aside.reused = engine, race, True
        aside.finished.set()
        return aside

    @property
    def status(self) -> str:
        """``waiting``, ``compiling``, ``compiled`` or ``failed``."""
        if self.finished.is_set():
            return "compiled" if self.engine is not None else "failed"
        return "waiting" if self.started is None else "compiling"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until it ended (and its games switched); whether it did in ``timeout``."""
        return self.finished.wait(timeout)

    def join(self, game: Switchable) -> None:
        """Have ``game`` switch to the engine when it is here (at once if it is)."""
        with self._switching:
            self.games.add(game)
            if self.finished.is_set() and self.engine is not None:
                game._switch_to(self.engine)

    def end(self, engine: Engine | None, reason: str | None) -> None:
        """Record how it ended and switch the games waiting for it."""
        self.engine, self.reason = engine, reason
        if self.started is not None:
            self.seconds = time.monotonic() - self.started
        with self._switching:
            if engine is not None:
                for game in list(self.games):
                    game._switch_to(engine)
            self.finished.set()
        if engine is not None:
            log.info("compiled aside in %.1f s of CPU time: switched", self.cpu_seconds)
        else:
            log.info("no compile aside: %s", reason)

    def __repr__(self) -> str:
        return f"<AsideCompile {self.status}{': ' + self.reason if self.reason else ''}>"


def _stored_failure(rules: list[Rule], budget: CompileBudget) -> GdlError | None:
    """Why a compile aside of ``rules`` within ``budget`` failed in a process before,
    when the engine store says so."""
    from .engine_store import store_entry

    entry = store_entry(rules)
    return entry.failure(budget) if entry is not None else None


def compile_and_race(
    rules: list[Rule], time_limit: float, max_ground_rules: int, race_seconds: float
) -> AsideOutcome:
    """Compile ``rules`` and race the engine against the interpreter (in the other
    process); every error becomes the outcome's reason."""
    from .compiled import compile_engine
    from .engine_trial import race
    from .interpreter import Interpreter

    started = time.process_time()
    try:
        compiled = compile_engine(rules, max_ground_rules=max_ground_rules, time_limit=time_limit)
    except GdlError as error:
        reason = getattr(error, "reason", str(error))
        return AsideOutcome(None, reason, None, time.process_time() - started, fails_again(error))
    outcome, interpreter = race(compiled, lambda: Interpreter(rules), seconds=race_seconds)
    spent = time.process_time() - started
    if interpreter is not None and outcome.interpreter_wins:
        return AsideOutcome(None, outcome.reason, outcome, spent, True)
    return AsideOutcome(compiled.portable(), None, outcome, spent, False)


def child_main() -> None:
    """The other process: read the rules, the budget, the answer's file and the parent's
    process id (pickled) on standard input, compile and race, write the outcome (pickled)
    to that file unless the parent is gone, and say so on standard output (a file, not the pipe: the parent reads it in one call, where
    reading a pipe 64 kB at a time waits for the lock of its busy main thread each time).
    Whatever else writes to standard output goes to standard error instead. CPU time is
    capped at :data:`CPU_LIMIT_FACTOR` times the time limit, in case a stage overruns it."""
    import os
    import pickle
    import resource
    import sys

    said = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    rules, (time_limit, max_ground_rules, race_seconds), answer, parent = pickle.load(
        sys.stdin.buffer
    )
    cpu = int(time_limit * CPU_LIMIT_FACTOR + CPU_LIMIT_SLACK)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    try:
        outcome = compile_and_race(rules, time_limit, max_ground_rules, race_seconds)
    except BaseException as error:  # noqa: BLE001 - sent back as the reason, never raised
        reason = f"compiling failed ({type(error).__name__}: {error})"
        outcome = AsideOutcome(None, reason, None, time.process_time(), False)
    if os.getppid() != parent:  # orphaned: nobody will read the answer
        return
    try:
        with open(answer, "wb") as file:
            pickle.dump(outcome, file, protocol=pickle.HIGHEST_PROTOCOL)
        said.write(b"done\n")
        said.close()
    except OSError:  # the parent is gone, and its file with it
        pass
    store_outcome(rules, CompileBudget(time_limit, max_ground_rules), outcome)


def store_outcome(rules: list[Rule], budget: CompileBudget, outcome: AsideOutcome) -> None:
    """Hand what a compile aside ended with to the engine store (:mod:`.engine_store`),
    once the parent has its answer: the engine (whatever it cost: set-up failed to make
    it, and would fail again), or a failure that would fail again."""
    from .engine_store import store_entry

    entry = store_entry(rules)
    if entry is None:
        return
    if outcome.portable is not None:
        entry.keep_engine(outcome.portable, outcome.race, budget)
    elif outcome.fails_again:
        entry.keep_failure(budget, _failure(outcome))


def _failure(outcome: AsideOutcome) -> GdlError:
    """The failure an outcome without an engine stands for (a lost race, or another)."""
    from .compiled.errors import CompileError, SlowerThanInterpreter

    reason = outcome.reason or "no engine"
    if outcome.race is not None and outcome.race.interpreter_wins:
        return SlowerThanInterpreter(reason)
    return CompileError(reason)


CPU_LIMIT_FACTOR = 3
CPU_LIMIT_SLACK = 30
"""The other process stops at ``CPU_LIMIT_FACTOR`` times the time limit plus this many
seconds of CPU time, whatever it does (the compile keeps to the limit in CPU time of
its own; this bounds a stage that would not)."""

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
"""The folder that holds the ``server`` package, for the other process to import it."""

CHILD_COMMAND = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from server.gdl.compile_aside import child_main; child_main()"
)
"""The other process's program: a fresh interpreter that imports only this package,
never the main module of the process that starts it (as ``multiprocessing`` would)."""


class _Runner:
    """Runs the compiles aside of this process one at a time, in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[AsideCompile] = deque()
        self._pending: dict[MemoKey, AsideCompile] = {}
        """The compiles waiting or under way, by key: a second game joins its compile."""
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        """The other process of the compile under way."""
        self._answer: str | None = None
        """The file it writes its answer to."""

    def submit(
        self, rules: list[Rule], budget: CompileBudget, game: Switchable, race_seconds: float
    ) -> AsideCompile:
        """Compile ``rules`` aside within ``budget`` for ``game`` (joining a compile of the
        same rules under way, or taking an engine an earlier one made)."""
        key = memo_key(
            rules, max_ground_rules=budget.max_ground_rules, time_limit=budget.time_limit
        )
        with self._lock:
            kept = COMPILE_MEMO.compiled(key)
            if kept is not None:
                done = AsideCompile.kept(key, rules, budget, kept.engine, kept.race)
                done.join(game)
                return done
            pending = self._pending.get(key)
            if pending is not None:
                pending.join(game)
                return pending
            aside = AsideCompile(key, rules, budget, race_seconds)
            aside.join(game)
            known = COMPILE_MEMO.failure(key) or _stored_failure(rules, budget)
            if known is not None:
                COMPILE_MEMO.keep_failure(key, known)
                aside.end(None, getattr(known, "reason", str(known)))
                return aside
            if len(self._waiting) >= MAX_WAITING:
                aside.end(None, f"{MAX_WAITING} compiles aside are waiting already")
                return aside
            self._pending[key] = aside
            self._waiting.append(aside)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="ggp-compile-aside", daemon=True
                )
                self._thread.start()
        return aside

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._thread = None
                    return
                aside = self._waiting.popleft()
            try:
                self._run(aside)
            except Exception as error:  # noqa: BLE001 - the game plays on the interpreter
                if not aside.finished.is_set():
                    aside.end(None, f"compiling aside failed ({type(error).__name__}: {error})")
            finally:
                with self._lock:
                    self._pending.pop(aside.key, None)
                process = self._process
                if process is not None:  # answered: let it finish storing the engine
                    process.wait()
                    self._process = None

    def _run(self, aside: AsideCompile) -> None:
        if not aside.games:
            aside.end(None, "no game waits for it any more")
            return
        budget = (aside.budget.time_limit, aside.budget.max_ground_rules, aside.race_seconds)
        handle, answer = tempfile.mkstemp(prefix="ggp-compile-aside-", suffix=".pickle")
        os.close(handle)
        self._answer = answer
        try:
            said, stopped = self._compile_in_child(aside, budget, answer)
            outcome: AsideOutcome | None = None
            if said == b"done\n":
                try:
                    outcome = pickle.loads(Path(answer).read_bytes())  # noqa: S301 - ours
                except Exception:  # noqa: BLE001 - unreadable: the game plays on as it is
                    stopped = "the compiling process's answer could not be read"
        finally:
            self._answer = None
            Path(answer).unlink(missing_ok=True)
        if outcome is None:
            aside.end(None, stopped or "the compiling process ended without an answer")
            return
        aside.cpu_seconds, aside.race = outcome.cpu_seconds, outcome.race
        if outcome.portable is None:
            reason = outcome.reason or "no engine"
            if outcome.fails_again:
                COMPILE_MEMO.keep_failure(aside.key, _failure(outcome))
            aside.end(None, reason)
            return
        from .compiled.engine import CompiledEngine

        engine = CompiledEngine.from_portable(outcome.portable)
        COMPILE_MEMO.keep_compiled(aside.key, engine, outcome.race)
        aside.end(engine, None)

    def _compile_in_child(
        self, aside: AsideCompile, budget: tuple[float, int, float], answer: str
    ) -> tuple[bytes, str | None]:
        """Run the other process until it says it wrote ``answer`` or ends, or until no
        game waits for it any more; returns what it said and why it was stopped."""
        request = pickle.dumps(
            (aside.rules, budget, answer, os.getpid()), protocol=pickle.HIGHEST_PROTOCOL
        )
        process = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed program
            [sys.executable, "-c", CHILD_COMMAND, PACKAGE_ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._process = process
        aside.started = time.monotonic()
        said: bytes | None = None
        stopped: str | None = None
        try:
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(request)
                process.stdin.close()
            except OSError:
                stopped = "the compiling process did not start"
            while said is None and stopped is None:
                readable, _, _ = select.select([process.stdout], [], [], POLL_SECONDS)
                if readable:
                    said = process.stdout.read()
                elif not aside.games:
                    stopped = "stopped: no game waits for it any more"
        finally:
            if process.poll() is None and not said:
                process.kill()
            if process.stdout is not None:
                process.stdout.close()
            if not said:
                process.wait()
                self._process = None
            # else it may still hand its engine to the engine store: waited for by _work
        if not said and stopped is None:
            stopped = "the compiling process ended without an answer"
        return said or b"", stopped

    def forget(self) -> None:
        """Start afresh in a forked child: the parent's thread and process are not here,
        and the games that waited for them are the parent's (their copies here play on
        the interpreter)."""
        for aside in self._pending.values():
            aside._switching = threading.Lock()  # maybe held by a thread not in this child
            aside.reason = "the process was forked while it compiled aside"
            aside.finished.set()
        self._lock = threading.Lock()
        self._waiting.clear()
        self._pending.clear()
        self._thread = None
        self._process = None
        self._answer = None

    def stop(self) -> None:
        """Stop the compile under way, if any, and remove its answer's file (at exit, when
        the thread that waits for it may never run again)."""
        process, answer = self._process, self._answer
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if answer is not None:
            Path(answer).unlink(missing_ok=True)


RUNNER = _Runner()
"""The compiles aside of this process."""
atexit.register(RUNNER.stop)
os.register_at_fork(after_in_child=RUNNER.forget)


__all__ = [
    "ASIDE_VARIABLE",
    "RUNNER",
    "AsideCompile",
    "AsideOutcome",
    "aside_budget",
    "child_main",
    "compile_and_race",
    "wanted",
]
