"""The ``ggp`` command: each module of this package may add one sub-command.

A module joins the command by defining ``register(subparsers)``, which adds its
parser and sets ``run`` (a function taking the parsed arguments and returning
an exit code) with ``parser.set_defaults(run=...)``.  A bad input is reported by
raising :class:`~server.cli._common.InputError`; ``main`` prints every failure as
one line on stderr (the traceback only with ``--debug`` or ``GGP_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
from typing import NoReturn

from ._common import EXIT_INTERNAL, EXIT_SIGINT, EXIT_USAGE, InputError, one_line

DEBUG_VARIABLE = "GGP_DEBUG"


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command of this package."""
    parser = OneLineParser(prog="ggp", description="General Game Playing match server and tools.")
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback of an unexpected error (also {DEBUG_VARIABLE}=1)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


class _OneLineFormatter(logging.Formatter):
    """Log records as single lines, without tracebacks unless debugging."""

    def __init__(self, debug: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        if self.debug:
            return super().format(record)
        text = one_line(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {one_line(record.exc_info[1])}"
        return f"{record.levelname.lower()}: {record.name}: {text}"


def _configure_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter(debug))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)


def _check_environment() -> None:
    """Refuse environment variables the engine reads with values it cannot take, before
    any command runs (rather than at the first game a command loads)."""
    from server.gdl.compile_aside import wanted
    from server.gdl.engine_store import store_megabytes

    try:
        wanted(None)
        store_megabytes()
    except ValueError as error:
        raise InputError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ggp`` console script."""
    args = build_parser().parse_args(argv)
    debug = bool(args.debug or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"))
    _configure_logging(debug)
    name = f"ggp {args.command}"
    try:
        _check_environment()
        return int(args.run(args) or 0)
    except InputError as error:
        print(f"{name}: {one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except Exception as error:
        if debug:
            raise
        print(
            f"{name}: unexpected error: {type(error).__name__}: {one_line(error, 300)} "
            f"(rerun with --debug or {DEBUG_VARIABLE}=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
