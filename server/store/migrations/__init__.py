"""Alembic migrations of the store (env.py and versions/)."""
