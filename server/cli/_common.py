"""What every sub-command shares: exit codes, one-line input errors, argument types, games."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.gdl import Game

EXIT_OK = 0
EXIT_FAILED = 1
"""A check or verdict said no, or a match did not complete."""
EXIT_USAGE = 2
"""Bad usage or bad input: nothing was done."""
EXIT_UNREACHABLE = 3
"""A player did not answer INFO before the match; nothing was played."""
EXIT_INTERNAL = 4
"""An unexpected failure of the program itself (``--debug`` shows the traceback)."""
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class InputError(Exception):
    """A bad input to a sub-command; ``main`` prints its message as one line, exit 2."""


def one_line(text: object, limit: int = 400) -> str:
    """Any message on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _number(kind: type, minimum: float | None, what: str) -> object:
    def convert(text: str) -> object:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if (minimum is not None and not value >= minimum) or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not {what}")
        return value

    return convert


non_negative_int = _number(int, 0, "a whole number of 0 or more")
positive_int = _number(int, 1, "a whole number of 1 or more")
non_negative_float = _number(float, 0.0, "a number of 0 or more")
positive_float = _number(float, 1e-9, "a number above 0")
memory_mb = _number(int, 256, "a whole number of megabytes, 256 or more")


def _position(data: bytes, offset: int) -> str:
    """``line:column`` of a byte offset, as in ``file:line:column: message``."""
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"{line}:{column}"


def describe_gdl_error(error: Exception, source: str | None = None) -> str:
    """A rules error on one line; a validation error shows its first problem and a count.

    With ``source`` (the rule file) an error with a place reads as compilers print
    them: ``source:line:column: message``; other errors read ``source: message``.
    """
    from server.gdl.errors import GdlSyntaxError, GdlValidationError

    if isinstance(error, GdlValidationError) and error.problems:
        first = error.problems[0]
        more = len(error.problems) - 1
        extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        line, column = getattr(first, "line", None), getattr(first, "column", None)
        if source and line:
            return one_line(
                f"{source}:{line}:{column}: invalid GDL: {getattr(first, 'message', first)}{extra}"
            )
        return one_line(f"{source + ': ' if source else ''}invalid GDL: {first}{extra}")
    if isinstance(error, GdlSyntaxError) and source:
        return one_line(f"{source}:{error.line}:{error.column}: {error.reason}")
    return one_line(f"{source}: {error}" if source else error)


def check_rule_file(path: Path) -> None:
    """Refuse a rule file that cannot be GDL text: unreadable, empty or not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the rule file {path}: {error.strerror or error}") from None
    if not data.strip():
        raise InputError(f"{path}: the rule file is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{path}:{_position(data, error.start)}: not a text file: "
            f"byte 0x{data[error.start]:02x} is not UTF-8"
        ) from None
    if b"\0" in data:
        where = _position(data, data.index(b"\0"))
        raise InputError(f"{path}:{where}: not a text file: NUL byte")


def load_game_checked(spec: str, **options: object) -> Game:
    """A bundled game by name or a game from a file; any problem is an :class:`InputError`."""
    from server.games import UnknownGameError, is_bundled, load_game

    if not is_bundled(spec) and Path(spec).is_file():
        check_rule_file(Path(spec))
    try:
        return load_game(spec, **options)
    except UnknownGameError as error:
        raise InputError(one_line(error)) from None
    except FileNotFoundError as error:
        raise InputError(one_line(error)) from None
    except OSError as error:
        raise InputError(f"cannot read {spec}: {error.strerror or error}") from None
    except RecursionError:
        raise InputError(f"{spec}: the rules nest too deeply") from None
    except ValueError as error:  # GdlError and the loading layer's own limits
        raise InputError(describe_gdl_error(error, spec)) from None
    except Exception as error:
        if not type(error).__module__.startswith(("server.gdl", "server.games")):
            raise
        raise InputError(f"{spec}: {one_line(error)}") from None
