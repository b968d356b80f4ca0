"""Check an engine against reference traces (states, legal moves, goals, probes).

A folder holds ``games/<name>.kif`` and ``traces/<name>.json``; the trace format is
GGP-Base's, as described in the shared conformance corpus: seeded random playouts
with the state, legal moves, terminal flag and goals at every step, plus illegal
joint moves ("probes") that must be refused.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from .compiled import CompileError
from .errors import GdlError, GdlValidationError, IllegalMoveError
from .game import Game
from .parser import parse_term
from .state import State
from .terms import RawTerm, to_ggp


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome for one game."""

    name: str
    passed: bool
    detail: str
    seconds: float
    skipped: bool = False

    def line(self) -> str:
        verdict = "skipped" if self.skipped else "passed" if self.passed else "FAILED"
        return f"{self.name}: {verdict} ({self.detail}) [{self.seconds:.2f} s]"


class Mismatch(Exception):
    """The first difference between the engine and the reference."""


def _reference_flagged(trace: dict) -> str | None:
    """What the reference validator said against the game, if anything."""
    report = trace.get("static_validator") or {}
    result = str(report.get("result", "ok"))
    if result != "ok":
        return result
    for warning in report.get("warnings", []):
        if "arity" in warning:
            return warning
    return None


class _Terms:
    """Parses reference strings once."""

    def __init__(self) -> None:
        self.cache: dict[str, RawTerm] = {}

    def __call__(self, text: str) -> RawTerm:
        term = self.cache.get(text)
        if term is None:
            term = self.cache[text] = parse_term(text)
        return term

    def set(self, texts: list[str]) -> set[RawTerm]:
        return {self(text) for text in texts}


def _difference(what: str, ours: set[RawTerm], theirs: set[RawTerm]) -> str:
    missing = sorted(to_ggp(t) for t in theirs - ours)[:5]
    extra = sorted(to_ggp(t) for t in ours - theirs)[:5]
    return f"{what} differ: missing {missing}, extra {extra}"


def _check_step(game: Game, state: State, step: dict, terms: _Terms, where: str) -> None:
    reference_state = terms.set(step["state"])
    if set(state.facts) != reference_state:
        raise Mismatch(f"{where}: " + _difference("states", set(state.facts), reference_state))
    terminal = game.is_terminal(state)
    if terminal != step["terminal"]:
        raise Mismatch(f"{where}: terminal is {terminal}, reference says {step['terminal']}")
    for role, moves in step["legal"].items():
        ours = set(game.engine.legal_moves(state, role))
        theirs = terms.set(moves)
        if ours != theirs:
            raise Mismatch(f"{where}: " + _difference(f"legal moves of {role}", ours, theirs))
    goals = game.defined_goals(state)
    if "goals" in step:
        expected = step["goals"]
        if step["terminal"] or "goals_undefined" in step:
            if goals != expected:
                raise Mismatch(f"{where}: goals {goals}, reference {expected}")
        elif any(goals.get(role) != value for role, value in expected.items()):
            raise Mismatch(f"{where}: goals {goals}, reference {expected}")
    elif not step["terminal"] and len(goals) == len(game.roles):
        raise Mismatch(f"{where}: goals {goals} defined, reference has some undefined")


def check_trace(game: Game, trace: dict) -> str:
    """Replay every playout and probe of ``trace``; raise :class:`Mismatch` on a difference."""
    terms = _Terms()
    if game.roles != trace["roles"]:
        raise Mismatch(f"roles {game.roles}, reference {trace['roles']}")
    initial = game.initial_state()
    if set(initial.facts) != terms.set(trace["init"]):
        raise Mismatch(_difference("initial states", set(initial.facts), terms.set(trace["init"])))
    visited: dict[tuple[int, int], State] = {}
    transitions = 0
    for number, playout in enumerate(trace["playouts"]):
        state = initial
        for index, step in enumerate(playout["steps"]):
            where = f"playout {number} step {index}"
            _check_step(game, state, step, terms, where)
            visited[(number, index)] = state
            if "joint" in step:
                joint = [terms(move) for move in step["joint"]]
                try:
                    state = game.next_state(state, joint)
                except IllegalMoveError as error:
                    raise Mismatch(f"{where}: reference joint move refused: {error}") from error
                transitions += 1
    probes = trace.get("probes", [])
    for probe in probes:
        where = f"probe at playout {probe['playout']} step {probe['step']}"
        probed = visited.get((probe["playout"], probe["step"]))
        if probed is None:
            raise Mismatch(f"{where}: no such step in the trace")
        state = probed
        try:
            game.next_state(state, [terms(move) for move in probe["joint"]])
        except IllegalMoveError:
            continue
        raise Mismatch(f"{where}: illegal joint move {probe['joint']} was accepted")
    return f"{len(trace['playouts'])} playouts, {transitions} transitions, {len(probes)} probes"


