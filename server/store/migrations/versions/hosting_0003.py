"""hosting: indexes for the match list's filters and its newest-first order

Revision ID: hosting_0003
Revises: bots_outbound_0002
Create Date: 2026-11-23 06:55:00
"""

from __future__ import annotations

from alembic import op

revision = "hosting_0003"
down_revision = "bots_outbound_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_queued_at", "matches", ["queued_at"])
    op.create_index("ix_matches_game_name_queued_at", "matches", ["game_name", "queued_at"])
    op.create_index("ix_matches_tournament_id_queued_at", "matches", ["tournament_id", "queued_at"])
    op.create_index("ix_match_players_player_match_id", "match_players", ["player", "match_id"])


def downgrade() -> None:
    op.drop_index("ix_match_players_player_match_id", table_name="match_players")
    op.drop_index("ix_matches_tournament_id_queued_at", table_name="matches")
    op.drop_index("ix_matches_game_name_queued_at", table_name="matches")
    op.drop_index("ix_matches_queued_at", table_name="matches")
