"""Reading the captured GGP-Base transcripts of ``../shared/protocol``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from shared_material import shared_path

_EXCHANGE = re.compile(r"^######## (\S+?)\((\w+)\) exchange #(\d+)", re.MULTILINE)
_END_OF_BODY = re.compile(r"^\[end of body: (\d+) bytes[^\]]*\]$", re.MULTILINE)


@dataclass(frozen=True)
class Exchange:
    """One captured HTTP exchange between GGP-Base's server and one player."""

    role: str
    number: int
    request: bytes


def shared_file(name: str) -> Path:
    """The path of a shared capture; skips the test (or fails it) when it is missing."""
    return shared_path("protocol", name)


def _request_bytes(block: str) -> bytes:
    """Rebuild the exact request bytes: header lines end in a literal ``\\r\\n`` marker."""
    start = block.index(">>> REQUEST")
    text = block[block.index("\n", start) + 1 :]
    head, _, rest = text.partition("\\r\\n\n\\r\\n\n")
    end = _END_OF_BODY.search(rest)
    assert end is not None, "no end-of-body marker"
    body = rest[: end.start()].removesuffix("\n")
    assert len(body.encode()) == int(end.group(1)), "body length does not match the marker"
    lines = head.split("\\r\\n\n")
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


def read_exchanges(path: Path) -> list[Exchange]:
    """Every exchange of a transcript, in file order."""
    text = path.read_text(encoding="utf-8")
    starts = list(_EXCHANGE.finditer(text))
    exchanges = []
    for index, found in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        block = text[found.start() : end]
        exchanges.append(Exchange(found.group(1), int(found.group(3)), _request_bytes(block)))
    return exchanges


def requests_by_role(path: Path) -> dict[str, list[bytes]]:
    """The requests each role received, in the order they were sent."""
    result: dict[str, list[tuple[int, bytes]]] = {}
    for exchange in read_exchanges(path):
        result.setdefault(exchange.role, []).append((exchange.number, exchange.request))
    return {role: [data for _, data in sorted(items)] for role, items in result.items()}
