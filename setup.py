"""Build hook: the interpreter's hot modules compiled to C with mypyc, when it can.

Everything else about the package is in ``pyproject.toml``. The modules listed in
:data:`NATIVE_MODULES` run the per-state work of the rules interpreter (see the README,
"Speed"); mypyc compiles them from their typed source into extension modules, which
Python imports in their place. When no C compiler is found, or the environment variable
``GGP_PURE_PYTHON`` is set, the package installs as plain Python and runs the same code
more slowly: :mod:`server.gdl.interpreter.native` says which form is loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
NATIVE_MODULES = (
    "server/gdl/interpreter/codegen.py",
    "server/gdl/interpreter/engine.py",
)
"""The modules compiled, as paths; they must stay together (one compiled group)."""
STAMP = "server/gdl/interpreter/native.json"
"""Written after a build: the digest of each compiled module's source, so that an edited
source is run as it now reads rather than as it was compiled."""


def _digest(path: str) -> str:
    return hashlib.sha256((HERE / path).read_bytes()).hexdigest()


METADATA_COMMANDS = {"egg_info", "dist_info", "sdist", "--name", "--version"}
"""Commands that build nothing (pip runs them first): no compiling for them."""


def _native_extensions() -> list:
    if os.environ.get("GGP_PURE_PYTHON"):
        return []
    if set(sys.argv[1:2]) <= METADATA_COMMANDS and len(sys.argv) > 1:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mypyc is not installed: the interpreter stays plain Python", file=sys.stderr)
        return []
    old = Path.cwd()
    os.chdir(HERE)  # mypy reads its settings from pyproject.toml here
    try:
        # The build's own environment lacks the runtime packages (clingo, numpy): their
        # types are unknown there, so only the compiled modules' own errors count.
        options = ["--follow-imports=silent", "--no-warn-unused-ignores"]
        return mypycify(
            [*options, *NATIVE_MODULES], opt_level="3", group_name="server.gdl.interpreter._native"
        )
    except BaseException as error:  # a type error, or mypy missing a part
        print(f"mypyc failed ({error}): the interpreter stays plain Python", file=sys.stderr)
        return []
    finally:
        os.chdir(old)


class OptionalBuildExt(build_ext):
    """Build the compiled modules if a C compiler can; else install plain Python."""

    def run(self) -> None:
        stamp = HERE / STAMP
        stamp.unlink(missing_ok=True)
        try:
            super().run()
        except Exception as error:  # no compiler, no headers
            print(f"compiling the interpreter failed ({error}): plain Python", file=sys.stderr)
            return
        if not self.extensions:
            return
        digests = json.dumps({path: _digest(path) for path in NATIVE_MODULES}, indent=1)
        target = stamp if self.inplace else Path(self.build_lib) / STAMP
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(digests + "\n")

    def get_outputs(self) -> list[str]:
        outputs = list(super().get_outputs())
        return [output for output in outputs if os.path.exists(output)]


setup(ext_modules=_native_extensions(), cmdclass={"build_ext": OptionalBuildExt})
