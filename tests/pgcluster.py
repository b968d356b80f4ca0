"""A throwaway PostgreSQL cluster for tests: initdb and pg_ctl on a temporary folder.

The binaries come from ``pg_config --bindir``, ``/usr/lib/postgresql/*/bin`` or PATH.
PostgreSQL refuses to run as root, so as root the cluster runs as the ``postgres`` user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None`` when PostgreSQL is missing."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if found.returncode == 0:
            candidates.append(Path(found.stdout.strip()))
    candidates += [
        Path(path) for path in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    ]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr or done.stdout}")


@contextmanager
def postgres_cluster(bindir: Path, folder: Path) -> Iterator[str]:
    """Start a cluster in ``folder``; yield the base URL ``postgresql://ggp@127.0.0.1:PORT``."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        folder.chmod(0o700)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, sockets, log = folder / "data", folder / "sockets", folder / "postgres.log"
    _run(
        [
            *prefix,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "ggp",
            "-A",
            "trust",
            "-E",
            "UTF8",
        ]
    )
    _run([*prefix, "mkdir", "-p", str(sockets)])
    port = free_port()
    options = (
        f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    )
    _run(
        [
            *prefix,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            options,
            "-w",
            "start",
        ]
    )
    try:
        yield f"postgresql://ggp@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )


def create_database(base_url: str, name: str) -> str:
    """Create a fresh database in the cluster; return its URL."""
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{base_url}/{name}"
