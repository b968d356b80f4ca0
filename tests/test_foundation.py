"""The project's foundation: layout, the README's set-up commands, CI, and the container set-up.

No Docker engine runs where these tests run, so the compose file and the Dockerfile are read
statically: every command a container runs is parsed by the real ``ggp`` parser, every file
they name exists, and the services agree with one another on hosts, ports and volumes.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from server.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent

# --- reading the files -------------------------------------------------------------------------


@cache
def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def services() -> dict[str, dict[str, Any]]:
    return compose()["services"]


def built_services() -> list[str]:
    """Services whose image is built from this repository (they run ``ggp``)."""
    return sorted(name for name, spec in services().items() if "build" in spec)


def parse_ggp(argv: list[str]) -> argparse.Namespace:
    """Parse a ``ggp ...`` command line with the real parser; fail the test on a usage error."""
    assert argv[0] == "ggp", f"expected a ggp command, got {argv}"
    try:
        return build_parser().parse_args(argv[1:])
    except SystemExit:
        pytest.fail(f"`{shlex.join(argv)}` is not a valid ggp command line")


def service_command(name: str) -> argparse.Namespace:
    return parse_ggp(services()[name]["command"])


def player_services() -> list[str]:
    return [name for name in built_services() if service_command(name).command == "player"]


def container_ports(spec: dict[str, Any]) -> set[int]:
    """The container side of every published port ("9148:9147", "9147/tcp", long syntax)."""
    ports = set()
    for entry in spec.get("ports", []):
        target = entry["target"] if isinstance(entry, dict) else str(entry).split(":")[-1]
        ports.add(int(str(target).split("/")[0]))
    return ports


def volume_mounts(spec: dict[str, Any]) -> dict[str, str]:
    """Container path -> source of every volume of a service."""
    mounts = {}
    for entry in spec.get("volumes", []):
        if isinstance(entry, dict):
            mounts[entry["target"]] = entry["source"]
        else:
            source, target = str(entry).split(":")[:2]
            mounts[target] = source
    return mounts


def fenced_blocks(markdown: str) -> list[str]:
    """The contents of every fenced code block, in order."""
    return [m.group(1) for m in re.finditer(r"^```[\w-]*\n(.*?)^```", markdown, re.M | re.S)]


def readme_setup_commands() -> list[str]:
    blocks = fenced_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    return [block for block in blocks if "python3 -m venv" in block]


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no section {title!r}"
    return match.group(1)


def chain(command: str) -> list[list[str]]:
    """A one-line ``a && b && c`` shell command as a list of argument vectors."""
    return [shlex.split(part) for part in command.strip().split("&&")]


def script_commands(path: Path) -> list[list[str]]:
    """The argument vectors of a plain shell script, one per line, comments dropped."""
    commands = []
    for line in path.read_text(encoding="utf-8").splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            commands.append(argv)
    return commands


def invocations(commands: list[list[str]], tool: str) -> list[list[str]]:
    """The arguments of every command that runs ``tool`` (bare or from some ``bin/``)."""
    return [argv[1:] for argv in commands if argv[0] == tool or argv[0].endswith(f"/bin/{tool}")]


def install_requirements(pip_arguments: list[str]) -> list[str]:
    """What a ``pip install`` installs: its arguments that are not options."""
    assert pip_arguments[0] == "install"
    return [arg for arg in pip_arguments[1:] if not arg.startswith("-")]


# --- layout ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["pyproject.toml", "README.md", "docker-compose.yml", "Dockerfile", ".ci/run"],
)
def test_top_level_file_exists(path: str) -> None:
    assert (ROOT / path).is_file()


@pytest.mark.parametrize("path", ["server", "players", "tests", "benchmarks"])
def test_top_level_folder_exists(path: str) -> None:
    assert (ROOT / path).is_dir()


def test_the_ggp_console_script_is_the_cli_entry_point() -> None:
    assert pyproject()["project"]["scripts"] == {"ggp": "server.cli:main"}


# --- README ------------------------------------------------------------------------------------


def test_readme_has_exactly_two_setup_commands_before_any_other_code() -> None:
    blocks = fenced_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    setup = readme_setup_commands()
    assert len(setup) == 2
    assert blocks[:2] == setup
    for command in setup:
        assert command.count("\n") == 1, f"not a single line: {command!r}"


def test_readme_setup_commands_use_only_the_repository_venv() -> None:
    for command in readme_setup_commands():
        first, *rest = chain(command)
        assert first == ["python3", "-m", "venv", ".venv"]
        for argv in rest:
            assert argv[0].startswith(".venv/bin/"), argv


def test_readme_first_command_installs_and_serves_the_demo() -> None:
    install, serve = chain(readme_setup_commands()[0])[1:]
    assert install == [".venv/bin/pip", "install", "-e", "."]
    assert serve[0] == ".venv/bin/ggp"
    args = parse_ggp(["ggp", *serve[1:]])
    assert args.command == "serve" and args.demo


def test_readme_second_command_installs_the_test_extra_and_runs_pytest() -> None:
    install, test = chain(readme_setup_commands()[1])[1:]
    assert install == [".venv/bin/pip", "install", "-e", ".[test]"]
    assert test[0] == ".venv/bin/pytest"


def test_readme_usage_lists_exactly_the_ggp_sub_commands() -> None:
    (subcommands,) = [
        action.choices
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    documented = set(re.findall(r"^\| `ggp ([\w-]+)", readme_section("Usage"), re.M))
    assert documented == set(subcommands)


def test_readme_lists_every_benchmark_script() -> None:
    documented = set(re.findall(r"`(\w+\.py)`", readme_section("Benchmarks")))
    assert documented == {path.name for path in (ROOT / "benchmarks").glob("*.py")}


def readme_benchmark_columns() -> dict[str, list[str]]:
    """The ``Columns`` cell of each row of the README's Benchmarks table, by script."""
    columns = {}
    for row in re.findall(
        r"^\| `(\w+\.py)` \|.*\| ((?:`[^`]+`(?:, )?)+) \|$", readme_section("Benchmarks"), re.M
    ):
        script, cell = row
        columns[script] = re.findall(r"`([^`]+)`", cell)
    return columns


