"""The home page: the latest matches, each linked to its log (JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from server.store import MatchRow


def home_page(matches: Sequence[MatchRow]) -> str:
    """A small HTML page listing ``matches``; it refreshes itself every few seconds."""
    rows = "\n".join(
        "<tr><td><a href='/api/matches/{id}/log'>{id}</a></td><td>{game}</td><td>{players}</td>"
        "<td>{status}</td><td>{goals}</td></tr>".format(
            id=escape(match.id),
            game=escape(f"{match.game_name} v{match.game_version}"),
            players=escape(", ".join(name or "random" for name in match.players)),
            status=escape(
                match.status.value + (f" ({match.end_reason})" if match.end_reason else "")
            ),
            goals=escape(", ".join(map(str, match.goals or []))),
        )
        for match in matches
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="3">
<title>GGP match server</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:.2em .8em;text-align:left}}</style>
</head><body>
<h1>GGP match server</h1>
<p>API: <a href="/api/matches">/api/matches</a>, <a href="/api/players">/api/players</a>,
<a href="/api/games">/api/games</a>, <a href="/api/health">/api/health</a>,
<a href="/openapi.json">/openapi.json</a>, <a href="/metrics">/metrics</a></p>
<table><tr><th>match (log)</th><th>game</th><th>players</th><th>status</th><th>goals</th></tr>
{rows}
</table></body></html>
"""
