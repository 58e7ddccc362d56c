"""A live table for the metrics tests: the software shoe on an in-memory wire that can damage
frames and be cut, the product's ``running_table`` with its controller in its own thread, the
dealer display (``/metrics``) and the standalone metrics server (``--metrics``).

Built from the web tests' rig (``tests/web/rig.py``): its shoe model that misreads chosen cards,
its dealer who leaves the cards to the test, its link settings and PINs.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from shoe_controller.cards import Card
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.metrics import MetricsServer, serve_metrics
from shoe_controller.table.controller import TableController
from shoe_controller.table.runtime import running_table
from shoe_controller.transports.memory import MemoryTransport, memory_pair
from shoe_controller.web.app import WebServer, start_web
from simulators.shoe import ShoeRunner, SimulatedShoe
from tests.web.rig import (
    CUT_CARD,
    LINK,
    NEVER,
    PIN,
    PIN_HASH,
    PROFILE,
    SUPERVISOR,
    MisreadingShoeModel,
    OneShoeDealer,
    wait_for,
)

TABLE_ID = "table-metrics"
METRICS_LINK = replace(LINK, link_timeout=3.0)
"""The web tests' link timings with a looser watchdog: the metrics are checked against what
happened, and the link must be lost only where the test cuts the cable (with the web tests'
1 s, a machine loaded by other work once stalled the controller that long: two losses)."""


class FrameDamage:
    """A manipulator for the shoe-to-host direction: flips one bit in the middle of the
    chunks numbered in ``damage`` (1-based), so those frames fail their CRC (or COBS)."""

    def __init__(self) -> None:
        self.damage: set[int] = set()
        self.chunks = 0
        self.damaged = 0
        self._lock = threading.Lock()

    def damage_next(self, count: int = 1) -> None:
        with self._lock:
            self.damage.update(range(self.chunks + 1, self.chunks + 1 + count))

    def __call__(self, data: bytes) -> list[bytes]:
        with self._lock:
            self.chunks += 1
            hit = self.chunks in self.damage
        if not hit or len(data) < 4:
            return [data]
        damaged = bytearray(data)
        middle = len(damaged) // 2
        if damaged[middle] not in (0x00, 0x01):
            damaged[middle] ^= 0x01  # still not a frame delimiter
            self.damaged += 1
        return [bytes(damaged)]


@dataclass
class MetricsTable:
    sim: SimulatedShoe
    controller: TableController
    web: WebServer
    scraper: MetricsServer
    wire_end: MemoryTransport
    damage: FrameDamage
    journal: Path
    stop: threading.Event
    thread: threading.Thread
    errors: list[BaseException] = field(default_factory=list)

    def check(self) -> None:
        self.web.check()
        if self.errors:
            raise self.errors[0]

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        def checked() -> bool:
            self.check()
            return condition()
        wait_for(checked, what, timeout)

    def pull(self) -> object:
        self.wait(lambda: not self.sim.model.exit_locked and self.sim.unacked_cards() == 0,
                  "the shoe's exit to open")
        with self.sim._lock:
            self.sim.pull(time.monotonic())
            out = self.sim.model.drawn[-1]
        self.wait(lambda: self.controller.view.cards_dealt >= out.counter,
                  f"the controller to take card {out.counter}")
        return out

    def deal_round(self) -> None:
        """Wait for betting to close, deal until the result, confirm it with the button."""
        self.wait(lambda: self.controller.view.due in ("player", "banker"),
                  "a card to be due")
        while self.controller.view.due is not None:
            self.pull()
        self.wait(lambda: self.controller.table.state.endswith("result_shown"),
                  "the result to be shown")
        self.sim.press_button(time.monotonic())
        self.wait(lambda: not self.controller.table.state.endswith("result_shown"),
                  "the result to be confirmed")

    def stop_controller(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the controller thread did not stop"
        self.check()

    def display_metrics(self) -> tuple[str, str]:
        return _get(self.web.url.rstrip("/") + "/metrics")

    def standalone_metrics(self) -> tuple[str, str]:
        return _get(self.scraper.url)


def _get(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers["Content-Type"], response.read().decode("utf-8")


@contextlib.contextmanager
def metrics_table(tmp_path: Path, cards: list[Card]) -> Iterator[MetricsTable]:
    dealer = OneShoeDealer(auto_pull=False, button_delay=NEVER)
    model = MisreadingShoeModel(cards, cut_card=CUT_CARD)
    sim = SimulatedShoe(model, dealer=dealer, link_config=METRICS_LINK, rng=random.Random(7),
                        announce_loaded=True)
    damage = FrameDamage()
    host, device = memory_pair(device_to_host=damage)
    journal = tmp_path / "journal.sqlite"
    config = load_run_config(None, {
        "device": "memory://metrics-test", "profile": PROFILE, "journal": journal,
        "betting_seconds": 0.05, "heartbeat_seconds": METRICS_LINK.heartbeat_interval,
        "link_timeout_seconds": METRICS_LINK.link_timeout, "durability": "normal",
        "supervisors": {SUPERVISOR: PIN_HASH}, "table_id": TABLE_ID,
    })
    runner = ShoeRunner(sim, device)
    runner.start()
    with contextlib.closing(runner):
        conn = ShoeConnection(host, link_config=METRICS_LINK, session_id=0x3001)
        with running_table(config, connection=conn) as controller:
            web = start_web(controller, "127.0.0.1", 0, profile=load_profile(PROFILE))
            scraper = serve_metrics(controller.metrics, "127.0.0.1", 0)
            stop = threading.Event()
            errors: list[BaseException] = []

            def run() -> None:
                try:
                    controller.run(lambda: stop.is_set() or web.failed)
                except BaseException as exc:  # noqa: BLE001 - reported by check()
                    errors.append(exc)

            thread = threading.Thread(target=run, name="controller", daemon=True)
            thread.start()
            table = MetricsTable(sim, controller, web, scraper, host, damage, journal, stop,
                                 thread, errors)
            try:
                yield table
            finally:
                stop.set()
                thread.join(timeout=5)
                scraper.close()
                web.close()
            runner.check()


__all__ = ["PIN", "SUPERVISOR", "TABLE_ID", "MetricsTable", "metrics_table"]
