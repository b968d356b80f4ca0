"""indexes for the ratings' catch-up: finished matches by when they finished, and the
latest match rated

Without them each catch-up read every finished match and sorted every rated one, a cost
that grew with the archive.

Revision ID: rating_indexes_0006
Revises: keep_alive_auto_0005
"""

from __future__ import annotations

from alembic import op

revision = "rating_indexes_0006"
down_revision = "keep_alive_auto_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_status_finished_at", "matches", ["status", "finished_at"])
    op.create_index("ix_rated_matches_finished_at", "rated_matches", ["finished_at", "match_id"])


def downgrade() -> None:
    op.drop_index("ix_rated_matches_finished_at", table_name="rated_matches")
    op.drop_index("ix_matches_status_finished_at", table_name="matches")
