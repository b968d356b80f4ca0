"""Schema migrations with Alembic: upgrade to the latest revision, or read where a database is."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for our migrations, bound to ``connection`` when given."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The latest revision of the schema."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at; ``None`` for an empty database."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(connection: Connection) -> None:
    """Bring the database to the latest revision (a no-op when it is there already)."""
    command.upgrade(alembic_config(connection), "head")
