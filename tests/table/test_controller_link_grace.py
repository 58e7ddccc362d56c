"""A shoe link that drops and recovers within the grace is a flap, not an irregularity."""

from __future__ import annotations

import collections

from firmware_protocol import messages as wire
from firmware_protocol.link import LinkLost, LinkUp
from shoe_controller.cards import Card
from shoe_controller.errors import ShoeTimeoutError
from shoe_controller.games.registry import create_game
from shoe_controller.journal import Journal
from shoe_controller.table.controller import TableController
from shoe_controller.table.machine import Table

HOST = wire.HostHello(protocol_version=1, session_id=1)


def link_up() -> LinkUp:
    return LinkUp(peer_session=7, peer=HOST, resumed=False)


class FakeConnection:
    def __init__(self) -> None:
        self.inbox: collections.deque = collections.deque()
        self.sent: list = []

    def get(self, timeout=None):
        if not self.inbox:
            raise ShoeTimeoutError("nothing")
        return self.inbox.popleft()

    def send(self, message) -> None:
        self.sent.append(message)

    def commit(self) -> None:
        pass


def controller_mid_round(tmp_path):
    now = [0.0]
    connection = FakeConnection()
    journal = Journal(tmp_path / "j.sqlite", durability="normal")
    controller = TableController(journal=journal, table=Table(create_game("punto-banco-8d")),
                                 profile="punto-banco-8d", connection=connection,
                                 betting_seconds=0, clock=lambda: now[0], link_grace=5.0)
    controller.start()
    connection.inbox.extend([
        link_up(), wire.ShoeStateChanged(wire.ShoeEvent.SHOE_LOADED, 0),
        *(wire.CardDrawn(n, rank, 0, wire.Sensor.OPTICAL_PRIMARY, 99)
          for n, rank in enumerate([2, 3, 4], start=1)),  # a 2 turned, two burned
    ])
    for _ in range(4):
        controller.step(0)
    connection.inbox.append(wire.CardDrawn(4, 9, 1, wire.Sensor.OPTICAL_PRIMARY, 99))
    controller.step(0)
    assert controller.table.state == "in_play.dealing.initial_deal"
    return controller, connection, journal, now


def link_records(journal):
    return [r.data["up"] for r in journal.records() if r.kind == "link"]


def test_a_flap_within_the_grace_records_nothing(tmp_path) -> None:
    controller, connection, journal, now = controller_mid_round(tmp_path)
    connection.inbox.append(LinkLost("no valid frame for 2 s"))
    controller.step(0)
    now[0] += 4.0
    connection.inbox.append(link_up())
    controller.step(0)
    now[0] += 10.0
    controller.step(0)
    assert link_records(journal) == [True]
    assert controller.table.alarm == "ok" and controller.view.prompt == "Deal Banker"
    journal.close()


def test_a_sustained_loss_mid_round_latches(tmp_path) -> None:
    controller, connection, journal, now = controller_mid_round(tmp_path)
    connection.inbox.append(LinkLost("cable pulled"))
    controller.step(0)
    assert controller.table.alarm == "ok"
    now[0] += 5.0
    controller.step(0)
    assert link_records(journal) == [True, False]
    assert controller.table.view().latched[0]["kind"] == "link_lost"
    connection.inbox.append(link_up())
    controller.step(0)
    assert link_records(journal) == [True, False, True]
    assert controller.table.alarm == "latched"  # back, but a supervisor clears
    journal.close()


def test_card_codes_used_above_are_what_the_test_means() -> None:
    assert Card.from_wire(9, 1).code == "9H"
