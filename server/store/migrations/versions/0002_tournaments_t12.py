"""tournaments: specs, awards (byes, forfeits), ratings; schedule keys on matches

Revision ID: t12_tournaments
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "t12_tournaments"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schedule_key", sa.String(length=200), nullable=True))
        batch_op.create_index(
            "uq_matches_tournament_schedule", ["tournament_id", "schedule_key"], unique=True
        )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("game", sa.String(length=100), nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("pause_reason", sa.Text(), nullable=True),
        sa.Column("cleared", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index("ix_tournaments_status", "tournaments", ["status"], unique=False)
    op.create_table(
        "tournament_awards",
        sa.Column("tournament_id", sa.String(length=200), nullable=False),
        sa.Column("schedule_key", sa.String(length=200), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "schedule_key", name=op.f("pk_tournament_awards")),
    )
    op.create_table(
        "ratings",
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("player", sa.String(length=100), nullable=False),
        sa.Column("mu", sa.Float(precision=53), nullable=False),
        sa.Column("sigma", sa.Float(precision=53), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("scope", "player", name=op.f("pk_ratings")),
    )
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("player", sa.String(length=100), nullable=False),
        sa.Column("match_id", sa.String(length=200), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("mu", sa.Float(precision=53), nullable=False),
        sa.Column("sigma", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_history")),
    )
    op.create_index("ix_rating_history_player", "rating_history", ["player", "scope"], unique=False)
    op.create_table(
        "rated_matches",
        sa.Column("match_id", sa.String(length=200), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_rated_matches")),
    )


def downgrade() -> None:
    op.drop_table("rated_matches")
    op.drop_index("ix_rating_history_player", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_table("ratings")
    op.drop_table("tournament_awards")
    op.drop_index("ix_tournaments_status", table_name="tournaments")
    op.drop_table("tournaments")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("uq_matches_tournament_schedule")
        batch_op.drop_column("schedule_key")
