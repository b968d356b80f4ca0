"""Rules worker processes, seen from the server: send a request, await its answer.

A :class:`Template` is a process the server starts; it loads one game.  A
:class:`Worker` is forked from a template for one match and inherits the loaded
game.  Both talk over a Unix socket, one request at a time.
"""

from __future__ import annotations

import array
import asyncio
import collections
import contextlib
import os
import signal
import socket
import sys
from typing import Any, cast

from server.gdl import GdlError

from .errors import RulesFailure, RulesLimitError, RulesWorkerDied
from .wire import HEADER, decode, encode

_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One thread per numeric library: the worker's memory cap counts address space."""


class _FrameReader(asyncio.Protocol):
    """The reading end of a worker's socket: whole frames, handed to the waiting call.

    A plain protocol rather than asyncio's streams: a frame that arrives in one piece
    (nearly every answer) costs one callback and one future, not a stream's buffers.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._frames: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[bytes] | None = None
        self._lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if not self._buffer and len(data) >= HEADER.size:
            (size,) = HEADER.unpack_from(data)
            if len(data) == HEADER.size + size:  # the usual case: exactly one frame
                self._deliver(data[HEADER.size :])
                return
        self._buffer += data
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            end = HEADER.size + size
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[HEADER.size : end])
            del self._buffer[:end]
            self._deliver(body)

    def _deliver(self, body: bytes) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(body)
        else:
            self._frames.append(body)

    def eof_received(self) -> bool:
        return False  # the transport closes; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionResetError("the rules worker closed its socket"))

    async def frame(self) -> bytes:
        """The body of the next frame; ``ConnectionError`` once the socket closed."""
        if self._frames:
            return self._frames.popleft()
        if self._lost:
            raise ConnectionResetError("the rules worker closed its socket")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            return await self._waiter
        finally:
            self._waiter = None


class _Connection:
    """One side of a socket to a worker: frames in, frames out, in order."""

    def __init__(self, transport: asyncio.Transport, reader: _FrameReader) -> None:
        self.transport = transport
        self.reader = reader
        self.lock = asyncio.Lock()
        self.broken = False
        self._stuck = False

    @classmethod
    async def over(cls, sock: socket.socket) -> _Connection:
        loop = asyncio.get_running_loop()
        transport, reader = await loop.create_unix_connection(_FrameReader, sock=sock)
        return cls(transport, reader)

    async def call(
        self, request: tuple[Any, ...], cpu: float, what: str, passing: socket.socket | None = None
    ) -> Any:
        """Send ``request`` (with the socket ``passing``, if any) and return the answer;
        see :meth:`Worker.call`."""
        if self.broken:
            raise NotSent("the rules worker has already stopped")
        async with self.lock:
            if self.broken:  # it stopped while this request waited its turn
                raise NotSent("the rules worker has already stopped")
            wall = 10 * cpu + 10
            backstop = asyncio.get_running_loop().call_later(wall, self._give_up)
            try:
                if passing is None:
                    self.transport.write(encode(request))
                else:
                    self._send_with_socket(encode(request), passing)
                status, value = decode(await self.reader.frame())
            except ConnectionError as error:
                self.broken = True
                raise _Ended(self._stuck, wall) from error
            except BaseException:
                self.broken = True  # an answer may still be on its way: out of step
                self.on_break()
                raise
            finally:
                backstop.cancel()
        if status == "ok":
            return value
        if status == "error":
            raise GdlError(value)
        self.broken = True
        raise RulesLimitError(value)

    def tell(self, request: tuple[Any, ...]) -> None:
        """Send ``request``, one the worker does not answer, without waiting.

        No lock: a frame is written whole, so it falls between the requests in flight,
        and the worker reads requests in order.
        """
        if not self.broken:
            self.transport.write(encode(request))

    def _send_with_socket(self, frame: bytes, passing: socket.socket) -> None:
        """Write ``frame`` with ``passing`` attached, past the transport (whose buffer
        is empty: requests go one at a time)."""
        raw = self.transport.get_extra_info("socket")
        with socket.socket(fileno=os.dup(raw.fileno())) as channel:
            fds = array.array("i", [passing.fileno()])
            sent = channel.sendmsg([frame], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            if sent < len(frame):
                raise ConnectionError("the request to the rules worker was cut short")

    def _give_up(self) -> None:
        self._stuck = True
        self.on_break()

    def on_break(self) -> None:
        """Stop the process behind this connection (set by the owner)."""

    def close(self) -> None:
        self.broken = True
        self.transport.close()


class NotSent(RulesWorkerDied):
    """The worker had stopped before the request was sent: another worker may take it."""


class _Ended(Exception):
    """The worker's socket closed before the answer came."""

    def __init__(self, stuck: bool, wall: float) -> None:
        self.stuck = stuck
        self.wall = wall


