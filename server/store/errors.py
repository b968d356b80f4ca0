"""Errors of the storage layer; the web maps each to its HTTP status."""

from __future__ import annotations


class StoreError(Exception):
    """Anything the store refuses or cannot do."""


class NotFound(StoreError):
    """No such player, game, match or owner."""


class Conflict(StoreError):
    """The write contradicts what is stored (a duplicate name, a match no longer queued)."""


class SchemaOutOfDate(StoreError):
    """The database is not at the latest schema revision; run ``ggp db upgrade``."""


class StoreClosed(StoreError):
    """The store was used before ``open()`` or after ``close()``."""
