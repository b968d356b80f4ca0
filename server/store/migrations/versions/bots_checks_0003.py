"""player checks: every run of the player checker and its report

Revision ID: bots_checks_0003
Revises: hosting_0003
Create Date: 2026-11-23 06:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "bots_checks_0003"
down_revision = "hosting_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "player_checks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("player", sa.String(length=100), nullable=False),
        sa.Column("trigger", sa.String(length=100), nullable=False),
        sa.Column("target", sa.String(length=2000), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("requested_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("start_clock", sa.Integer(), nullable=False),
        sa.Column("play_clock", sa.Integer(), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player"],
            ["players.name"],
            name=op.f("fk_player_checks_player_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player_checks")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_player_checks_player_id", "player_checks", ["player", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_player_checks_player_id", table_name="player_checks")
    op.drop_table("player_checks")
