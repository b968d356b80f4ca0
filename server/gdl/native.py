"""Which form of the engine's hot modules runs: compiled by mypyc, or their source.

Two packages have modules compiled to C when installed with a C compiler (``setup.py``),
each package's as one group (:data:`GROUPS`): the interpreter's per-state work, and the
compiled engine's pipeline from the ground program to generated code (what a compile
attempt spends its time limit on). The install writes the digest of each module's
source beside them (``native.json`` in the package). Python would import a compiled
module in place of its source even after the source was edited, so :func:`load` checks
the digests first: when a package's compiled modules are missing or stale, or
``GGP_PURE_PYTHON`` is set, its sources are imported in their place, all of them (the
modules of a group call one another natively).

Both forms give the same answers; the compiled one does the same work faster. The
rules' generated code is plain Python in both. This module imports the standard library
only, so that ``setup.py`` can read it alone.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Literal

GROUPS: dict[str, tuple[str, ...]] = {
    "interpreter": ("codegen", "engine"),
    "compiled": ("network", "plan", "codegen", "grounder", "ground_size", "estimate"),
}
"""Per package of ``server.gdl``: its modules compiled together."""
STAMP = "native.json"
PURE_VARIABLE = "GGP_PURE_PYTHON"

HERE = Path(__file__).parent
"""The folder of the packages (``server/gdl``)."""
Form = Literal["compiled", "source"]
FORMS: dict[str, Form] = {}
"""The form loaded, per package (set by :func:`load`)."""
REASONS: dict[str, str] = {}
"""Why that form, per package (the benchmarks print it in their headers)."""


def group_name(package: str) -> str:
    """The mypyc group of ``package``'s modules (its shared library's name)."""
    return f"server.gdl.{package}._native"


def _compiled_file(folder: Path, name: str) -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def source_digests(folder: Path, modules: Sequence[str]) -> dict[str, str]:
    """The SHA-256 of each module's source in ``folder``, by module name: what a
    package's stamp keeps (``setup.py`` writes it with this function)."""
    return {
        name: hashlib.sha256((folder / f"{name}.py").read_bytes()).hexdigest() for name in modules
    }


def why_not_compiled(folder: Path, modules: Sequence[str]) -> str | None:
    """None when ``modules`` are compiled in ``folder`` and match their sources, else why
    their sources run."""
    if os.environ.get(PURE_VARIABLE):
        return f"{PURE_VARIABLE} is set"
    if any(_compiled_file(folder, name) is None for name in modules):
        return "not compiled when installed (no C compiler or no mypyc)"
    try:
        digests = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return f"no valid {STAMP} beside the compiled modules"
    current = source_digests(folder, modules)
    for name in modules:
        if not isinstance(digests, dict) or digests.get(name) != current[name]:
            return f"{name}.py changed since it was compiled (reinstall to compile it again)"
    return None


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the listed modules as their sources, ahead of a compiled file beside them."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def load(package: str) -> Form:
    """Decide the form of ``package``'s compiled modules before any is imported: their
    compiled files, or, when those cannot be trusted, their sources (an import of one
    then finds the source). Returns the form."""
    known = FORMS.get(package)
    if known is not None:
        return known
    modules = GROUPS[package]
    folder = HERE / package
    reason = why_not_compiled(folder, modules)
    if reason is None:
        FORMS[package], REASONS[package] = "compiled", "compiled with mypyc when installed"
        return "compiled"
    FORMS[package], REASONS[package] = "source", reason
    if any(_compiled_file(folder, name) is not None for name in modules):
        prefix = f"{__name__.rpartition('.')[0]}.{package}"
        sources = {f"{prefix}.{name}": folder / f"{name}.py" for name in modules}
        sys.meta_path.insert(0, _SourceFinder(sources))
    return "source"


def summary() -> str:
    """Each package's form and why, on one line (the benchmarks' headers); a package not
    imported yet has its form decided now, as its import would."""
    for package in GROUPS:
        load(package)
    return "; ".join(f"{package}: {FORMS[package]} ({REASONS[package]})" for package in GROUPS)


__all__ = [
    "FORMS",
    "GROUPS",
    "PURE_VARIABLE",
    "REASONS",
    "STAMP",
    "group_name",
    "load",
    "source_digests",
    "summary",
    "why_not_compiled",
]
