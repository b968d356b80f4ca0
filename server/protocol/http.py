"""HTTP framing exactly as GGP-Base writes it, as data for the transports.

The server sends one ``POST / HTTP/1.0`` per message with a fixed header order
and no ``Connection`` or ``User-Agent`` header; a player answers ``200 OK`` with
``text/acl`` and permissive CORS headers. Content-Length counts bytes of the
UTF-8 body.
"""

from __future__ import annotations

import functools
import ipaddress

REQUEST_LINE = "POST / HTTP/1.0"
"""The request line of every message."""

CONTENT_TYPE = "text/acl"
"""The content type of every message and reply."""

SENDER = "GAMESERVER"
"""The ``Sender`` header of every message."""

CORS_HEADERS: tuple[tuple[str, str], ...] = (
    ("Access-Control-Allow-Origin", "*"),
    ("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
    ("Access-Control-Allow-Headers", "Content-Type"),
    ("Access-Control-Allow-Age", "86400"),
)
"""The CORS headers GGP-Base's players add to every reply, in their order."""


@functools.lru_cache(maxsize=1024)
def host_header_value(host: str) -> str:
    """The ``Host`` value GGP-Base writes: the host name without a port, loopback as ``localhost``."""
    name = host.strip("[]")
    try:
        if ipaddress.ip_address(name).is_loopback:
            return "localhost"
    except ValueError:
        pass
    return host


def request_headers(host: str, receiver: str, body: str) -> list[tuple[str, str]]:
    """The headers of a message, in GGP-Base's order; ``receiver`` is the player's name."""
    return [
        ("Accept", "text/delim"),
        ("Host", host_header_value(host)),
        ("Sender", SENDER),
        ("Receiver", receiver),
        ("Content-Type", CONTENT_TYPE),
        ("Content-Length", str(len(body.encode("utf-8")))),
    ]


KEEP_ALIVE_HEADER = ("Connection", "keep-alive")
"""The one header a keep-alive request adds (before ``Content-Length``); GGP-Base never
sends it, so it is sent only to players the host marked as keeping connections open."""


@functools.lru_cache(maxsize=1024)
def request_head(host: str, receiver: str = "", path: str = "/", keep_alive: bool = False) -> bytes:
    """A request up to the value of its last header, ``Content-Length`` (the same for
    every message to one player)."""
    headers = request_headers(host, receiver, "")[:-1]
    if keep_alive:
        headers.append(KEEP_ALIVE_HEADER)
    line = REQUEST_LINE if path == "/" else REQUEST_LINE.replace(" / ", f" {path} ", 1)
    lines = [line, *(f"{name}: {value}" for name, value in headers), "Content-Length: "]
    return "\r\n".join(lines).encode("utf-8")


def request_bytes(
    body: str, host: str, receiver: str = "", path: str = "/", keep_alive: bool = False
) -> bytes:
    """The whole request for one message, byte for byte as GGP-Base sends it (with
    ``keep_alive``, plus a ``Connection: keep-alive`` header)."""
    data = body.encode("utf-8")
    return b"%s%d\r\n\r\n%s" % (request_head(host, receiver, path, keep_alive), len(data), data)


def response_headers(body: str) -> list[tuple[str, str]]:
    """The headers of a player's reply, in GGP-Base's order and spelling."""
    return [
        ("Content-type", CONTENT_TYPE),
        ("Content-length", str(len(body.encode("utf-8")))),
        *CORS_HEADERS,
    ]


def response_bytes(body: str) -> bytes:
    """A player's whole reply, byte for byte as a GGP-Base player sends it."""
    lines = ["HTTP/1.0 200 OK", *(f"{name}: {value}" for name, value in response_headers(body))]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode("utf-8")
