"""A live table with its web display, in one process, for the web tests.

Everything is the product's code: the software shoe (``SimulatedShoe`` + ``ShoeRunner``) on an
in-memory wire, ``ShoeConnection``, ``running_table`` (journal, table, controller) with the
controller running in its own thread as in ``shoe run``, and :func:`start_web`. Only the
dealer's hands are the test's: with ``auto_pull=False`` the test pulls each card
(:meth:`WebTable.pull`) and presses the shoe's button (:meth:`WebTable.press_button`), so it can
look at the page after every card.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_protocol.link import LinkConfig
from shoe_controller.cards import Card
from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin, load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.table.controller import TableController
from shoe_controller.table.runtime import running_table
from shoe_controller.transports.memory import memory_pair
from shoe_controller.web.app import WebServer, start_web
from simulators.dealer import VirtualDealer, parse_mistakes
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import CardOut, ShoeModel, ShoeOutput

PROFILE = "punto-banco-1d"
CUT_CARD = 14
SUPERVISOR = "alice"
PIN = "123456"
PIN_HASH = hash_pin(PIN, salt=b"web-display-tests", iterations=MIN_PIN_ITERATIONS)
LINK = LinkConfig(retransmit_timeout=0.03, retransmit_timeout_max=0.3, heartbeat_interval=0.1,
                  link_timeout=1.0, hello_interval=0.05)
NEVER = 3600.0  # the virtual dealer's button delay when the test presses the button itself


class OneShoeDealer(VirtualDealer):
    """A dealer who leaves the table after the shoe: no fresh shoe when SHUFFLE lights, so the
    finished shoe stays on the display for the test to examine."""

    def _watch_shuffle(self, view: Any) -> list[Any]:
        return []


class MisreadingShoeModel(ShoeModel):
    """The software shoe's model, whose scanner cannot read the cards at ``misread_at``
    (reported as misreads; the true card stays in ``drawn``)."""

    def __init__(self, cards: Sequence[Card], *, misread_at: Sequence[int] = (),
                 **kwargs: Any) -> None:
        self.misread_at = set(misread_at)
        super().__init__(cards, **kwargs)

    def pull(self, *, forced: bool = False) -> list[ShoeOutput]:
        outputs = super().pull(forced=forced)
        for index, output in enumerate(outputs):
            if isinstance(output, CardOut) and output.counter in self.misread_at:
                outputs[index] = self.drawn[-1] = dataclasses.replace(output, misread=True)
        return outputs


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Wait (polling) until ``condition()``; fail naming ``what`` after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        pause.wait(0.005)


@dataclass
class WebTable:
    sim: SimulatedShoe
    runner: ShoeRunner
    controller: TableController
    web: WebServer
    journal: Path
    errors: list[BaseException]
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.web.url

    def check(self) -> None:
        self.runner.check()
        self.web.check()
        if self.errors:
            raise self.errors[0]

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        def checked() -> bool:
            self.check()
            return condition()
        wait_for(checked, what, timeout)

    def pull(self, *, forced: bool = False) -> CardOut:
        """Draw the next card as a dealer would: when the exit opens (``forced``: now, past the
        locked exit) and the previous card has reached the controller."""
        if not forced:
            self.wait(lambda: not self.sim.model.exit_locked and self.sim.unacked_cards() == 0,
                      "the shoe's exit to open")
        with self.sim._lock:
            before = self.sim.model.counter
            self.sim.pull(time.monotonic(), forced=forced)
            assert self.sim.model.counter == before + 1, "the shoe refused the pull"
            out = self.sim.model.drawn[-1]
        self.wait(lambda: self.controller.view.cards_dealt >= out.counter,
                  f"the controller to take card {out.counter}")
        return out

    def press_button(self) -> None:
        self.sim.press_button(time.monotonic())

    def start_shoe(self) -> None:
        """Switch the software shoe on (after ``web_table(..., start_shoe=False)``)."""
        self.runner.start()

    def unplug_shoe(self) -> None:
        """The shoe goes silent (its thread stops, its end of the wire closes): the
        controller loses the link after its link timeout."""
        self.runner.close()

    def hold_betting(self) -> None:
        """Keep betting open (the table's own timer) until :meth:`close_betting`."""
        self.controller.betting_seconds = 3600.0

    def close_betting(self, seconds: float = 0.05) -> None:
        """Let the table's betting timer close betting now (and after ``seconds`` from then
        on). Sets the controller's timer deadline from the test's thread: a plain attribute
        the controller's loop reads on its next pass."""
        self.controller.betting_seconds = seconds
        self.controller._betting_closes_at = time.monotonic()

    def leak_card(self) -> CardOut:
        """The shoe's card stop fails open: one card comes out, reported as a normal draw,
        while the table has no card due (an extra card)."""
        with self.sim._lock:
            before = self.sim.model.counter
            self.sim.model.set_exit_locked(False, cards=1, for_card=before + 1)
            self.sim.pull(time.monotonic())
            assert self.sim.model.counter == before + 1, "the shoe refused the pull"
            out = self.sim.model.drawn[-1]
        self.wait(lambda: self.controller.view.cards_dealt >= out.counter,
                  f"the controller to take card {out.counter}")
        return out

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=5) as response:
            return json.loads(response.read())

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                headers: dict[str, str] | None = None,
                source: str | None = None) -> tuple[int, dict[str, str], Any]:
        """One request with ``http.client``: any headers (``Host`` too), from the local
        address ``source`` (e.g. 127.0.0.2: another client on the loopback). Returns
        (status, headers, body as JSON or text)."""
        host, port = self.web._sock.getsockname()[:2]
        connection = http.client.HTTPConnection(
            host, port, timeout=15, source_address=None if source is None else (source, 0))
        sent = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        try:
            connection.putrequest(method, path, skip_host="Host" in sent)
            for name, value in sent.items():
                connection.putheader(name, value)
            if data is not None:
                connection.putheader("Content-Length", str(len(data)))
            connection.endheaders(data)
            response = connection.getresponse()
            raw = response.read()
            answer_headers = {k.lower(): v for k, v in response.getheaders()}
        finally:
            connection.close()
        try:
            parsed: Any = json.loads(raw)
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return response.status, answer_headers, parsed

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url.rstrip("/") + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


