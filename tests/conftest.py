"""Suite-wide rules: tests marked ``shared`` need the reference material in ``../shared``."""

from __future__ import annotations

import pytest
from shared_material import SHARED, absent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "shared(path): needs that path of ../shared; skipped when it is missing, "
        "failed instead when GGP_REQUIRE_SHARED=1",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("shared"):
        for part in marker.args or ("",):
            found = any(SHARED.glob(part)) if "*" in part else (SHARED / part).exists()
            if not found:
                absent(part or "the folder")
