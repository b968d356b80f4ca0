"""hosting: indexes for the match list's filters (the newest-first order is web_0003's)

Revision ID: hosting_0003
Revises: web_0003
Create Date: 2026-11-23 06:55:00
"""

from __future__ import annotations

from alembic import op

revision = "hosting_0003"
down_revision = "web_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_game_name_queued_at", "matches", ["game_name", "queued_at"])
    op.create_index("ix_matches_tournament_id_queued_at", "matches", ["tournament_id", "queued_at"])
    op.create_index("ix_match_players_player_match_id", "match_players", ["player", "match_id"])


def downgrade() -> None:
    op.drop_index("ix_match_players_player_match_id", table_name="match_players")
    op.drop_index("ix_matches_tournament_id_queued_at", table_name="matches")
    op.drop_index("ix_matches_game_name_queued_at", table_name="matches")
