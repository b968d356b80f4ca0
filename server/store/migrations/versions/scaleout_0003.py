"""scale-out: who runs a match (worker, job), the workers' table, and on PostgreSQL the
job system's schema (procrastinate) with the trigger that gives each queued match its job

Revision ID: scaleout_0003
Revises: bots_checks_0003
Create Date: 2026-11-23 06:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "scaleout_0003"
down_revision = "bots_checks_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worker", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("job_id", sa.BigInteger(), nullable=True))
    op.create_table(
        "match_workers",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("games", sa.JSON(), nullable=True),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("running", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("heartbeat_at", sa.BigInteger(), nullable=False),
        sa.Column("stopped_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_match_workers")),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from server.workers.schema import DEFER_TRIGGER, DEFER_WAITING, procrastinate_schema

        for statement in (procrastinate_schema(), DEFER_TRIGGER, DEFER_WAITING):
            # several statements; "%" doubled as the driver reads placeholders
            bind.exec_driver_sql(statement.replace("%", "%%"))


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from server.workers.schema import DROP_ALL

        bind.exec_driver_sql(DROP_ALL)
    op.drop_table("match_workers")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("job_id")
        batch_op.drop_column("worker")
