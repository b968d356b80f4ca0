"""The migrations build exactly the schema the code describes, on SQLite and PostgreSQL:
a column added to a table without a migration (or the other way round) fails here."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

import server.store.check_tables  # noqa: F401 - every table module registers its tables
import server.store.tournament_tables  # noqa: F401
from server.store import migrate
from server.store.tables import metadata
from server.store.urls import async_url


def _differences(connection: Connection) -> list[Any]:
    """What autogenerate would change, leaving out the job system's own tables."""
    found = compare_metadata(MigrationContext.configure(connection), metadata)
    return [difference for difference in found if not _of_the_job_system(difference)]


def _of_the_job_system(difference: Any) -> bool:
    """A table or index of procrastinate's, which creates and migrates its own schema."""
    if not isinstance(difference, tuple) or difference[0] not in ("remove_table", "remove_index"):
        return False
    item = difference[1]
    table = item if difference[0] == "remove_table" else item.table
    return str(table.name).startswith("procrastinate_")


async def test_the_migrations_build_the_schema_the_tables_describe(database_url: str) -> None:
    engine = create_async_engine(async_url(database_url))
    try:
        async with engine.begin() as connection:
            await connection.run_sync(migrate.upgrade)
        async with engine.connect() as connection:
            assert await connection.run_sync(_differences) == []
            assert await connection.run_sync(migrate.current_revision) == migrate.head_revision()
    finally:
        await engine.dispose()
