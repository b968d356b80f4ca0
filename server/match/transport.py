"""The player transport: one GGP message over one HTTP/1.0 connection, with a real deadline.

Every message opens a connection, writes one ``POST`` exactly as GGP-Base writes it
(header order ``Accept, Host, Sender, Receiver, Content-Type, Content-Length``; no
``Connection`` or ``User-Agent`` header), reads one reply and closes.  The deadline
covers the whole exchange (connect, write, read): a reply that trickles in past it is
late, unlike GGP-Base's per-read socket timeout.

A player the host marked as keeping connections open gets a :class:`KeptConnection`:
the request then adds ``Connection: keep-alive``, and the connection stays open for the
next message when the reply agrees (HTTP/1.1 without ``Connection: close``, or HTTP/1.0
with ``Connection: keep-alive``) and its body has a ``Content-Length`` with nothing after
it.  Anything else closes it as usual.  A kept connection the player closed while idle is
replaced by a new one, within the same deadline, when not a byte of reply came back.

Reading is liberal, as GGP-Base reads: the status line and every header except
``Content-Length`` (any letter case) are ignored, so a ``500`` with a move in the body
counts; without a length the body runs to the end of the stream; HTTP/1.0 and 1.1
are both fine; a chunked body is decoded (GGP-Base cannot).  A reply with no header
block at all is a connection error, as in GGP-Base.  The body is capped: a flood
past ``max_bytes`` is an error, not a memory exhaustion.

This transport is built on asyncio streams rather than aiohttp's client because the
aiohttp client always writes ``Host`` as the first header (GGP-Base writes ``Accept``
first) and rejects replies GGP-Base accepts, such as malformed header lines.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from server.protocol.http import request_bytes
from server.records import ErrorKind

DEFAULT_MAX_REPLY_BYTES = 1_000_000
"""The largest reply body accepted (header block included), in bytes."""

_MAX_HEADER_BYTES = 64 * 1024
_READ_SIZE = 64 * 1024
_PAUSE_AT = 4 * _READ_SIZE
_END_OF_HEADERS = re.compile(rb"\r?\n\r?\n")
_WANTED_HEADER = re.compile(
    rb"\n[ \t\r\x0b\x0c]*(content-length|transfer-encoding|connection)[ \t\r\x0b\x0c]*:([^\n]*)"
)
"""The headers the reader needs, in a lower-cased header block: every line after the status
line whose name (spaces around it ignored) is one of them, with its raw value."""


@dataclass(frozen=True, slots=True)
class PlayerAddress:
    """Where a player listens: host, port and request path of an ``http://`` URL."""

    host: str
    port: int
    path: str = "/"
    secure: bool = False

    @classmethod
    def parse(cls, url: str) -> PlayerAddress:
        """Read ``http://host:port/path`` (``host:port`` alone is taken as HTTP)."""
        if "://" not in url:
            url = "http://" + url
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// player address: {url!r}")
        secure = parts.scheme == "https"
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        port = parts.port  # a ValueError past 65535
        if port == 0:
            raise ValueError(f"port 0 in {url!r}: a player's port is 1 to 65535")
        return cls(parts.hostname, port or (443 if secure else 80), path, secure)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.secure else 'http'}://{host}:{self.port}{self.path}"


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back from one message: a body, or the kind of failure, and the time taken."""

    body: str | None
    """The reply body, decoded as UTF-8 and trimmed; ``None`` when the exchange failed."""
    error: ErrorKind | None
    message: str
    elapsed_ms: int
    status_line: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


class _Failure(Exception):
    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def build_request(
    address: PlayerAddress, text: str, receiver: str, keep_alive: bool = False
) -> bytes:
    """The request bytes for one message, exactly as GGP-Base sends them (``keep_alive``
    adds ``Connection: keep-alive``)."""
    return request_bytes(text, address.host, receiver, address.path, keep_alive)


class KeptConnection:
    """The open connection to one player between two messages (HTTP keep-alive).

    At most one: a match sends one message at a time to each role.  :meth:`close` it
    when the match ends.
    """

    def __init__(self) -> None:
        self._idle: _ReplyReader | None = None

    def take(self) -> _ReplyReader | None:
        """The idle connection, if it can carry another request; ``None`` otherwise."""
        reader, self._idle = self._idle, None
        if reader is not None and not reader.reusable:
            reader.abort()
            return None
        return reader

    def keep(self, reader: _ReplyReader) -> None:
        """Hold ``reader``'s connection for the next message."""
        self.close()
        self._idle = reader

    @property
    def is_open(self) -> bool:
        """Whether a connection is held (it may still have been closed by the player)."""
        return self._idle is not None

    def close(self) -> None:
        """Close the held connection, if any."""
        reader, self._idle = self._idle, None
        if reader is not None:
            reader.abort()


