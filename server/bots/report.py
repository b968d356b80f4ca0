"""The player checker's report card: one item per edge case, each with its evidence."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SENT_EXCERPT = 160
"""How many characters of a sent message the evidence keeps (a START carries whole rules)."""


class Exchange(BaseModel):
    """One message to the player and what came back."""

    model_config = ConfigDict(frozen=True)

    sent: str
    received: str | None
    """The reply body; ``None`` when nothing usable came back (see ``error``)."""
    elapsed_ms: int
    error: str | None = None
    """Why there is no reply: a timeout or a connection error, in one line."""

    def line(self) -> str:
        """``sent -> received (N ms)`` on one line."""
        got = repr(self.received) if self.error is None else f"no reply ({self.error})"
        return f"{self.sent} -> {got} ({self.elapsed_ms} ms)"


class CheckItem(BaseModel):
    """One item of the report card: whether it passed, why, and the exchanges that show it."""

    name: str
    passed: bool
    summary: str
    evidence: list[Exchange] = []
    duration_ms: int = 0


class CheckReport(BaseModel):
    """Every checked item for one player, in the order they were checked."""

    url: str
    start_clock: int
    play_clock: int
    latency_ms: int | None = None
    """The round trip of INFO, the network's share of every reply time."""
    items: list[CheckItem] = []

    @property
    def passed(self) -> bool:
        """True when every item passed."""
        return all(item.passed for item in self.items)

    def render(self) -> str:
        """The report card as text: one line per item, the evidence of failed items below it."""
        latency = "" if self.latency_ms is None else f", latency {self.latency_ms} ms"
        lines = [
            f"{self.url}: start clock {self.start_clock} s, play clock {self.play_clock} s{latency}"
        ]
        width = max((len(item.name) for item in self.items), default=0)
        for item in self.items:
            verdict = "PASS" if item.passed else "FAIL"
            lines.append(f"{verdict}  {item.name:<{width}}  {item.summary}")
            if not item.passed:
                lines.extend(f"      {exchange.line()}" for exchange in item.evidence)
        failed = sum(not item.passed for item in self.items)
        lines.append(f"{len(self.items) - failed} passed, {failed} failed")
        return "\n".join(lines)


def excerpt(text: str) -> str:
    """A message shortened for the evidence, whitespace collapsed."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SENT_EXCERPT else flat[: SENT_EXCERPT - 3] + "..."
