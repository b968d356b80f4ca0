"""The rules worker: a process that loads one game and answers for it over its pipes.

Started by :mod:`server.match.rules.process` as ``python -m server.match.rules.worker
MEMORY_MB`` with a Unix socket as stdin.  Requests and answers are frames
(:mod:`.wire`) on that socket (fd 1 is pointed at stderr, so nothing the rules print
can corrupt a frame).  States stay here, referred to by integer handles.

The process started by the server is a game's *template*: it loads the game (and
its step limit) once; ``fork`` requests, each carrying a fresh socket, make a worker
that inherits the loaded game and answers on that socket.  The template reaps its
workers and tells the server how one ended (``status``).  A worker serves many
matches of its game, one request at a time: every state it holds has a handle of its
own (with the printer of its match), ``forget`` drops the handles of a match that
ended, and ``step_from`` steps from a state given as text, so that a match can move
to another worker of the game.

Budgets, enforced here:

- CPU: every request arms a CPU-time itimer (``ITIMER_PROF``) with its budget; when
  it fires, the request is abandoned, the answer is ``limit`` and the worker exits.
  ``RLIMIT_CPU`` is moved to the same budget plus a grace of two seconds before each
  request, so that time spent inside C code (where Python cannot interrupt) ends in
  ``SIGXCPU`` from the kernel.
- Memory: ``RLIMIT_AS`` caps the address space; a ``MemoryError`` answers ``limit``
  and the worker exits.
- Size: a state or a role's legal moves past :data:`.budget.MAX_STATE_TEXT` /
  :data:`.budget.MAX_LEGAL_MOVES` answer ``limit`` too.

Answers: ``("ok", value)``, ``("error", message)`` for an error of the rules (the
worker goes on), ``("limit", message)`` (the worker then exits).
"""

from __future__ import annotations

import array
import math
import os
import resource
import signal
import socket
import sys
from typing import Any

from server.gdl.state import StatePrinter
from server.gdl.terms import MAX_TERM_DEPTH

from .budget import MAX_LEGAL_MOVES, MAX_STATE_TEXT
from .wire import HEADER, decode, encode

CPU_GRACE = 2
"""Seconds of CPU time past a request's budget before the kernel stops the worker."""


class _OverLimit(Exception):
    """A state or a list of legal moves past the size a match can carry."""


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


_REQUESTS = frozenset(
    {
        "load",
        "step_limit",
        "initial",
        "step",
        "step_from",
        "state",
        "goals",
        "goals_at",
        "reset",
        "forget",
    }
)

UNANSWERED = frozenset({"forget"})
"""Requests the worker carries out without answering: the server sends them without
waiting (a match dropping its states at its end costs no round trip)."""

_LOADING = {
    "load": "to load the game",
    "step_limit": "to load the game",
    "goals_at": "for the goals of a recorded state",
}
"""Requests under the load budget, and what they do (for messages)."""

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
        self.states: dict[int, tuple[Any, StatePrinter]] = {}
        """States by handle, each with the printer of its match (which prints the
        match's successive states at the cost of what changed)."""
        self.next_handle = 1

    # -- requests -------------------------------------------------------------------

    def load(
        self,
        text: str,
        engine: str,
        want_step_limit: bool,
        step_cpu: float,
        load_cpu: float,
        compile_time_limit: float | None = None,
        max_ground_rules: int | None = None,
    ) -> tuple[list[str], int | None, str]:
        """The roles, the default step limit (if wanted) and the engine that answers."""
        from server.gdl import Game

        from ..step_limit import default_step_limit

        del step_cpu, load_cpu  # taken by handle()
        self.game = Game.from_text(
            text,
            engine=engine,
            compile_time_limit=compile_time_limit,
            max_ground_rules=max_ground_rules,
        )
        limit = default_step_limit(self.game) if want_step_limit else None
        return list(self.game.roles), limit, self.game.engine.name

    def step_limit(self) -> int:
        from ..step_limit import default_step_limit

        return default_step_limit(self._game())

    def initial(self) -> Position:
        return self._position(self._game().initial_state(), StatePrinter())

    def step(self, handle: int, joint: list[Any]) -> Position:
        state, printer = self.states.pop(handle)
        return self._position(self._game().next_state(state, joint), printer)

    def step_from(self, text: str, joint: list[Any]) -> Position:
        from server.gdl import State

        state = State(_read_state(text))
        printer = StatePrinter()
        printer.to_ggp(state)  # the next state is printed at the cost of what changed
        return self._position(self._game().next_state(state, joint), printer)

    def state(self, text: str) -> Position:
        from server.gdl import State

        return self._position(State(_read_state(text)), StatePrinter())

    def goals_at(self, text: str) -> tuple[dict[str, int], str | None]:
        from server.gdl import State

        return self._goals(State(_read_state(text)))

    def goals(self, handle: int) -> tuple[dict[str, int], str | None]:
        return self._goals(self.states[handle][0])

    def reset(self) -> None:
        self.states.clear()

    def forget(self, handles: list[int]) -> None:
        for handle in handles:
            self.states.pop(handle, None)

    # -- helpers --------------------------------------------------------------------

    def _game(self) -> Any:
        if self.game is None:
            raise RuntimeError("no game loaded")
        return self.game

    def _position(self, state: Any, printer: StatePrinter) -> Position:
        from server.gdl.terms import unwrap

        game = self._game()
        handle = self.next_handle
        self.next_handle += 1
        self.states[handle] = (state, printer)
        if len(state) * 4 > MAX_STATE_TEXT:  # each fluent prints as at least 4 characters
            raise _OverLimit(
                f"the state has {len(state):,} fluents, too many to print in "
                f"{MAX_STATE_TEXT:,} characters"
            )
        if not printer.fits(state):
            raise _OverLimit(
                f"the rules derived a state nested deeper than {MAX_TERM_DEPTH} levels"
            )
        text = printer.to_ggp(state)
        if len(text) > MAX_STATE_TEXT:
            raise _OverLimit(
                f"the state is {len(text):,} characters long, more than the "
                f"{MAX_STATE_TEXT:,} allowed"
            )
        if game.is_terminal(state):
            goals, message = self._goals(state)
            return handle, text, True, None, goals, message
        legal = []
        for role in game.roles:
            moves = game.legal_moves(state, role)
            if len(moves) > MAX_LEGAL_MOVES:
                raise _OverLimit(
                    f"role {role} has {len(moves):,} legal moves, more than the "
                    f"{MAX_LEGAL_MOVES:,} allowed"
                )
            legal.append([unwrap(move) for move in moves])
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
        if kind == "load":
            self.step_cpu, self.load_cpu = arguments[3], arguments[4]
        budget = self.load_cpu if kind in _LOADING else self.step_cpu
        what = _LOADING.get(kind, "in one step")
        if kind not in _REQUESTS:
            return ("error", f"unknown request {kind!r}"), False
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
        except _OverLimit as error:
            return ("limit", str(error)), True
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