def list_columns(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--list-columns"],
        capture_output=True,
        text=True,
        timeout=60,
    )


PENDING_LIST_COLUMNS: dict[str, str] = {}
"""Scripts allowed to lack ``--list-columns`` for now; every other script fails without it."""


@pytest.mark.parametrize("script", sorted(path.name for path in (ROOT / "benchmarks").glob("*.py")))
def test_each_benchmark_prints_the_columns_the_readme_names(script: str) -> None:
    documented = readme_benchmark_columns()
    assert script in documented, f"the README's Benchmarks table gives no Columns for {script}"
    listed = list_columns(script)
    if listed.returncode != 0 and script in PENDING_LIST_COLUMNS:
        assert "--list-columns" in listed.stderr
        pytest.skip(f"{script} has no --list-columns yet: {PENDING_LIST_COLUMNS[script]}")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == documented[script]


QUICK_RUNS = {
    "archive_import.py": ["--game", "tictactoex9", "--matches", "2"],
    "engine_speed.py": ["tictactoex9", "--runs", "1", "--seconds", "0.05", "--batch", "8"],
    "playouts.py": ["tictactoex9", "--runs", "1", "--seconds", "0.05"],
}
"""Arguments for a run of a second or two; the other scripts take minutes to run at all."""


@pytest.mark.parametrize("script", sorted(QUICK_RUNS))
def test_a_quick_benchmark_run_prints_a_header_of_its_listed_columns(script: str) -> None:
    columns = list_columns(script).stdout.splitlines()
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *QUICK_RUNS[script]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    header = next(line for line in lines if line.startswith(columns[0]))
    row = lines[-1]
    assert re.fullmatch(r"\s*".join(re.escape(column) for column in columns), header.strip())
    assert row.startswith("tictactoex9") and len(row.split()) == len(columns)