def _failure(code: int | None, stuck: bool, wall: float, cpu: float, what: str) -> RulesFailure:
    """What a worker's end means for the match."""
    if stuck:
        return RulesLimitError(f"the rules gave no answer {what} within {wall:g} s")
    if code is not None and code < 0:
        if -code == signal.SIGXCPU:
            return RulesLimitError(f"the rules used more than {cpu:g} s of CPU time {what}")
        name = _signal_name(-code)
        if -code == signal.SIGKILL:
            return RulesWorkerDied(
                f"the rules worker was killed ({name}) {what}; it may have run out of memory"
            )
        return RulesWorkerDied(f"the rules worker stopped on {name} {what}")
    status = "unknown" if code is None else str(code)
    return RulesWorkerDied(f"the rules worker stopped {what} (exit status {status})")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Template:
    """A process that loaded one game and forks a :class:`Worker` per match."""

    def __init__(self, process: asyncio.subprocess.Process, connection: _Connection) -> None:
        self.process = process
        self.connection = connection
        connection.on_break = self.kill  # type: ignore[method-assign]

    @classmethod
    async def start(cls, memory_mb: int) -> Template:
        """Start a template whose address space is capped at ``memory_mb`` megabytes."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.match.rules.worker",
                str(memory_mb),
                stdin=theirs.fileno(),
                env={**os.environ, **_ENVIRONMENT},
                # out of the server's process group: a Ctrl-C at the terminal is the
                # server's to handle, and may not stop a template still importing its
                # modules; the server closes the templates, or they read the end of
                # their socket when it dies
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return cls(process, await _Connection.over(ours))

    @property
    def usable(self) -> bool:
        return not self.connection.broken and self.process.returncode is None

    async def call(
        self, request: tuple[Any, ...], cpu: float, what: str, passing: socket.socket | None = None
    ) -> Any:
        """Send ``request``; raises :class:`GdlError` or :class:`RulesFailure`."""
        try:
            return await self.connection.call(request, cpu, what, passing)
        except _Ended as ended:
            code = await self._reap()
            raise _failure(code, ended.stuck, ended.wall, cpu, what) from None
        except RulesLimitError:
            await self._reap()
            raise

    async def fork(self, cpu: float) -> Worker:
        """A new worker for one match, with the game already loaded."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = await self.call(("fork",), cpu, "to start a worker", passing=theirs)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return Worker(pid, self, await _Connection.over(ours))

    async def status(self, pid: int) -> int | None:
        """How a forked worker ended (as ``Popen.returncode``), if the template knows."""
        for _ in range(20):
            if not self.usable:
                return None
            code = await self.call(("status", pid), 5.0, "for a worker's status")
            if code is not None:
                return int(code)
            await asyncio.sleep(0.05)
        return None

    def kill(self) -> None:
        self.connection.broken = True
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def close(self) -> None:
        """Stop the template (its workers stop when their sockets close)."""
        self.connection.close()
        self.kill()
        await self._reap()

    async def _reap(self) -> int | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        return self.process.returncode


class Worker:
    """A worker forked from a template, serving the matches of its game, one request
    at a time."""

    def __init__(self, pid: int, template: Template, connection: _Connection) -> None:
        self.pid = pid
        self.template = template
        self.connection = connection
        connection.on_break = self.kill  # type: ignore[method-assign]

    @property
    def usable(self) -> bool:
        return not self.connection.broken

    @property
    def busy(self) -> bool:
        """True while a request is in flight (others wait their turn)."""
        return self.connection.lock.locked()

    async def call(self, request: tuple[Any, ...], cpu: float, what: str) -> Any:
        """Send ``request`` and return the worker's answer.

        ``cpu`` is the request's CPU budget (enforced by the worker); ``what`` says
        what was asked, for messages.  Raises :class:`GdlError` for an error of the
        rules (the worker goes on) and :class:`RulesFailure` when the worker cannot.
        """
        try:
            return await self.connection.call(request, cpu, what)
        except _Ended as ended:
            code = None
            with contextlib.suppress(RulesFailure, GdlError):
                code = await self.template.status(self.pid)
            raise _failure(code, ended.stuck, ended.wall, cpu, what) from None
        except RulesLimitError:
            self.close()
            raise

    def tell(self, request: tuple[Any, ...]) -> None:
        """Send a request the worker does not answer (see ``UNANSWERED`` in the worker)."""
        self.connection.tell(request)

    def kill(self) -> None:
        """Stop the worker at once (its states are lost)."""
        self.connection.broken = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Close the socket; the worker exits when it reads the end."""
        self.connection.close()
