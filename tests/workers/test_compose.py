"""docker-compose.yml shows scale-out on one machine (checked without a Docker engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from server.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def services() -> dict[str, dict[str, Any]]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def command(name: str) -> Any:
    argv = services()[name]["command"]
    assert argv[0] == "ggp"
    return build_parser().parse_args(argv[1:])


def workers() -> list[str]:
    return sorted(
        name for name, spec in services().items() if spec.get("command", [""])[1:2] == ["worker"]
    )


def test_the_service_serves_only_and_two_workers_run_the_matches() -> None:
    serve = command("server")
    assert serve.command == "serve" and serve.no_runner
    assert len(workers()) >= 2
    names = {command(name).name for name in workers()}
    assert len(names) == len(workers())  # each worker has a name of its own


def test_workers_share_the_service_database_and_host_key() -> None:
    server = services()["server"]
    database = server["environment"]["GGP_DATABASE_URL"]
    key = server["environment"]["GGP_HOST_KEY"]
    key_volume = next(entry for entry in server["volumes"] if str(entry).startswith("host-key:"))
    for name in workers():
        spec = services()[name]
        assert spec["environment"]["GGP_DATABASE_URL"] == database
        assert spec["environment"]["GGP_HOST_KEY"] == key
        assert any(str(entry).startswith(key_volume.rsplit(":", 1)[0]) for entry in spec["volumes"])
        assert spec["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert spec["depends_on"]["server"]["condition"] == "service_healthy"


def test_each_worker_is_healthy_while_its_own_heartbeat_is_fresh() -> None:
    for name in workers():
        test = services()[name]["healthcheck"]["test"]
        assert test[0] == "CMD"
        probe = build_parser().parse_args(test[2:])
        assert probe.command == "worker" and probe.check_alive == command(name).name
