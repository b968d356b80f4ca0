"""`ggp worker` and `ggp serve --no-runner` refuse what cannot work, in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def ggp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )


def test_a_worker_needs_a_postgresql_database(tmp_path: Path) -> None:
    done = ggp("worker", "--database", f"sqlite:///{tmp_path / 'x.db'}", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "PostgreSQL" in done.stderr
    done = ggp("worker", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("ggp worker: --database")


def test_a_worker_names_a_database_it_cannot_reach(tmp_path: Path) -> None:
    done = ggp("worker", "--database", "postgresql://nobody:secret@127.0.0.1:1/none", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "secret" not in done.stderr
    assert done.stderr.startswith("ggp worker: cannot start on postgresql://nobody:***@")


def test_serve_without_a_runner_needs_postgresql(tmp_path: Path) -> None:
    done = ggp(
        "serve", "--no-runner", "--data", str(tmp_path / "data"), "--port", "0", cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "--no-runner needs a PostgreSQL" in done.stderr
