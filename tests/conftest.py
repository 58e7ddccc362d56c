"""Headless Chromium for the browser tests (the dealer display, the pit page): Debian's
/usr/bin/chromium driven by Playwright.

One session fixture for every directory: Playwright's sync API keeps an event loop running in
the main thread while it is open, so a second one in the same worker (a fixture imported into
another directory's conftest is another fixture) fails with "Sync API inside the asyncio loop".

Playwright's own browser download is never used (the machines are offline); ``bash
scripts/dev.sh test`` installs the ``chromium`` package listed in scripts/debian-packages.txt.
Screenshots (every state of the display and panel, for people to look at): in the directory
named by the ``SHOE_WEB_SCREENSHOTS`` environment variable, else in pytest's temporary directory
(``.../pytest-of-USER/pytest-N/screenshots0/``); the run's summary says where.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SCREENSHOTS_ENV = "SHOE_WEB_SCREENSHOTS"
_saved_in: list[Path] = []


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
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests save their screenshots: ``$SHOE_WEB_SCREENSHOTS`` or a temporary
    directory (never the checkout)."""
    named = os.environ.get(SCREENSHOTS_ENV)
    if named:
        folder = Path(named).expanduser().resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("screenshots")
    _saved_in.append(folder)
    return folder


def pytest_terminal_summary(terminalreporter: object) -> None:
    for folder in _saved_in:
        terminalreporter.write_line(  # type: ignore[attr-defined]
            f"web screenshots: {folder} (set {SCREENSHOTS_ENV} to choose)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with a test marked ``slow`` run first, those whose slow tests were given
    the longest timeouts (a test known to take minutes) first of them; each file's tests
    together and in their order (a file's module fixtures are then made once).
    ``scripts/dev.sh test`` runs the suite on two workers, each file's tests on one, in this
    order (``--dist loadscope --no-loadscope-reorder``): a run is as long as its busier
    worker, and a test of several minutes handed out last would keep one worker busy long
    after the other had finished."""
    longest: dict[str, float] = {}
    for item in items:
        if item.get_closest_marker("slow") is not None:
            file = _file_of(item)
            longest[file] = max(longest.get(file, 0.0), _timeout_of(item))
    items.sort(key=lambda item: (_file_of(item) not in longest,
                                 -longest.get(_file_of(item), 0.0)))  # (stable)


def _file_of(item: pytest.Item) -> str:
    """The test's file, as its node id names it."""
    return item.nodeid.split("::")[0]


def _timeout_of(item: pytest.Item) -> float:
    """The test's timeout in seconds (pytest-timeout's mark, else the configured one);
    none at all (0) is the longest."""
    mark = item.get_closest_marker("timeout")
    seconds = float(mark.args[0] if mark is not None and mark.args
                    else item.config.getini("timeout") or 0)
    return seconds if seconds > 0 else float("inf")
