"""Web display latency: from a card leaving the software shoe to the dealer page showing it.

Runs the whole stack in process (software shoe on a memory wire, controller thread, journal with
durability "normal", web server thread) and headless Chromium (Debian's /usr/bin/chromium).
For each card the bench pulls it from the shoe and times until the page's "cards left" shows
it (Playwright polling every animation frame, so the figure includes that round trip). It also
times the controller-side cost of the web listener (the copy and hand-over on the table's
thread). Run: .venv/bin/python bench/bench_web.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from shoe_controller.cards import new_shoe
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.web.rig import web_table

CARDS = 36


def main() -> None:
    latencies: list[float] = []
    listener: list[float] = []
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        with web_table(Path(scratch), new_shoe(1, 3)) as table:
            hook = table.web._on_update

            def timed(update: object) -> None:
                started = time.perf_counter()
                hook(update)  # type: ignore[arg-type]
                listener.append(time.perf_counter() - started)

            listeners = table.controller.listeners
            listeners[listeners.index(hook)] = timed
            page.goto(table.url)
            page.wait_for_selector("body[data-version]")
            for _ in range(CARDS):
                if table.controller.view.state.endswith("result_shown"):
                    table.press_button()
                table.wait(lambda: not table.sim.model.exit_locked
                           and table.sim.unacked_cards() == 0, "the exit to open")
                counter = table.sim.model.counter + 1
                started = time.perf_counter()
                table.sim.pull(time.monotonic())
                page.wait_for_function(
                    "n => document.querySelector('[data-testid=cards-left]').textContent == n",
                    arg=str(52 - counter), polling="raf")
                latencies.append(time.perf_counter() - started)
        browser.close()
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"{'measure':<44} {'measured':>12} {'target':>10}")
    print(f"{'card out of shoe -> page shows it, median':<44} "
          f"{statistics.median(latencies) * 1e3:>9.1f} ms {'100 ms':>10}")
    print(f"{'card out of shoe -> page shows it, p95':<44} {p95 * 1e3:>9.1f} ms {'100 ms':>10}")
    print(f"{'card out of shoe -> page shows it, max':<44} "
          f"{latencies[-1] * 1e3:>9.1f} ms {'-':>10}")
    print(f"{'web listener on the controller thread, median':<44} "
          f"{statistics.median(listener) * 1e6:>9.1f} us {'1 ms':>10}")
    print(f"{'web listener on the controller thread, max':<44} "
          f"{max(listener) * 1e6:>9.1f} us {'-':>10}")
    print(f"({len(latencies)} cards, {len(listener)} controller updates)")


if __name__ == "__main__":
    main()
