"""Queueing a match on PostgreSQL as one statement: the match, its seats and its audit line.

One round trip in autocommit instead of BEGIN, three INSERTs and COMMIT.  The statement
is atomic on its own: a taken id (or schedule key) writes none of it.  The seats and the
audit line (none or one) travel as JSON documents that ``json_to_recordset`` reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    bindparam,
    insert,
    literal,
    select,
    true,
)

from .pg_batch import json_records
from .tables import audit, match_players, matches

MATCH_COLUMNS = (
    "id",
    "game_name",
    "game_version",
    "status",
    "players",
    "start_clock",
    "play_clock",
    "policy",
    "config",
    "tournament_id",
    "schedule_key",
    "requeued_from",
    "queued_at",
)
"""The columns a queued match is written with (the others start empty)."""


def _statement() -> Any:
    lines = json_records("audit_lines", {"at": BigInteger, "actor": String, "target": String})
    audited = (
        insert(audit)
        .from_select(
            ["at", "actor", "action", "target"],
            select(lines.c.at, lines.c.actor, literal("match.queue", String), lines.c.target),
        )
        .returning(audit.c.id)
        .cte("audited")
    )
    queued = (
        insert(matches)
        .values({name: bindparam(name, type_=matches.c[name].type) for name in MATCH_COLUMNS})
        .returning(matches.c.id)
        .cte("queued")
    )
    seats = json_records("seats", {"seat": Integer, "player": String})
    return (
        insert(match_players)
        .from_select(
            ["match_id", "seat", "player"],
            select(queued.c.id, seats.c.seat, seats.c.player).select_from(
                queued.join(seats, true())
            ),
        )
        .add_cte(audited)
    )


QUEUE_MATCH = _statement()
"""The statement, built once; its parameters come from :func:`queue_parameters`."""


def queue_parameters(
    values: Mapping[str, Any], players: Sequence[str | None], audit_actor: str | None
) -> dict[str, Any]:
    """The match's column values, its seats and its audit line (by ``audit_actor``, at
    the time the match is queued)."""
    return {
        **{name: values[name] for name in MATCH_COLUMNS},
        "seats": [{"seat": seat, "player": player} for seat, player in enumerate(players)],
        "audit_lines": []
        if audit_actor is None
        else [{"at": values["queued_at"], "actor": audit_actor, "target": values["id"]}],
    }