class _Channel:
    """The socket to the server: exact reads of frames, file descriptors passed along."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.sock.setblocking(True)

    def _exactly(self, size: int, fds: list[int]) -> bytes | None:
        chunks = []
        while size:
            data, ancillary, _, _ = self.sock.recvmsg(size, socket.CMSG_SPACE(4 * 4))
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    usable = len(payload) - len(payload) % 4
                    fds.extend(array.array("i", payload[:usable]))
            if not data:
                return None
            chunks.append(data)
            size -= len(data)
        return b"".join(chunks)

    def read(self) -> tuple[Any, list[int]] | None:
        """The next request and the file descriptors that came with it; ``None`` at the end."""
        fds: list[int] = []
        header = self._exactly(HEADER.size, fds)
        if header is None:
            return None
        body = self._exactly(HEADER.unpack(header)[0], fds)
        if body is None:
            return None
        return decode(body), fds

    def write(self, message: Any) -> None:
        self.sock.sendall(encode(message))

    def close(self) -> None:
        self.sock.close()


_children: dict[int, int] = {}
"""Exit statuses of forked workers, by process id (kept by the template)."""


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _children[pid] = os.waitstatus_to_exitcode(status)
        if len(_children) > 1000:
            _children.pop(next(iter(_children)))


def _fork(channel: _Channel, fds: list[int]) -> int | None:
    """Fork a worker that serves the loaded game on the socket ``fds[0]``.

    Returns the child's process id in the template, ``None`` in the child (which
    has taken the socket over as its channel).
    """
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _children.clear()
    channel.close()
    for fd in fds[1:]:
        os.close(fd)
    return None


def serve(memory_mb: int) -> int:
    """Answer requests until the server closes the socket or a budget is spent.

    The first process is a game's template: it loads the game once and forks a
    worker per match on request (the child inherits the loaded game); the worker
    serves its match on the socket that came with the request.
    """
    os.dup2(2, 1)
    channel = _Channel(os.dup(0))
    os.close(0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGPROF, _on_timer)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    signal.signal(signal.SIGCHLD, _reap)
    host = _Host(memory_mb)
    while True:
        received = channel.read()
        if received is None:
            return 0
        request, fds = received
        if request[0] == "fork":
            if not fds:
                channel.write(("error", "no socket came with the fork request"))
                continue
            pid = _fork(channel, fds)
            if pid is None:
                channel = _Channel(fds[0])
                host.states.clear()
                continue
            channel.write(("ok", pid))
            continue
        if request[0] == "status":
            channel.write(("ok", _children.get(request[1])))
            continue
        for fd in fds:
            os.close(fd)
        answer, stop = host.handle(request)
        if request[0] not in UNANSWERED:
            channel.write(answer)
        if stop:
            return 0


def main() -> int:
    """Serve, and end with one line (never a traceback) on an unexpected failure."""
    try:
        return serve(int(sys.argv[1]))
    except KeyboardInterrupt:
        return 1
    except Exception as error:
        print(f"rules worker {os.getpid()}: {type(error).__name__}: {error}", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
