"""Alembic's environment: migrations run on a connection the store hands in."""

from __future__ import annotations

from alembic import context

from server.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through server.store.migrate (ggp db upgrade)")
context.configure(
    connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True
)
with context.begin_transaction():
    context.run_migrations()
