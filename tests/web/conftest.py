"""Headless Chromium for the web tests: Debian's /usr/bin/chromium driven by Playwright.

Playwright's own browser download is never used (the machines are offline); ``bash
scripts/dev.sh test`` installs the ``chromium`` package listed in scripts/debian-packages.txt.
Screenshots go to ``artifacts/web/`` (ignored by git).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/dev.sh test` (it installs the "
                    "Debian packages in scripts/debian-packages.txt) or apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              timeout=30_000)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