async def send_message(
    address: PlayerAddress,
    text: str,
    *,
    receiver: str = "",
    time_limit: float | None,
    max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    kept: KeptConnection | None = None,
) -> Reply:
    """Send one message and read the reply within ``time_limit`` seconds in total (``None``: no limit).

    With ``kept``, the request asks to keep the connection open, an open connection held
    there is used, and the connection is left there when the reply allows it.
    Never raises for player faults: they come back as a :class:`Reply` with an error.
    """
    started = time.monotonic()
    request = build_request(address, text, receiver, keep_alive=kept is not None)
    reader = kept.take() if kept is not None else None
    return await _send(address, request, started, time_limit, max_bytes, kept, reader, False)


def start_on_kept(
    address: PlayerAddress,
    text: str,
    *,
    receiver: str = "",
    time_limit: float | None,
    max_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    kept: KeptConnection,
) -> asyncio.Future[Reply] | None:
    """:func:`send_message` on the connection ``kept`` holds, begun now: the request is
    written at once and the reply comes back as a future, read by the connection's own
    callbacks with no task; ``None`` when no connection is held (call :func:`send_message`).

    The reply is the one :func:`send_message` would give: anything but a whole reply with
    a ``Content-Length`` in one read's worth of bytes (a closed connection, a chunked or
    unbounded body, a flood) is handed to :func:`send_message`'s reading, within what
    is left of the same deadline.  Cancelling the future closes the connection.
    """
    started = time.monotonic()
    reader = kept.take()
    if reader is None or reader.transport is None:
        return None
    request = build_request(address, text, receiver, keep_alive=True)
    pending = _Pending(address, request, started, time_limit, max_bytes, kept, reader)
    reader.received = 0
    reader.pending = pending
    reader.transport.write(request)
    return pending.future


async def _send(
    address: PlayerAddress,
    request: bytes,
    started: float,
    time_limit: float | None,
    max_bytes: int,
    kept: KeptConnection | None,
    reader: _ReplyReader | None,
    written: bool,
) -> Reply:
    """The exchange of :func:`send_message`, from its ``started`` time: on ``reader`` (a
    connection taken from ``kept``, with ``request`` already ``written`` to it or not),
    else on a new connection."""
    keep = False
    reused = reader is not None

    def elapsed() -> int:
        return round((time.monotonic() - started) * 1000)

    left = None if time_limit is None else time_limit - (time.monotonic() - started)
    try:
        async with asyncio.timeout(left):
            while True:
                if reader is None:
                    _, reader = await asyncio.get_running_loop().create_connection(
                        _ReplyReader,
                        address.host,
                        address.port,
                        ssl=ssl.create_default_context() if address.secure else None,
                    )
                try:
                    assert reader.transport is not None
                    if not written:
                        reader.received = 0
                        reader.transport.write(request)
                    written = False
                    status_line, body, reusable = await _read_reply(reader, max_bytes)
                except (_Failure, OSError, EOFError) as error:
                    if reused and not reader.received and _is_closed_error(error):
                        reader.abort()  # the player had closed it while idle: start afresh
                        reader, reused = None, False
                        continue
                    raise
                break
            keep = kept is not None and reusable
    except TimeoutError:
        return Reply(
            None, ErrorKind.TIMEOUT, f"no complete reply within {time_limit:g} s", elapsed()
        )
    except _Failure as failure:
        return Reply(None, failure.kind, str(failure), elapsed())
    except (OSError, EOFError, asyncio.IncompleteReadError, ssl.SSLError) as error:
        reason = str(error) or type(error).__name__
        return Reply(None, ErrorKind.CONNECTION_ERROR, reason, elapsed())
    finally:
        if reader is not None:
            if keep and kept is not None:
                kept.keep(reader)
            else:
                reader.abort()
    return Reply(body, None, "", elapsed(), status_line)


