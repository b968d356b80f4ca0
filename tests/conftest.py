"""Suite-wide fixtures and rules: databases on SQLite and on a real PostgreSQL, tests
marked ``shared`` that need the reference material in ``../shared``, and tests marked
``source_modules`` that replace functions or methods of the engine's compiled modules."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pgcluster import create_database, find_bindir, postgres_cluster
from shared_material import SHARED, absent

from server.gdl import native
from server.gdl.game import forget_compiled_engines

_numbers = itertools.count()


@pytest.fixture(scope="session")
def postgres_base_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster for the whole session (per test worker)."""
    bindir = find_bindir()
    if bindir is None:
        reason = "no PostgreSQL binaries (initdb, pg_ctl) found: install Debian's postgresql"
        if os.environ.get("CI"):
            pytest.fail(f"CI requires the PostgreSQL tests: {reason}")
        pytest.skip(reason)
    # Not under pytest's temporary folder: as root that is private to root, and the
    # cluster runs as the postgres user.
    folder = Path(tempfile.mkdtemp(prefix="ggp-postgres-"))
    try:
        with postgres_cluster(bindir, folder) as url:
            yield url
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database: a SQLite file, or a new database in the PostgreSQL cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ggp.db'}"
    base = request.getfixturevalue("postgres_base_url")
    return create_database(base, f"test_{os.getpid()}_{next(_numbers)}")


def pytest_configure(config: pytest.Config) -> None:
    # No engine compiled by an earlier run (or by the user) may change what a test loads:
    # the tests of the engine store point it at a folder of their own.
    os.environ["GGP_ENGINE_STORE"] = "off"
    config.addinivalue_line(
        "markers",
        "shared(path): needs that path of ../shared; skipped when it is missing, "
        "failed instead when GGP_REQUIRE_SHARED=1",
    )
    config.addinivalue_line(
        "markers",
        "source_modules: replaces functions or methods of the engine's compiled modules, "
        "which their compiled form does not allow; run in a process of its own on their "
        "sources",
    )


HEAP_SLACK = 200 * 2**20
"""Bytes a test worker may grow by before the garbage of the tests run since is freed."""
_settled = 0
"""The worker's resident size after it last freed its garbage (bytes)."""


def _resident_bytes() -> int:
    """This process's resident size, or 0 where ``/proc`` is missing."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


@functools.cache
def _heap_trimmer() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, which gives the C heap's free pages back to the system;
    ``None`` on other C libraries."""
    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Free what the tests left once the worker has grown by :data:`HEAP_SLACK`.

    A compiled game is a generated module whose functions refer to its namespace: a
    cycle that only the cyclic collector frees, and its oldest generation runs seldom.
    Over the corpus tests a worker grew past 10 GB that way, two of them most of a
    24 GB machine; collected and trimmed here, one peaked under 3 GB. The compiled
    engines the process keeps for later loads of the same rules are forgotten after each
    test, so that every test compiles what it loads, as a fresh process would."""
    global _settled
    forget_compiled_engines()
    if _resident_bytes() > _settled + HEAP_SLACK:
        gc.collect()
        trim = _heap_trimmer()
        if trim is not None:
            trim(0)
        _settled = _resident_bytes()


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("shared"):
        for part in marker.args or ("",):
            found = any(SHARED.glob(part)) if "*" in part else (SHARED / part).exists()
            if not found:
                absent(part or "the folder")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a test marked ``source_modules`` in a process of its own that loads the
    engine's modules from their sources (``GGP_PURE_PYTHON``), when this one runs some
    compiled: its outcome there is its outcome here."""
    if pyfuncitem.get_closest_marker("source_modules") is None:
        return None
    if all(native.load(package) == "source" for package in native.GROUPS):
        return None
    root = Path(__file__).parent.parent
    command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, pyfuncitem.nodeid],
        cwd=root,
        env={**os.environ, native.PURE_VARIABLE: "1"},
        capture_output=True,
        text=True,
        timeout=280,
    )
    if result.returncode != 0:
        pytest.fail(f"failed on the source modules:\n{result.stdout}{result.stderr}", False)
    return True
