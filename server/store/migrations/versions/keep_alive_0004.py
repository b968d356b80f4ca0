"""players that keep connections open: one HTTP connection per match instead of per message

Revision ID: keep_alive_0004
Revises: scaleout_0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "keep_alive_0004"
down_revision = "scaleout_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("keep_alive", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("keep_alive")