class _Pending:
    """A request written on a kept connection whose reply is awaited as a future.

    The connection's callbacks call :meth:`check` as bytes arrive; a whole reply of the
    usual shape completes the future there.  Anything else is handed to :func:`_send`,
    whose result then completes the future; the deadline's timer completes it with a
    timeout.
    """

    def __init__(
        self,
        address: PlayerAddress,
        request: bytes,
        started: float,
        time_limit: float | None,
        max_bytes: int,
        kept: KeptConnection,
        reader: _ReplyReader,
    ) -> None:
        loop = asyncio.get_running_loop()
        self.future: asyncio.Future[Reply] = loop.create_future()
        self.future.add_done_callback(self._done)
        self.address = address
        self.request = request
        self.started = started
        self.time_limit = time_limit
        self.max_bytes = max_bytes
        self.kept = kept
        self.reader: _ReplyReader | None = reader
        self.timer = None if time_limit is None else loop.call_later(time_limit, self._expire)
        self.handed_over: asyncio.Task[Reply] | None = None

    def check(self) -> None:
        """Look at what the connection holds: a whole reply, more to wait for, or a
        case for the general reading."""
        reader = self.reader
        assert reader is not None
        if self.future.done():  # cancelled, its callback not run yet
            self._drop()
            return
        if reader.error is not None or reader.eof:
            self._hand_over()
            return
        quick = _whole_reply(reader.buffer, self.max_bytes)
        if quick is None:
            return
        if quick is _GENERAL:
            self._hand_over()
            return
        status_line, body, kept_open = cast(tuple[str, bytes, bool], quick)
        reader.buffer.clear()
        self._detach()
        if kept_open and reader.reusable:
            self.kept.keep(reader)
        else:
            reader.abort()
        elapsed = round((time.monotonic() - self.started) * 1000)
        text = body.decode("utf-8", errors="replace").strip()
        self.future.set_result(Reply(text, None, "", elapsed, status_line))

    def _expire(self) -> None:
        self.timer = None
        self._drop()
        if self.future.done():
            return
        elapsed = round((time.monotonic() - self.started) * 1000)
        message = f"no complete reply within {self.time_limit:g} s"
        self.future.set_result(Reply(None, ErrorKind.TIMEOUT, message, elapsed))

    def _hand_over(self) -> None:
        reader = self._detach()
        task = asyncio.ensure_future(
            _send(
                self.address,
                self.request,
                self.started,
                self.time_limit,
                self.max_bytes,
                self.kept,
                reader,
                True,
            )
        )
        self.handed_over = task
        task.add_done_callback(self._handed_over_done)

    def _handed_over_done(self, task: asyncio.Task[Reply]) -> None:
        if self.future.done() or task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(task.result())

    def _detach(self) -> _ReplyReader | None:
        """Stop watching the connection and the clock; the connection, if still held."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.pending = None
        return reader

    def _drop(self) -> None:
        """Stop watching, and close the connection: the exchange is over without a reply."""
        reader = self._detach()
        if reader is not None:
            reader.abort()

    def _done(self, future: asyncio.Future[Reply]) -> None:
        if not future.cancelled():
            return
        self._drop()
        if self.handed_over is not None:
            self.handed_over.cancel()


_GENERAL = object()
"""What :func:`_whole_reply` answers for a reply the general reading must take."""


def _whole_reply(buffer: bytearray, max_bytes: int) -> tuple[str, bytes, bool] | object | None:
    """The status line, body and whether the connection may be kept, when ``buffer`` holds
    a whole reply that :func:`_read_reply` would read from one read alone with a
    ``Content-Length``; ``None`` when more bytes are to come; :data:`_GENERAL` otherwise."""
    if len(buffer) > _READ_SIZE or buffer.startswith((b"\r", b"\n")):
        return _GENERAL
    # where _END_OF_HEADERS (\r?\n\r?\n) first matches: at the first newline followed
    # by another, with or without a carriage return between, and a carriage return before
    crlf, lf = buffer.find(b"\n\r\n"), buffer.find(b"\n\n")
    if crlf < 0 and lf < 0:
        return None if len(buffer) <= min(_MAX_HEADER_BYTES, max_bytes) else _GENERAL
    newline = crlf if lf < 0 or 0 <= crlf < lf else lf
    after = newline + (3 if newline == crlf else 2)
    start = newline - 1 if buffer[newline - 1] == 13 else newline
    status_line, length, chunked, connection = _parse_head(bytes(buffer[:start]))
    if length is None or length > max_bytes:
        return _GENERAL
    rest = len(buffer) - after
    if rest < length:
        return None
    version = status_line[:8].upper()
    kept_open = (
        connection == b"keep-alive"
        if version == "HTTP/1.0"
        else version == "HTTP/1.1" and connection != b"close"
    )
    return (
        status_line,
        bytes(buffer[after : after + length]),
        kept_open and rest == length and not chunked,
    )


def _is_closed_error(error: BaseException) -> bool:
    """Whether ``error`` says the connection was closed before the request was read."""
    if isinstance(error, _Failure):
        return error.kind is ErrorKind.CONNECTION_ERROR
    return isinstance(error, ConnectionError | EOFError)


class _ReplyReader(asyncio.Protocol):
    """The reading end of one exchange: buffers what arrives; ``read`` as a stream reads.

    A plain protocol rather than asyncio's streams: one object per connection instead of
    a stream reader, its protocol and a writer, and no drain (a request is small and the
    socket buffer takes it at once; a player that reads nothing still meets the deadline).
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = 0
        """Bytes received on this connection for the current request."""
        self.buffer = bytearray()
        """What arrived and was not read yet."""
        self.eof = False
        self.error: BaseException | None = None
        self.pending: _Pending | None = None
        """A request begun by :func:`start_on_kept`, which the callbacks complete."""
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        self.buffer += data
        if len(self.buffer) > _PAUSE_AT and self.transport is not None:
            self.transport.pause_reading()  # a flood waits in the socket, not in memory
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None:
            self.error = exc
        self._wake()

    @property
    def reusable(self) -> bool:
        """Whether the connection is open, idle and clean, so it can carry a new request."""
        return (
            self.transport is not None
            and not self.transport.is_closing()
            and not self.eof
            and self.error is None
            and not self.buffer
        )

    def abort(self) -> None:
        """Close the connection at once."""
        if self.transport is not None:
            self.transport.abort()

    def _wake(self) -> None:
        if self.pending is not None:
            self.pending.check()
            return
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read(self, limit: int) -> bytes:
        """Up to ``limit`` bytes; ``b""`` once the player closed and everything was read."""
        while not self.buffer:
            if self.error is not None:
                raise self.error
            if self.eof:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = bytes(self.buffer[:limit])
        del self.buffer[:limit]
        if (
            len(self.buffer) <= _PAUSE_AT
            and self.transport is not None
            and not self.transport.is_reading()
            and not self.eof
        ):
            self.transport.resume_reading()
        return data


