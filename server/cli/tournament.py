"""``ggp tournament create|standings|watch``: tournaments of a running service, over HTTP."""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from ._common import EXIT_FAILED, EXIT_UNREACHABLE, InputError

COLUMNS = (
    "rank",
    "player",
    "points",
    "played",
    "wins",
    "draws",
    "losses",
    "byes",
    "forfeits",
    "TO",
    "CE",
    "IL",
    "status",
)
"""The standings' columns in a table or CSV; TO, CE and IL count the player's errors by
kind (timeouts, connection errors, illegal moves)."""

ERROR_KINDS = ("TO", "CE", "IL")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tournament",
        help="create a tournament on a service, show its standings, watch it",
        description="Talk to a running `ggp serve` over its REST API: `create SPEC` sends a "
        "tournament spec (JSON or YAML) and prints the new id, `standings ID` prints the "
        "standings, `watch ID` prints progress until the tournament ends.",
    )
    parser.add_argument("action", choices=("create", "standings", "watch"), help="what to do")
    parser.add_argument("target", metavar="SPEC|ID", help="a spec file (create) or a tournament id")
    parser.add_argument(
        "--server",
        default=os.environ.get("GGP_SERVER", "http://127.0.0.1:9000"),
        metavar="URL",
        help="the service (default $GGP_SERVER, else http://127.0.0.1:9000)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("GGP_ADMIN_TOKEN"),
        metavar="T",
        help="the admin token, for create (default $GGP_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="standings as a table (default), CSV or JSON",
    )
    parser.add_argument(
        "--interval", type=float, default=2.0, metavar="S", help="watch: seconds between polls"
    )
    parser.set_defaults(run=run)


def read_spec(path: Path) -> dict[str, Any]:
    """A spec file as plain data: JSON, or YAML for .yaml/.yml files."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from error
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as error:
            raise InputError("reading YAML needs PyYAML (pip install pyyaml)") from error
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise InputError(f"{path} is not valid YAML: {error}") from error
    else:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise InputError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise InputError(f"{path} must hold an object (the tournament spec)")
    return data


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _call(
    server: str, method: str, path: str, *, token: str | None = None, body: Any = None
) -> Any:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = server.rstrip("/") + path
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session,
            session.request(method, url, json=body, headers=headers) as response,
        ):
            text = await response.text()
            data = json.loads(text) if text else None
            if response.status >= 400:
                error = (data or {}).get("error", {}) if isinstance(data, dict) else {}
                message = error.get("message") or text or response.reason
                raise ApiError(response.status, str(message))
            return data
    except (aiohttp.ClientError, OSError, TimeoutError) as error:
        raise ApiError(0, f"cannot reach {server}: {error or type(error).__name__}") from error


def standings_text(table: list[dict[str, Any]], fmt: str) -> str:
    """The standings as a table, CSV or JSON."""
    if fmt == "json":
        return json.dumps(table, indent=2)
    rows = [[_cell(_value(line, column)) for column in COLUMNS] for line in table]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    lines = [COLUMNS, *rows]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def _value(line: dict[str, Any], column: str) -> Any:
    if column in ERROR_KINDS:
        return (line.get("errors") or {}).get(column, 0)
    return line.get(column)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return "" if value is None else str(value)


def progress_line(tournament: dict[str, Any]) -> str:
    """One line of progress: matches done of total, running, leaders."""
    progress = tournament["progress"]
    done = progress["finished"] + progress["awarded"]
    total = progress["total"]
    of = f"{done}/{total}" if total is not None else str(done)
    leaders = ", ".join(tournament.get("leaders") or []) or "-"
    line = f"{tournament['id']}: {tournament['status']}, {of} matches done, {progress['running']} running, leaders: {leaders}"
    if tournament.get("pause_reason"):
        line += f" (paused: {tournament['pause_reason']})"
    return line


async def _run(args: argparse.Namespace) -> int:
    if args.action == "create":
        spec = read_spec(Path(args.target))
        if not args.token:
            raise InputError("creating a tournament needs the admin token (--token)")
        created = await _call(args.server, "POST", "/api/tournaments", token=args.token, body=spec)
        print(created["id"])
        return 0
    path = f"/api/tournaments/{args.target}"
    if args.action == "standings":
        print(standings_text(await _call(args.server, "GET", f"{path}/standings"), args.format))
        return 0
    last = ""
    while True:
        tournament = await _call(args.server, "GET", path)
        line = progress_line(tournament)
        if line != last:
            print(line, flush=True)
            last = line
        if tournament["status"] in ("finished", "cancelled"):
            table = await _call(args.server, "GET", f"{path}/standings")
            print(standings_text(table, "table"))
            return 0 if tournament["status"] == "finished" else EXIT_FAILED
        await asyncio.sleep(args.interval)


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except ApiError as error:
        print(f"ggp tournament: {error}", file=sys.stderr)
        if error.status == 0:
            return EXIT_UNREACHABLE
        return 2 if 400 <= error.status < 500 else EXIT_FAILED
