"""outbound bots: a player's connection kind and the tokens bots connect with

Revision ID: bots_outbound_0002
Revises: t12_tournaments
Create Date: 2026-11-23 04:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "bots_outbound_0002"
down_revision = "t12_tournaments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("connection", sa.String(length=20), server_default="http", nullable=False)
        )
    op.create_table(
        "bot_tokens",
        sa.Column("player", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player"],
            ["players.name"],
            name=op.f("fk_bot_tokens_player_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player", name=op.f("pk_bot_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_bot_tokens_token_hash")),
    )


def downgrade() -> None:
    op.drop_table("bot_tokens")
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("connection")
