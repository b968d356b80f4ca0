"""Suite-wide fixtures and rules: databases on SQLite and on a real PostgreSQL, and tests
marked ``shared`` that need the reference material in ``../shared``."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgcluster import create_database, find_bindir, postgres_cluster
from shared_material import SHARED, absent

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
    config.addinivalue_line(
        "markers",
        "shared(path): needs that path of ../shared; skipped when it is missing, "
        "failed instead when GGP_REQUIRE_SHARED=1",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("shared"):
        for part in marker.args or ("",):
            found = any(SHARED.glob(part)) if "*" in part else (SHARED / part).exists()
            if not found:
                absent(part or "the folder")
