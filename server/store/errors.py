"""Errors of the storage layer; the web maps each to its HTTP status."""

from __future__ import annotations

from server.errors import Clash, GgpError, Missing


class StoreError(GgpError):
    """Anything the store refuses or cannot do."""


class NotFound(StoreError, Missing):
    """No such player, game, match or owner."""


class Conflict(StoreError, Clash):
    """The write contradicts what is stored (a duplicate name, a match no longer queued)."""


class SchemaOutOfDate(StoreError):
    """The database is not at the latest schema revision; run ``ggp db upgrade``."""


class StoreClosed(StoreError):
    """The store was used before ``open()`` or after ``close()``."""
