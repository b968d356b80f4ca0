"""The reference material beside the repository (``../shared``), found or reported.

Tests that read the GDL conformance corpus or the captured GGP-Base exchanges get their
paths from here. When a file is missing the test is skipped with the reason (listed by
``pytest -ra``), or fails when ``GGP_REQUIRE_SHARED=1`` is set, as in continuous
integration, so a missing folder can never turn hundreds of tests into a green run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def required() -> bool:
    """Whether a missing piece of ``../shared`` is a failure rather than a skip."""
    return os.environ.get("GGP_REQUIRE_SHARED", "") not in ("", "0")


def absent(what: str) -> NoReturn:
    """Skip the running test because ``what`` is missing, or fail it when it is required."""
    message = f"{what} is not in ../shared"
    if required():
        pytest.fail(f"GGP_REQUIRE_SHARED=1 but {message}", pytrace=False)
    pytest.skip(message)


def shared_path(*parts: str) -> Path:
    """A path inside ``../shared``; skips or fails the running test when it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        absent("/".join(parts))
    return path


def shared_files(folder: str, pattern: str = "*") -> list[Any]:
    """The files of a folder of ``../shared`` to parametrise a test with.

    When the folder is missing or empty, one placeholder case stands in for them and is
    skipped (or failed) with the reason, so no test reports an empty parameter set.
    """
    where = SHARED / folder
    files = sorted(where.glob(pattern)) if where.is_dir() else []
    if files:
        return files
    return [pytest.param(None, id="absent", marks=pytest.mark.shared(f"{folder}/{pattern}"))]


def stem(path: Path) -> str:
    """A test id for a shared file: its name without the extension."""
    return path.stem
