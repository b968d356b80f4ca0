"""Which form of the interpreter's hot modules runs: compiled by mypyc, or their source.

An install with a C compiler compiles :data:`MODULES` with mypyc (``setup.py``) and
writes the digest of each one's source beside them (``native.json``). Python would
import a compiled module in place of its source even after the source was edited, so
:func:`load` checks the digests first: when the compiled modules are missing, stale, or
``GGP_PURE_PYTHON`` is set, the sources are loaded in their place, all of them (the
compiled modules are one group and call one another natively).

Both forms give the same answers; the compiled one does the interpreter's own work
(contexts, relations, tables computed on demand, legal moves in order) faster. The
rules' generated code is plain Python in both.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Literal

MODULES = ("codegen", "engine")
"""The compiled modules, in the order their sources must be loaded."""
STAMP = "native.json"
PURE_VARIABLE = "GGP_PURE_PYTHON"

HERE = Path(__file__).parent
FORM: Literal["compiled", "source"] = "source"
"""The form loaded (set by :func:`load`)."""
REASON = "not loaded yet"
"""Why that form (the benchmarks print it in their headers)."""


def _compiled_file(name: str) -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = HERE / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def source_digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of each module's source in ``folder``, by module name: what the stamp
    keeps (``setup.py`` writes it with this function)."""
    return {
        name: hashlib.sha256((folder / f"{name}.py").read_bytes()).hexdigest() for name in MODULES
    }


def _why_not_compiled() -> str | None:
    """None when the compiled modules are there and match their sources, else why not."""
    if os.environ.get(PURE_VARIABLE):
        return f"{PURE_VARIABLE} is set"
    if any(_compiled_file(name) is None for name in MODULES):
        return "not compiled when installed (no C compiler or no mypyc)"
    try:
        digests = json.loads((HERE / STAMP).read_text())
    except (OSError, ValueError):
        return f"no valid {STAMP} beside the compiled modules"
    current = source_digests(HERE)
    for name in MODULES:
        if digests.get(name) != current[name]:
            return f"{name}.py changed since it was compiled (reinstall to compile it again)"
    return None


def load() -> None:
    """Load the compiled modules or, when they cannot be trusted, the sources."""
    global FORM, REASON
    package = __name__.rpartition(".")[0]
    if all(f"{package}.{name}" in sys.modules for name in MODULES):
        return
    reason = _why_not_compiled()
    if reason is None:
        FORM, REASON = "compiled", "compiled with mypyc when installed"
        return
    FORM, REASON = "source", reason
    if all(_compiled_file(name) is None for name in MODULES):
        return  # the ordinary import finds the sources
    for name in MODULES:  # a compiled file would shadow the source: load the source
        full = f"{package}.{name}"
        loader = importlib.machinery.SourceFileLoader(full, str(HERE / f"{name}.py"))
        spec = importlib.util.spec_from_loader(full, loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        try:
            loader.exec_module(module)
        except BaseException:
            del sys.modules[full]
            raise


__all__ = ["FORM", "MODULES", "PURE_VARIABLE", "REASON", "STAMP", "load", "source_digests"]
