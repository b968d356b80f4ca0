"""The storage tests' store: open on the test's database (``database_url``), closed after."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.store import Store


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    store = Store(database_url)
    await store.open(upgrade=True)
    yield store
    await store.close()
