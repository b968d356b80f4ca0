"""One rules worker process, seen from the server: send a request, await its answer."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from server.gdl import GdlError

from .errors import RulesFailure, RulesLimitError, RulesWorkerDied
from .wire import HEADER, decode, encode

_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One thread per numeric library: the worker's memory cap counts address space."""


class WorkerProcess:
    """A started worker; one request at a time, answered in order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.broken = False
        self._stuck = False

    @classmethod
    async def start(cls, memory_mb: int) -> WorkerProcess:
        """Start a worker whose address space is capped at ``memory_mb`` megabytes."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.match.rules.worker",
            str(memory_mb),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, **_ENVIRONMENT},
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def usable(self) -> bool:
        return not self.broken and self.process.returncode is None

    async def call(self, request: tuple[Any, ...], cpu: float, what: str) -> Any:
        """Send ``request`` and return the worker's answer.

        ``cpu`` is the request's CPU budget (enforced by the worker); ``what`` says
        what was asked, for messages.  Raises :class:`GdlError` for an error of the
        rules and :class:`RulesFailure` when the worker cannot go on.
        """
        if not self.usable:
            raise RulesWorkerDied("the rules worker has already stopped")
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        loop = asyncio.get_running_loop()
        backstop = loop.call_later(10 * cpu + 10, self._give_up)
        try:
            stdin.write(encode(request))
            await stdin.drain()
            (size,) = HEADER.unpack(await stdout.readexactly(HEADER.size))
            status, value = decode(await stdout.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            self.broken = True
            raise await self._ended(cpu, what, 10 * cpu + 10) from error
        except BaseException:
            self.kill()  # an answer may still be on its way: this worker is out of step
            raise
        finally:
            backstop.cancel()
        if status == "ok":
            return value
        if status == "error":
            raise GdlError(value)
        self.broken = True
        await self._reap()
        raise RulesLimitError(value)

    def kill(self) -> None:
        """Stop the worker at once (its states are lost)."""
        self.broken = True
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def close(self) -> None:
        """Stop the worker and wait for it to go."""
        self.kill()
        await self._reap()

    def _give_up(self) -> None:
        self._stuck = True
        self.kill()

    async def _reap(self) -> int | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        return self.process.returncode

    async def _ended(self, cpu: float, what: str, wall: float) -> RulesFailure:
        code = await self._reap()
        if self._stuck:
            return RulesLimitError(f"the rules gave no answer {what} within {wall:g} s")
        if code is not None and code < 0:
            name = _signal_name(-code)
            if -code == signal.SIGXCPU:
                return RulesLimitError(f"the rules used more than {cpu:g} s of CPU time {what}")
            if -code == signal.SIGKILL:
                return RulesWorkerDied(
                    f"the rules worker was killed ({name}) {what}; it may have run out of memory"
                )
            return RulesWorkerDied(f"the rules worker stopped on {name} {what}")
        return RulesWorkerDied(f"the rules worker stopped {what} (exit status {code})")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
