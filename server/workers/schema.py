"""What the scale-out adds to a PostgreSQL database: procrastinate's schema and one trigger.

Applied by the Alembic revision ``scaleout_0003`` (so by ``ggp db upgrade``), on PostgreSQL
only.  The trigger defers one procrastinate job per match inserted as ``queued``, in the
same transaction as the insert, whatever code queued it (the API, a tournament, a
re-queue): a queued match always has its job, and a job never points at a match that was
rolled back.
"""

from __future__ import annotations

from importlib import resources

RUN_MATCH_TASK = "ggp.run_match"
"""The procrastinate task name of "run this match"."""
QUEUE_PREFIX = "ggp.game."
"""Each game has its own job queue, so a worker can be limited to some games."""
EVENTS_CHANNEL = "ggp_match_events"
"""The LISTEN/NOTIFY channel of live match events (match id and step only)."""


def game_queue(game_name: str) -> str:
    """The job queue of a game's matches."""
    return f"{QUEUE_PREFIX}{game_name}"


def procrastinate_schema() -> str:
    """procrastinate's own schema, exactly as the installed version ships it."""
    return (resources.files("procrastinate.sql") / "schema.sql").read_text(encoding="utf-8")


DEFER_TRIGGER = f"""
CREATE FUNCTION ggp_defer_match_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM procrastinate_defer_jobs_v1(ARRAY[ROW(
        '{QUEUE_PREFIX}' || NEW.game_name,
        '{RUN_MATCH_TASK}',
        0,
        NULL,
        'ggp.match.' || NEW.id,
        jsonb_build_object('match_id', NEW.id),
        NULL
    )::procrastinate_job_to_defer_v1]);
    RETURN NEW;
END;
$$;

CREATE TRIGGER ggp_defer_match_job
    AFTER INSERT ON matches
    FOR EACH ROW WHEN (NEW.status = 'queued')
    EXECUTE FUNCTION ggp_defer_match_job();
"""

DEFER_WAITING = f"""
SELECT procrastinate_defer_jobs_v1(array_agg(ROW(
    '{QUEUE_PREFIX}' || game_name, '{RUN_MATCH_TASK}', 0, NULL, 'ggp.match.' || id,
    jsonb_build_object('match_id', id), NULL
)::procrastinate_job_to_defer_v1 ORDER BY queued_at, id))
FROM matches WHERE status = 'queued' HAVING count(*) > 0;
"""
"""Jobs for the matches already queued when the schema is upgraded."""

DROP_ALL = """
DROP TRIGGER IF EXISTS ggp_defer_match_job ON matches;
DROP FUNCTION IF EXISTS ggp_defer_match_job();
DROP TABLE IF EXISTS procrastinate_periodic_defers, procrastinate_events, procrastinate_jobs,
    procrastinate_workers CASCADE;
DROP TYPE IF EXISTS procrastinate_job_to_defer_v1, procrastinate_job_event_type,
    procrastinate_job_status CASCADE;
"""
