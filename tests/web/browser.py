"""Headless Chromium for the page tests, from the system's packages, driven by Playwright.

Playwright never downloads a browser here: it is pointed at the system's Chromium.  Without
one the tests skip with the reason, except when ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
"""Where the page tests leave pictures for a reviewer (not committed)."""


def chromium_path() -> str | None:
    configured = os.environ.get("GGP_CHROMIUM")
    if configured:
        return configured
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The browser's path; skips (or fails under CI) when there is none."""
    path = chromium_path()
    if path is None:
        message = "no Chromium found (install Debian's chromium package or set GGP_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        import playwright  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the playwright package is missing (pip install -e '.[test]')")
        pytest.skip("the playwright package is missing (pip install -e '.[test]')")
    return path


async def launch_browser() -> AsyncIterator[object]:
    from playwright.async_api import async_playwright

    path = require_chromium()
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            await browser.close()