def test_the_test_extra_runs_the_suite_in_parallel() -> None:
    extra = pyproject()["project"]["optional-dependencies"]["test"]
    names = {re.match(r"[\w.-]+", requirement).group().lower() for requirement in extra}
    assert {"pytest", "pytest-asyncio", "pytest-xdist"} <= names
    addopts = pyproject()["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-n" in addopts


# --- CI ----------------------------------------------------------------------------------------

CI = ROOT / ".ci" / "run"


def test_ci_script_is_an_executable_strict_bash_script() -> None:
    assert os.access(CI, os.X_OK)
    lines = CI.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines


def test_ci_runs_the_readme_test_command_in_a_fresh_environment() -> None:
    readme_install, readme_test = chain(readme_setup_commands()[1])[1:]
    commands = script_commands(CI)

    assert invocations(commands, "pytest") == [readme_test[1:]]
    assert [install_requirements(args) for args in invocations(commands, "pip")] == [
        install_requirements(readme_install[1:])
    ]
    assert not any(".venv/" in arg for argv in commands for arg in argv), "reuses .venv"


def test_ci_requires_the_shared_reference_material_before_the_tests() -> None:
    commands = script_commands(CI)
    required = commands.index(["export", "GGP_REQUIRE_SHARED=1"])
    tests = next(i for i, argv in enumerate(commands) if argv[0].endswith("/bin/pytest"))
    assert required < tests


def test_ci_lints_and_type_checks() -> None:
    commands = script_commands(CI)
    assert ["check", "."] in invocations(commands, "ruff")
    assert invocations(commands, "mypy")
    assert pyproject()["tool"]["mypy"]["files"] == ["server"]


# --- docker-compose.yml ------------------------------------------------------------------------


def test_compose_has_the_server_a_database_and_two_players() -> None:
    assert "server" in built_services()
    assert services()["postgres"]["image"].startswith("postgres:")
    assert len(player_services()) >= 2


@pytest.mark.parametrize("name", sorted(services()))
def test_every_service_has_a_healthcheck(name: str) -> None:
    healthcheck = services()[name].get("healthcheck", {})
    assert not healthcheck.get("disable", False)
    assert healthcheck.get("test") not in (None, [], ["NONE"])


@pytest.mark.parametrize("name", sorted(set(services()) - set(built_services())))
def test_every_image_not_built_here_is_pinned(name: str) -> None:
    image = services()[name]["image"]
    _, _, tag = image.partition(":")
    assert tag and tag != "latest", image


@pytest.mark.parametrize("name", built_services())
def test_every_built_service_builds_from_an_existing_dockerfile(name: str) -> None:
    build = services()[name]["build"]
    context = ROOT / build["context"]
    assert context.is_dir()
    assert (context / build.get("dockerfile", "Dockerfile")).is_file()


@pytest.mark.parametrize("name", built_services())
def test_every_built_service_runs_a_real_ggp_command(name: str) -> None:
    args = service_command(name)
    assert callable(args.run)


def test_every_named_volume_is_declared() -> None:
    declared = set(compose().get("volumes") or {})
    for name, spec in services().items():
        for source in volume_mounts(spec).values():
            if not source.startswith((".", "/", "~")):
                assert source in declared, f"{name} mounts undeclared volume {source}"


def test_players_publish_the_port_they_listen_on_and_probe_it() -> None:
    for name in player_services():
        port = service_command(name).port
        assert container_ports(services()[name]) == {port}, name
        probe = " ".join(services()[name]["healthcheck"]["test"])
        assert f"localhost:{port}/" in probe and "( INFO )" in probe, name


def test_players_listen_on_every_interface_so_other_containers_reach_them() -> None:
    for name in player_services():
        assert service_command(name).host in ("0.0.0.0", "::"), name


def test_published_host_ports_do_not_collide() -> None:
    host_ports = [
        str(entry).split(":")[-2]
        for spec in services().values()
        for entry in spec.get("ports", [])
        if ":" in str(entry)
    ]
    assert len(host_ports) == len(set(host_ports))


def test_database_publishes_its_port_and_keeps_its_data_in_a_volume() -> None:
    database = services()["postgres"]
    assert container_ports(database) == {5432}
    assert "/var/lib/postgresql/data" in volume_mounts(database)


def test_server_serves_the_api_on_its_published_port_and_probes_its_health() -> None:
    args = service_command("server")
    assert args.command == "serve" and args.host in ("0.0.0.0", "::")
    server = services()["server"]
    assert container_ports(server) == {args.port}
    probe = " ".join(server["healthcheck"]["test"])
    assert f"localhost:{args.port}/api/health" in probe


def test_server_keeps_its_data_folder_in_a_volume() -> None:
    args = service_command("server")
    assert str(args.data) in volume_mounts(services()["server"])


def test_the_schema_is_upgraded_before_the_server_starts() -> None:
    migrate = service_command("migrate")
    assert (migrate.command, migrate.action) == ("db", "upgrade")
    server = services()["server"]
    assert server["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    url = services()["migrate"]["environment"]["GGP_DATABASE_URL"]
    assert url == server["environment"]["GGP_DATABASE_URL"]


def test_server_keeps_its_signing_key_in_a_volume() -> None:
    server = services()["server"]
    key = Path(server["environment"]["GGP_HOST_KEY"])
    assert str(key.parent) in volume_mounts(server)


def test_server_waits_for_the_healthy_players_beside_it() -> None:
    server = services()["server"]
    for name in player_services():
        assert server["depends_on"][name]["condition"] == "service_healthy", name


def test_server_is_pointed_at_the_database() -> None:
    server = services()["server"]
    url = urlsplit(server["environment"]["GGP_DATABASE_URL"])
    database = services()[url.hostname or ""]
    env = database["environment"]
    assert url.scheme.startswith("postgres")
    assert (url.username, url.password) == (env["POSTGRES_USER"], env["POSTGRES_PASSWORD"])
    assert url.path == f"/{env['POSTGRES_DB']}"
    assert url.port in container_ports(database)
    assert server["depends_on"][url.hostname]["condition"] == "service_healthy"


# --- Dockerfile --------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    logical = re.sub(r"\\\n", " ", text)
    pairs = []
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, arguments = line.partition(" ")
            pairs.append((instruction.upper(), arguments.strip()))
    return pairs


def dockerignored(path: str) -> bool:
    patterns = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    for pattern in patterns:
        pattern = pattern.strip().removeprefix("**/").rstrip("/")
        if pattern and not pattern.startswith(("#", "!")):
            if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.split("/")[0], pattern):
                return True
    return False


def test_dockerfile_base_image_has_the_required_python() -> None:
    (base,) = [args for instruction, args in dockerfile_instructions() if instruction == "FROM"]
    match = re.fullmatch(r"python:(\d+)\.(\d+)-slim", base)
    assert match, base
    required = re.fullmatch(r">=(\d+)\.(\d+)", pyproject()["project"]["requires-python"])
    assert required
    assert tuple(map(int, match.groups())) >= tuple(map(int, required.groups()))


def test_dockerfile_runs_as_an_unprivileged_user() -> None:
    users = [args for instruction, args in dockerfile_instructions() if instruction == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")


def test_dockerfile_copies_everything_the_package_build_needs() -> None:
    copied = []
    for instruction, args in dockerfile_instructions():
        if instruction == "COPY":
            copied += args.split()[:-1]
    for source in copied:
        assert (ROOT / source).exists(), source
        assert not dockerignored(source), f"{source} is excluded by .dockerignore"

    project = pyproject()
    packages = project["tool"]["setuptools"]["packages"]["find"]["include"]
    needed = {"pyproject.toml", "setup.py", project["project"]["readme"]}
    needed |= {pattern.rstrip("*").rstrip(".") for pattern in packages}
    assert needed <= set(copied)


def test_dockerfile_prepares_every_volume_a_built_service_mounts() -> None:
    """A named volume copies the image's folder (and its owner) when first mounted, so the
    unprivileged user can write there only if the image declares the folder."""
    declared: set[str] = set()
    for instruction, args in dockerfile_instructions():
        if instruction == "VOLUME":
            declared |= set(json.loads(args) if args.startswith("[") else args.split())
    for name in built_services():
        assert set(volume_mounts(services()[name])) <= declared, name