async def _read_reply(reader: _ReplyReader, max_bytes: int) -> tuple[str, str, bool]:
    """Read one HTTP reply the way GGP-Base does; return its status line, its trimmed body
    and whether the connection may carry another request (see :class:`KeptConnection`)."""
    buffer = b""
    while True:
        found = _END_OF_HEADERS.search(buffer)
        if buffer.startswith((b"\r\n", b"\n")):
            head, rest = b"", buffer[2 if buffer.startswith(b"\r\n") else 1 :]
            break
        if found:
            head, rest = buffer[: found.start()], buffer[found.end() :]
            break
        if len(buffer) > min(_MAX_HEADER_BYTES, max_bytes):
            raise _Failure(ErrorKind.TOO_LARGE, "header block too large")
        chunk = await reader.read(_READ_SIZE)
        if not chunk:
            if not buffer:
                raise _Failure(ErrorKind.CONNECTION_ERROR, "connection closed without a reply")
            raise _Failure(ErrorKind.CONNECTION_ERROR, "reply without an HTTP header block")
        buffer += chunk

    status_line, length, chunked, connection = _parse_head(head)
    version = status_line[:8].upper()
    kept_open = (
        connection == b"keep-alive"
        if version == "HTTP/1.0"
        else version == "HTTP/1.1" and connection != b"close"
    )

    if length is not None:
        if length > max_bytes:
            raise _Failure(ErrorKind.TOO_LARGE, f"reply body of {length} bytes is over the limit")
        body = rest[:length]
        while len(body) < length:
            chunk = await reader.read(min(_READ_SIZE, length - len(body)))
            if not chunk:
                kept_open = False
                break
            body += chunk
        kept_open = kept_open and len(rest) <= length and not chunked and reader.reusable
    else:
        kept_open = False
        body = rest
        while True:
            if len(body) > max_bytes:
                raise _Failure(ErrorKind.TOO_LARGE, f"reply body over {max_bytes} bytes")
            chunk = await reader.read(_READ_SIZE)
            if not chunk:
                break
            body += chunk
        if chunked:
            body = _dechunk(body)
    return status_line, body.decode("utf-8", errors="replace").strip(), kept_open


def _parse_head(head: bytes) -> tuple[str, int | None, bool, bytes]:
    """The status line of a header block and the three headers that matter: the body's
    ``Content-Length`` (``None`` when absent or unreadable), whether it is chunked, and
    ``Connection`` (lower case).  Other headers are ignored; where a header repeats, the
    last one counts (a ``Transfer-Encoding`` naming ``chunked`` in any of them does)."""
    first = head.partition(b"\n")[0]
    status_line = first.decode("latin-1").strip()
    length: int | None = None
    chunked = False
    connection = b""
    for name, value in _WANTED_HEADER.findall(head.lower()):
        if name == b"content-length":
            try:
                length = max(0, int(value.strip()))
            except ValueError:
                pass
        elif name == b"connection":
            connection = value.strip()
        elif b"chunked" in value:
            chunked = True
    return status_line, length, chunked, connection


def _dechunk(data: bytes) -> bytes:
    """Decode a chunked body; data that is not validly chunked is returned unchanged."""
    out = bytearray()
    position = 0
    while True:
        end = data.find(b"\n", position)
        if end < 0:
            return data
        size_text = data[position:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return data
        if size == 0:
            return bytes(out)
        start = end + 1
        out += data[start : start + size]
        position = start + size
        if data[position : position + 2] == b"\r\n":
            position += 2
        elif data[position : position + 1] == b"\n":
            position += 1
