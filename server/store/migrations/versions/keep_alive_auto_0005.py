"""kept connections by default where a player's pings show it keeps them

``players.keep_alive`` becomes nullable: ``NULL`` (auto, the new default) follows
``keeps_connections``, what the player's latest answered ping showed.  Players registered
with the old default (``false``) become auto.

Revision ID: keep_alive_auto_0005
Revises: keep_alive_0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "keep_alive_auto_0005"
down_revision = "keep_alive_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.alter_column(
            "keep_alive", existing_type=sa.Boolean(), nullable=True, server_default=None
        )
        batch_op.add_column(sa.Column("keeps_connections", sa.Boolean(), nullable=True))
    op.execute(sa.text("UPDATE players SET keep_alive = NULL WHERE keep_alive = false"))


def downgrade() -> None:
    op.execute(sa.text("UPDATE players SET keep_alive = false WHERE keep_alive IS NULL"))
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("keeps_connections")
        batch_op.alter_column(
            "keep_alive", existing_type=sa.Boolean(), nullable=False, server_default=sa.false()
        )