@contextlib.contextmanager
def web_table(tmp_path: Path, cards: list[Card], *, auto_pull: bool = False,
              mistakes: str = "", betting_seconds: float = 0.05,
              shoes: int | None = None, misread_at: Sequence[int] = (),
              start_shoe: bool = True, **web_options: Any) -> Iterator[WebTable]:
    """The whole stack running: shoe thread, controller thread (until ``shoes`` shoes are
    finished, if given), web server thread. ``web_options`` go to :func:`start_web`
    (``hosts``, ``cert_file``, ``key_file``). ``start_shoe=False``: the software shoe is not
    switched on (no shoe connected) until the test calls :meth:`WebTable.start_shoe`."""
    dealer_class = OneShoeDealer if shoes == 1 else VirtualDealer
    dealer = dealer_class(auto_pull=auto_pull, mistakes=parse_mistakes(mistakes),
                          button_delay=0.01 if auto_pull else NEVER)
    model = MisreadingShoeModel(cards, cut_card=CUT_CARD, misread_at=misread_at)
    sim = SimulatedShoe(model, dealer=dealer, link_config=LINK,
                        rng=random.Random(7), announce_loaded=True)
    host, device = memory_pair()
    journal = tmp_path / "journal.sqlite"
    config = load_run_config(None, {
        "device": "memory://web-test", "profile": PROFILE, "journal": journal,
        "betting_seconds": betting_seconds, "heartbeat_seconds": LINK.heartbeat_interval,
        "link_timeout_seconds": LINK.link_timeout, "durability": "normal",
        "supervisors": {SUPERVISOR: PIN_HASH},
    })
    runner = ShoeRunner(sim, device)
    if start_shoe:
        runner.start()
    with contextlib.closing(runner):  # (ShoeRunner's own __enter__ would switch it on)
        conn = ShoeConnection(host, link_config=LINK, session_id=0x2001)
        with running_table(config, connection=conn) as controller:
            web = start_web(controller, "127.0.0.1", 0, profile=load_profile(PROFILE),
                            **web_options)
            stop = threading.Event()
            errors: list[BaseException] = []

            def run() -> None:
                try:
                    controller.run(lambda: stop.is_set() or web.failed, shoes=shoes)
                except BaseException as exc:  # noqa: BLE001 - reported by WebTable.check
                    errors.append(exc)

            thread = threading.Thread(target=run, name="controller", daemon=True)
            thread.start()
            table = WebTable(sim, runner, controller, web, journal, errors, thread)
            try:
                yield table
            finally:
                stop.set()
                thread.join(timeout=5)
                web.close()
            assert not thread.is_alive(), "the controller thread did not stop"
            table.check()
