"""A real Mosquitto broker, a real MQTT subscriber, and live tables that publish to it.

* :class:`Mosquitto`: Debian's ``mosquitto`` started by the test on a free loopback port with
  a generated config (simulators/mosquitto.py; with users, the floor ACL of docs/fleet.md),
  killed at the end; it can be stopped and started again on the same port (no persistence: a
  restart forgets every retained message, which is what a publisher must survive).
* :class:`Subscriber`: a paho client that records every message (topic, JSON, retained
  flag, when it arrived).
* :func:`fleet_table`: the product's table (``running_table``: journal, controller) with the
  software shoe on an in-memory wire, the controller in its own thread as in ``shoe run``,
  and the product's :class:`MqttPublisher` wired exactly as ``shoe run`` wires it.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

import simulators.mosquitto
from shoe_controller.cards import Card, new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.fleet.broker import BrokerSettings, Topics, broker_settings
from shoe_controller.fleet.publisher import MqttPublisher
from shoe_controller.table.controller import TableController
from shoe_controller.table.runtime import running_table, services
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe
from tests.web.rig import CUT_CARD, LINK, MisreadingShoeModel, OneShoeDealer, wait_for

PREFIX = "shoe"
PIT_USER, PIT_PASSWORD = "pit", "pit-password-1"


def floor_acl() -> str:
    """The ACL docs/fleet.md gives for a floor (tested as documented)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "fleet.md").read_text("utf-8")
    block = text.split("<!-- floor-acl -->", 1)[1].split("<!-- /floor-acl -->", 1)[0]
    acl = block.split("```conf\n", 1)[1].split("```", 1)[0]
    assert f"user {PIT_USER}" in acl and f"{PREFIX}/tables/%u/#" in acl
    return acl


class Mosquitto(simulators.mosquitto.Mosquitto):
    """The private broker (simulators/mosquitto.py); with ``users`` it applies the floor ACL
    of docs/fleet.md. A missing mosquitto fails the test saying how to install it."""

    def __init__(self, directory: Path, users: dict[str, str] | None = None) -> None:
        try:
            super().__init__(directory, users=users, acl=floor_acl() if users else None)
        except simulators.mosquitto.BrokerMissing as exc:
            pytest.fail(str(exc))

    def settings(self, user: str | None = None, password: str | None = None,
                 protocol: str = "5") -> BrokerSettings:
        url = self.url if user is None else f"mqtt://{user}@127.0.0.1:{self.port}"
        password_file = None
        if password is not None:
            password_file = self.directory / f"{user}.password"
            password_file.write_text(password + "\n", encoding="utf-8")
        return broker_settings(url, password_file=password_file, protocol=protocol)


@dataclass
class Message:
    topic: str
    payload: Any
    retain: bool
    received: float  # time.time()


class Subscriber:
    """A paho client recording what it receives under ``<prefix>/tables/#``."""

    def __init__(self, broker: Mosquitto, *, user: str | None = None,
                 password: str | None = None, topic: str = f"{PREFIX}/tables/#") -> None:
        self.messages: list[Message] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=f"test-sub-{random.getrandbits(32):08x}",
                                  protocol=mqtt.MQTTv5)
        if user is not None:
            self.client.username_pw_set(user, password)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, u, f, rc, p=None: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise AssertionError("the test subscriber did not subscribe")

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            payload = msg.payload
        with self._lock:
            self.messages.append(Message(msg.topic, payload, bool(msg.retain), time.time()))

    def of(self, table_id: str, kind: str) -> list[Message]:
        topic = f"{PREFIX}/tables/{table_id}/{kind}"
        with self._lock:
            return [m for m in self.messages if m.topic == topic]

    def payloads(self, table_id: str, kind: str) -> list[Any]:
        return [m.payload for m in self.of(table_id, kind)]

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        wait_for(condition, what, timeout)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@dataclass
class FleetTable:
    controller: TableController
    publisher: MqttPublisher
    sim: SimulatedShoe
    journal: Path
    errors: list[BaseException] = field(default_factory=list)

    def check(self) -> None:
        if self.errors:
            raise self.errors[0]
        assert self.publisher.error is None, self.publisher.error


@contextlib.contextmanager
def fleet_table(directory: Path, broker: BrokerSettings, table_id: str, *,
                cards: Sequence[Card] | None = None, seed: int = 1, pace: float = 0.0,
                misread_at: Sequence[int] = (), one_shoe: bool = True,
                publisher: MqttPublisher | None = None, pit: str | None = None,
                wait_connected: bool = False,
                profile: str = "punto-banco-1d") -> Iterator[FleetTable]:
    """A live table (software shoe, dealer at ``pace``) publishing to ``broker`` as
    ``table_id`` until the context ends (the publisher then says "offline: stopped").
    ``wait_connected``: the table starts only once its publisher is connected (so not even
    the first state is superseded before the broker could have it)."""
    directory.mkdir(parents=True, exist_ok=True)
    dealer_class = OneShoeDealer if one_shoe else VirtualDealer
    dealer = dealer_class(pace=pace, button_delay=0.0)
    model = MisreadingShoeModel(list(cards or new_shoe(1, seed)), cut_card=CUT_CARD,
                                misread_at=misread_at)
    sim = SimulatedShoe(model, dealer=dealer, link_config=LINK, rng=random.Random(seed),
                        announce_loaded=True)
    host, device = memory_pair()
    journal = directory / f"{table_id}.sqlite"
    options: dict[str, Any] = {
        "device": "memory://fleet-test", "profile": profile, "journal": journal,
        "betting_seconds": 0, "heartbeat_seconds": LINK.heartbeat_interval,
        "link_timeout_seconds": LINK.link_timeout, "durability": "normal",
        "table_id": table_id}
    config = load_run_config(None, options)
    if publisher is None:
        publisher = MqttPublisher(broker, Topics(PREFIX, table_id), pit=pit)
    with ShoeRunner(sim, device).start() as _runner:
        connection = ShoeConnection(host, link_config=LINK)
        with running_table(config, connection=connection, begin_session=False,
                           record_taps=(publisher.on_record,)) as controller, \
                services(controller, mqtt=publisher):
            if wait_connected:
                wait_for(lambda: publisher.connected, f"{table_id}'s publisher to connect")
            controller.begin_session()
            stop = threading.Event()
            table = FleetTable(controller, publisher, sim, journal)

            def run() -> None:
                try:
                    controller.run(stop.is_set)
                except BaseException as exc:  # noqa: BLE001 - reported by check()
                    table.errors.append(exc)

            thread = threading.Thread(target=run, name=f"controller-{table_id}", daemon=True)
            thread.start()
            try:
                yield table
            finally:
                stop.set()
                thread.join(10)
            table.check()
