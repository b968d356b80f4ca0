"""Build hook: the engine's hot modules compiled to C with mypyc, when it can.

Everything else about the package is in ``pyproject.toml``. The modules listed in
``server/gdl/native.py`` (:data:`GROUPS`) run the per-state work of the rules
interpreter and the compiled engine's pipeline from the ground program to generated
code (see the README, "The engine compiled to C"); mypyc compiles them from their typed
source into extension modules, one group per package, which Python imports in their
place. When no C compiler is found, or the environment variable ``GGP_PURE_PYTHON`` is
set, the package installs as plain Python and runs the same code more slowly:
:mod:`server.gdl.native` says which form is loaded. One small module is written in C
itself: the buffer that takes the ground rules from clingo during a compile attempt
(``server/gdl/compiled/_rule_buffer.c``), with the compile estimate's floor counted over
them (``_estimate_floor.c``); without it a Python callback takes the rules and Python
counts the floor.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
GDL = "server/gdl"


def _native_rules() -> ModuleType:
    """``server/gdl/native.py``, loaded alone (the standard library is all it imports,
    where the package would import everything): which modules are compiled, the stamps
    and the digests they keep."""
    spec = importlib.util.spec_from_file_location("_native_rules", HERE / GDL / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NATIVE = _native_rules()
NATIVE_GROUPS = [
    ([f"{GDL}/{package}/{name}.py" for name in modules], NATIVE.group_name(package))
    for package, modules in NATIVE.GROUPS.items()
]
"""The modules compiled, as paths, and their group: a group's modules stay together."""
METADATA_COMMANDS = {"egg_info", "dist_info", "sdist", "--name", "--version"}
"""Commands that build nothing (pip runs them first): no compiling for them."""
RULE_BUFFER = "server.gdl.compiled._rule_buffer"
"""The one module written in C by hand: the buffer that takes the ground rules from
clingo during a compile attempt (``rule_observer.py`` reads it), and the estimate's floor
counted over them (``estimate.py``)."""


def _plain_python() -> bool:
    """Whether nothing is compiled: plain Python asked for, or a command that builds
    nothing."""
    pure = bool(os.environ.get(NATIVE.PURE_VARIABLE))
    return pure or any(command in METADATA_COMMANDS for command in sys.argv[1:2])


def _native_extensions() -> list:
    if _plain_python():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mypyc is not installed: the engine stays plain Python", file=sys.stderr)
        return []
    old = Path.cwd()
    os.chdir(HERE)  # mypy reads its settings from pyproject.toml here
    try:
        # The build's own environment lacks the runtime packages (clingo, numpy): their
        # types are unknown there, so only the compiled modules' own errors count.
        options = ["--follow-imports=silent", "--no-warn-unused-ignores"]
        paths = [path for group, _ in NATIVE_GROUPS for path in group]
        return mypycify([*options, *paths], opt_level="3", separate=NATIVE_GROUPS)
    except BaseException as error:  # a type error, or mypy missing a part
        print(f"mypyc failed ({error}): the engine stays plain Python", file=sys.stderr)
        return []
    finally:
        os.chdir(old)


class OptionalBuildExt(build_ext):
    """Build the compiled modules if a C compiler can; else install plain Python."""

    def run(self) -> None:
        """Build, then stamp the sources' digests beside what was built (in the source tree
        for an editable install); stale stamps go first, so a failed build leaves none."""
        for package in NATIVE.GROUPS:
            (HERE / GDL / package / NATIVE.STAMP).unlink(missing_ok=True)
        try:
            super().run()
        except Exception as error:  # no compiler, no headers
            print(f"compiling the engine failed ({error}): plain Python", file=sys.stderr)
            return
        if all(extension.name == RULE_BUFFER for extension in self.extensions):
            return  # mypyc built nothing: no stamps, so that old compiled files are not trusted
        root = HERE if self.inplace else Path(self.build_lib)
        for package, modules in NATIVE.GROUPS.items():
            folder = f"{GDL}/{package}"
            digests = json.dumps(NATIVE.source_digests(HERE / folder, modules), indent=1)
            target = root / folder / NATIVE.STAMP
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(digests + "\n")

    def initialize_options(self) -> None:
        super().initialize_options()
        self.failed: set[str] = set()
        """The extensions whose build failed and that the rest went on without."""

    def build_extension(self, extension: Extension) -> None:
        """Build one extension; the rule buffer's failure leaves the mypyc modules built
        (clingo's rules then go through a Python callback)."""
        if extension.name != RULE_BUFFER:
            super().build_extension(extension)
            return
        try:
            super().build_extension(extension)
        except Exception as error:
            self.failed.add(extension.name)
            print(f"building the rule buffer failed ({error}): it stays Python", file=sys.stderr)

    def copy_extensions_to_source(self) -> None:
        """Copy what was built into the source tree (``--inplace``), not what failed."""
        every = self.extensions
        self.extensions = [ext for ext in every if ext.name not in self.failed]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every

    def get_output_mapping(self) -> dict[str, str]:
        """What an editable install copies into the source tree: what was built."""
        mapping = super().get_output_mapping()
        return {target: source for target, source in mapping.items() if os.path.exists(source)}

    def get_outputs(self) -> list[str]:
        """What was built: none of the extensions when the build failed (an editable
        install copies these into the source tree)."""
        outputs = list(super().get_outputs())
        return [output for output in outputs if os.path.exists(output)]


def _rule_buffer_extension() -> list[Extension]:
    """The C buffer of the ground rules clingo hands over (``_rule_buffer.c``), with the
    compile estimate's floor counted in C (``_estimate_floor.c``); none for plain Python."""
    if _plain_python():
        return []
    sources = [f"{GDL}/compiled/{name}.c" for name in ("_rule_buffer", "_estimate_floor")]
    return [Extension(RULE_BUFFER, sources)]


setup(
    ext_modules=[*_native_extensions(), *_rule_buffer_extension()],
    cmdclass={"build_ext": OptionalBuildExt},
)
