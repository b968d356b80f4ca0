"""Errors raised by the rules engine, each with a clear message."""

from __future__ import annotations


class GdlError(ValueError):
    """Base class of every rules-engine error."""


class GdlSyntaxError(GdlError):
    """Malformed GDL text; carries the line and column (both 1-based)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.reason = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")


class GdlValidationError(GdlError):
    """Well-formed GDL that breaks a rule of the GDL specification."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"invalid GDL ({len(problems)} problem(s)):\n  {shown}{more}")


class IllegalMoveError(GdlError):
    """A move that the rules do not allow in the given state."""

    def __init__(self, role: str, move: str, legal: list[str] | None = None) -> None:
        self.role = role
        self.move = move
        self.legal = legal
        hint = ""
        if legal is not None:
            preview = ", ".join(legal[:10]) + (", ..." if len(legal) > 10 else "")
            hint = f" (legal: {preview})"
        super().__init__(f"illegal move {move} for role {role}{hint}")


class OutsideGroundingError(GdlError):
    """A fluent or move that a grounded engine never met; another engine must answer."""


class GoalError(GdlError):
    """A role without exactly one goal value in a state."""


class RulesTooLargeError(GdlError):
    """A rule text or file over the size cap; refused before it is read or parsed."""

    def __init__(self, size: int, limit: int, source: str | None = None) -> None:
        self.size = size
        self.limit = limit
        self.source = source
        what = f"the rules file {source}" if source else "the rules"
        super().__init__(
            f"{what} {'is' if source else 'are'} {_megabytes(size)}, "
            f"over the limit of {_megabytes(limit)}"
        )


def _megabytes(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size:,} bytes"
    return f"{size / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")
