"""The browser fixtures of the web tests (Debian's chromium through Playwright), shared."""

from tests.web.conftest import artifacts, browser, page  # noqa: F401 - pytest fixtures
