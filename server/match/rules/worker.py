"""The rules worker: a process that loads one game and answers for it over its pipes.

Started by :mod:`server.match.rules.process` as ``python -m server.match.rules.worker
MEMORY_MB``.  Requests and answers are frames (:mod:`.wire`) on stdin and on the
original stdout (fd 1 is pointed at stderr, so nothing the rules print can corrupt
a frame).  States stay here, referred to by integer handles.

Budgets, enforced here:

- CPU: every request arms a CPU-time itimer (``ITIMER_PROF``) with its budget; when
  it fires, the request is abandoned, the answer is ``limit`` and the worker exits.
  ``RLIMIT_CPU`` is moved to the same budget plus a grace of two seconds before each
  request, so that time spent inside C code (where Python cannot interrupt) ends in
  ``SIGXCPU`` from the kernel.
- Memory: ``RLIMIT_AS`` caps the address space; a ``MemoryError`` answers ``limit``
  and the worker exits.

Answers: ``("ok", value)``, ``("error", message)`` for an error of the rules (the
worker goes on), ``("limit", message)`` (the worker then exits).
"""

from __future__ import annotations

import math
import os
import resource
import signal
import sys
from typing import Any, BinaryIO

from .wire import HEADER, decode, encode

CPU_GRACE = 2
"""Seconds of CPU time past a request's budget before the kernel stops the worker."""


class _OverBudget(BaseException):
    """Raised by the CPU-time itimer; a BaseException so that no ``except Exception``
    in the rules swallows it."""


_fired = False


def _on_timer(signum: int, frame: object) -> None:
    global _fired
    _fired = True
    raise _OverBudget


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _arm(budget: float) -> None:
    global _fired
    _fired = False
    soft = math.ceil(_cpu_used() + budget) + CPU_GRACE
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    signal.setitimer(signal.ITIMER_PROF, budget)


def _disarm() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)


Position = tuple[int, str, bool, list[list[Any]] | None, dict[str, int] | None, str | None]
"""handle, state text, terminal, legal moves per role (if not terminal), goals, goal error."""


class _Host:
    """One loaded game and the states of the match it serves."""

    def __init__(self, memory_mb: int) -> None:
        from server.gdl import Game

        self.memory_mb = memory_mb
        self.game: Game | None = None
        self.step_cpu = 1.0
        self.load_cpu = 1.0
        self.states: dict[int, Any] = {}
        self.next_handle = 1

    # -- requests -------------------------------------------------------------------

    def load(
        self, text: str, engine: str, want_step_limit: bool, step_cpu: float, load_cpu: float
    ) -> tuple[list[str], int | None]:
        from server.gdl import Game

        from ..step_limit import default_step_limit

        self.step_cpu, self.load_cpu = step_cpu, load_cpu
        self.game = Game.from_text(text, engine=engine)
        limit = default_step_limit(self.game) if want_step_limit else None
        return list(self.game.roles), limit

    def initial(self) -> Position:
        self.states.clear()
        return self._position(self._game().initial_state())

    def step(self, handle: int, joint: list[Any]) -> Position:
        state = self.states.pop(handle)
        return self._position(self._game().next_state(state, joint))

    def state(self, text: str) -> Position:
        from server.gdl import State

        return self._position(State(_read_state(text)))

    def goals(self, handle: int) -> tuple[dict[str, int], str | None]:
        return self._goals(self.states[handle])

    def reset(self) -> None:
        self.states.clear()

    # -- helpers --------------------------------------------------------------------

    def _game(self) -> Any:
        if self.game is None:
            raise RuntimeError("no game loaded")
        return self.game

    def _position(self, state: Any) -> Position:
        from server.gdl.terms import unwrap

        game = self._game()
        handle = self.next_handle
        self.next_handle += 1
        self.states[handle] = state
        text = state.to_ggp()
        if game.is_terminal(state):
            goals, message = self._goals(state)
            return handle, text, True, None, goals, message
        legal = [[unwrap(move) for move in game.legal_moves(state, role)] for role in game.roles]
        return handle, text, False, legal, None, None

    def _goals(self, state: Any) -> tuple[dict[str, int], str | None]:
        from server.gdl import GoalError

        game = self._game()
        defined = game.defined_goals(state)
        if len(defined) == len(game.roles):
            return defined, None
        try:
            game.goals(state)
        except GoalError as error:
            return defined, str(error)
        return defined, None

    def handle(self, request: tuple[Any, ...]) -> tuple[tuple[str, Any], bool]:
        """The answer to one request, and whether the worker must stop after it."""
        from server.gdl import GdlError

        kind, arguments = request[0], request[1:]
        loading = kind == "load"
        budget = (arguments[4] if loading else self.step_cpu) if kind != "reset" else 60.0
        what = "to load the game" if loading else "in one step"
        try:
            _arm(budget)
            try:
                value = getattr(self, kind)(*arguments)
            finally:
                _disarm()
            if _fired:
                raise _OverBudget
        except _OverBudget:
            return ("limit", f"the rules used more than {budget:g} s of CPU time {what}"), True
        except MemoryError:
            self.states.clear()
            return (
                "limit",
                f"the rules needed more than {self.memory_mb} MB of memory {what}",
            ), True
        except GdlError as error:
            return ("error", str(error)), False
        except RecursionError:
            return ("error", "the rules nest too deeply to evaluate"), True
        except Exception as error:  # a bad request or a fault of the engine: say so, go on
            return ("error", f"{type(error).__name__}: {error}"), False
        return ("ok", value), False


def _read_state(text: str) -> frozenset[Any]:
    """The fluents of a state as logs print it: ``( ( cell 1 1 b ) ... )``."""
    from server.gdl.parser import node_to_term, read_nodes

    nodes = read_nodes(text)
    if len(nodes) != 1 or isinstance(nodes[0].value, str):
        raise ValueError("a state is one parenthesised list of fluents")
    return frozenset(node_to_term(node) for node in nodes[0].value)


def _read(stream: BinaryIO) -> Any | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return decode(body)


def serve(memory_mb: int) -> int:
    """Answer requests until the server closes the pipe or a budget is spent."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGPROF, _on_timer)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    host = _Host(memory_mb)
    while True:
        request = _read(requests)
        if request is None:
            return 0
        answer, stop = host.handle(request)
        out.write(encode(answer))
        out.flush()
        if stop:
            return 0


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
