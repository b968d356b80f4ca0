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


class Problem(str):
    """One finding of the validator: its text, and where it is as fields.

    The text is ``line L, column C: message`` when the place is known, else the
    message alone; ``line`` and ``column`` (1-based) are ``None`` for findings about
    the game as a whole, such as a missing ``terminal`` rule.
    """

    line: int | None
    column: int | None
    message: str

    def __new__(cls, message: str, line: int | None = None, column: int | None = None) -> Problem:
        placed = bool(line)
        text = f"line {line}, column {column}: {message}" if placed else message
        problem = super().__new__(cls, text)
        problem.message = message
        problem.line = line if placed else None
        problem.column = column if placed else None
        return problem

    def __getnewargs__(self) -> tuple[str, int | None, int | None]:  # type: ignore[override]
        return self.message, self.line, self.column


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