def run_game(task: tuple[str, str, str, float, str]) -> GameResult:
    """Check one game; :func:`run` calls it in a child process that it kills past the limit."""
    name, game_path, trace_path, _limit, engine = task
    started = time.perf_counter()

    def result(passed: bool, detail: str) -> GameResult:
        return GameResult(name, passed, detail, time.perf_counter() - started)

    try:
        trace = json.loads(Path(trace_path).read_text(encoding="utf-8"))
        if not isinstance(trace, dict):
            raise ValueError("the trace is not a JSON object")
    except (OSError, ValueError) as error:
        return result(False, f"unreadable trace: {error}")
    if not Path(game_path).is_file():
        return result(False, f"no game file {Path(game_path).name} beside the trace")
    try:
        game = Game.from_file(game_path, engine=engine)
    except GdlValidationError as error:
        flagged = _reference_flagged(trace)
        summary = error.problems[0] if error.problems else str(error)
        if flagged:
            return result(
                True,
                f"refused as invalid GDL, as the reference validator flagged it: {summary}",
            )
        return result(False, f"refused as invalid GDL: {summary}")
    except CompileError as error:
        return GameResult(name, True, f"does not compile: {error.reason}", 0.0, skipped=True)
    except GdlError as error:
        return result(False, f"could not load: {error}")
    except RecursionError:
        return result(False, "recursion too deep")
    try:
        return result(True, check_trace(game, trace))
    except Mismatch as mismatch:
        return result(False, str(mismatch))
    except GdlError as error:
        return result(False, f"engine error: {error}")
    except RecursionError:
        return result(False, "recursion too deep")
    except (KeyError, TypeError, IndexError, ValueError) as error:
        return result(False, f"malformed trace: {type(error).__name__}: {error}")


def _child(task: tuple[str, str, str, float, str], out: Connection) -> None:
    """The body of one game's process: check the game, send the result back."""
    try:
        outcome = run_game(task)
    except BaseException as error:  # reported by the parent as a failure of this game
        outcome = GameResult(task[0], False, f"the check failed: {error!r}", 0.0)
    out.send(outcome)
    out.close()


@dataclass
class _Running:
    """A game being checked in its own process, with its deadline on the monotonic clock."""

    task: tuple[str, str, str, float, str]
    process: multiprocessing.process.BaseProcess
    reader: Connection
    started: float
    deadline: float


def _context() -> Any:
    """Processes forked from a single-threaded server that has the engine loaded.

    Forking the caller itself could copy a lock held by one of its threads into the
    child (a test runner's, say) and hang it; the fork server has no other threads.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _launch(task: tuple[str, str, str, float, str]) -> _Running:
    context = _context()
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(task, writer), daemon=True)
    started = time.monotonic()
    process.start()
    writer.close()
    return _Running(task, process, reader, started, started + task[3])


def _collect(running: _Running, now: float) -> GameResult | None:
    """The result of a finished or overdue game (killing it when overdue); else ``None``."""
    name, limit = running.task[0], running.task[3]
    alive = running.process.is_alive()
    if running.reader.poll():
        try:
            outcome: GameResult = running.reader.recv()
        except (EOFError, OSError):
            outcome = GameResult(name, False, "the check process died", now - running.started)
        running.process.join()
        running.reader.close()
        return outcome
    if not alive:
        running.process.join()
        running.reader.close()
        code = running.process.exitcode
        return GameResult(
            name, False, f"the check process died (exit code {code})", now - running.started
        )
    if now >= running.deadline:
        running.process.kill()
        running.process.join()
        running.reader.close()
        return GameResult(name, False, f"time limit of {limit:g} s exceeded", now - running.started)
    return None


def _run_all(tasks: list[tuple[str, str, str, float, str]], jobs: int) -> list[GameResult]:
    """Check every task, each in its own process, at most ``jobs`` at once.

    The limit is kept from outside: a game still running at its deadline is killed, so
    nothing inside the check (a native call, a swallowed exception) can outlast it.
    """
    waiting = list(reversed(tasks))
    running: list[_Running] = []
    results: list[GameResult] = []
    try:
        while waiting or running:
            while waiting and len(running) < max(1, jobs):
                running.append(_launch(waiting.pop()))
            now = time.monotonic()
            for item in list(running):
                outcome = _collect(item, now)
                if outcome is not None:
                    running.remove(item)
                    results.append(outcome)
            if running:
                timeout = max(0.0, min(item.deadline for item in running) - time.monotonic())
                handles: list = [item.reader for item in running]
                handles += [item.process.sentinel for item in running]
                wait(handles, timeout=timeout)
    finally:
        for item in running:
            item.process.kill()
            item.process.join()
            item.reader.close()
    return results


def find_traces(folder: Path, names: list[str] | None = None) -> list[tuple[str, Path, Path]]:
    """``(name, game file, trace file)`` for every trace in ``folder/traces``."""
    traces = folder / "traces"
    if not traces.is_dir():
        raise FileNotFoundError(f"{folder} has no traces/ folder")
    found = []
    for trace in sorted(traces.glob("*.json")):
        name = trace.stem
        if names and name not in names:
            continue
        found.append((name, folder / "games" / f"{name}.kif", trace))
    return found


def run(
    folder: Path,
    *,
    names: list[str] | None = None,
    jobs: int = 1,
    limit: float = 120.0,
    engine: str = "interpreter",
) -> Iterator[GameResult]:
    """Check every trace of ``folder``, yielding results in name order."""
    tasks = [
        (name, str(game), str(trace), limit, engine)
        for name, game, trace in find_traces(folder, names)
    ]
    # Longest traces first keeps the workers busy until the end.
    tasks.sort(key=lambda task: -Path(task[2]).stat().st_size)
    results = _run_all(tasks, jobs)
    yield from sorted(results, key=lambda result: result.name)
