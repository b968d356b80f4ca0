"""The API's answers about player checks and bot tokens (pydantic, for /openapi.json)."""

from __future__ import annotations

from pydantic import BaseModel

from server.store.player_checks import CheckRow


class CheckSummary(BaseModel):
    """A player's latest finished check, as the player object shows it."""

    id: int
    passed: bool | None
    finished_at: int | None
    failed: list[str]
    """The items that failed."""
    error: str | None
    """Why the check could not run, if it could not."""

    @classmethod
    def of(cls, row: CheckRow) -> CheckSummary:
        return cls(
            id=row.id,
            passed=row.passed,
            finished_at=row.finished_at,
            failed=[str(item.get("name")) for item in row.items if not item.get("passed")],
            error=row.error,
        )


class CheckAnswer(CheckRow):
    """One run of the checker: when, against what, and the report item by item."""


class TokenAnswer(BaseModel):
    """An outbound bot's new token, shown once; the old one no longer connects."""

    name: str
    token: str
