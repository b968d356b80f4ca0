"""Shared material for the replay tests: the hand-written foreign log and a way to edit it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay_paths import OTHER_SERVER_LOG


@pytest.fixture
def other_server_record() -> dict[str, Any]:
    """A fresh copy of the foreign log's JSON object, free to edit."""
    return copy.deepcopy(json.loads(OTHER_SERVER_LOG.read_text(encoding="utf-8")))


@pytest.fixture
def write_log(tmp_path: Path) -> Callable[[dict[str, Any]], Path]:
    """Write a record to a file in the test's folder and return its path."""
    counter = iter(range(1_000_000))

    def write(record: dict[str, Any]) -> Path:
        path = tmp_path / f"log-{next(counter)}.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        return path

    return write
