"""indexes for the pages: every match newest first, and a game's matches by status

Revision ID: web_0003
Revises: bots_outbound_0002
"""

from __future__ import annotations

from alembic import op

revision = "web_0003"
down_revision = "bots_outbound_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_queued_at", "matches", ["queued_at", "id"])
    op.create_index(
        "ix_matches_game_status_queued", "matches", ["game_name", "status", "queued_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_matches_game_status_queued", table_name="matches")
    op.drop_index("ix_matches_queued_at", table_name="matches")
