"""The ``ggp`` command: each module of this package may add one sub-command.

A module joins the command by defining ``register(subparsers)``, which adds its
parser and sets ``run`` (a function taking the parsed arguments and returning
an exit code) with ``parser.set_defaults(run=...)``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command of this package."""
    parser = argparse.ArgumentParser(
        prog="ggp", description="General Game Playing match server and tools."
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ggp`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
