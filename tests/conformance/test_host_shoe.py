"""One host/shoe conformance suite, run over every transport: in-process, pty, TCP, USB.

The host is the real ShoeConnection, the shoe the real SimulatedShoe; only the wire changes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from firmware_protocol.link import LinkUp
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardDrawn,
    DeviceInfo,
    Indicator,
    Reset,
    ResetKind,
    SetClock,
    SetExitLock,
    SetIndicators,
    ShoeEvent,
    ShoeStateChanged,
    StatusReport,
    StatusRequest,
)
from shoe_controller.cards import new_shoe
from shoe_controller.device import ShoeConnection
from simulators.dealer import VirtualDealer
from simulators.transport_pairs import PAIR_KINDS

from .rig import (
    FAST_LINK,
    NEWEST,
    PAIRINGS,
    VERSIONS,
    card_of,
    deal_whole_shoe,
    shoe_rig,
    wait_until,
)

KINDS = PAIR_KINDS  # memory (in-process), pty, tcp (127.0.0.1), usb (virtual backend)
BREAKABLE = tuple(kind for kind in KINDS if kind != "pty")
EIGHT_DECKS = new_shoe(8, seed=2024)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True, params=sorted(PAIRINGS))
def link_revisions(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs with both ends on link revision 1.3, and with either end on 1.2 or on
    1.0 (the interoperability the fast-recovery and frame-copy revisions promise: SPEC 8.8,
    8.9)."""
    VERSIONS.current = PAIRINGS[request.param]
    try:
        yield request.param
    finally:
        VERSIONS.current = PAIRINGS[NEWEST]


@pytest.mark.parametrize("kind", KINDS)
def test_handshake_gives_device_info(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS) as rig:
        up = rig.next(LinkUp)
        assert isinstance(up.peer, DeviceInfo) and not up.resumed
        info = rig.conn.wait_until_up(5)
        assert (info.model, info.serial_number) == ("Software Shoe", "SIM-0001")
        assert info.session_id == rig.shoe.link.session_id


@pytest.mark.parametrize("kind", KINDS)
def test_exit_lock_is_honoured(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0)) as rig:
        rig.next(LinkUp)
        rig.nothing_within(CardDrawn, 0.2)  # locked on power-up: the dealer cannot pull
        assert rig.shoe.model.counter == 0
        rig.conn.send(SetExitLock(False))
        rig.next(CardDrawn, where=lambda m: m.counter == 5)
        rig.conn.send(SetExitLock(True))
        wait_until(lambda: rig.shoe.model.exit_locked, what="exit locked")
        drawn = rig.shoe.model.counter
        if drawn > 5:
            rig.next(CardDrawn, where=lambda m: m.counter == drawn)
        rig.nothing_within(CardDrawn, 0.2)
        assert rig.shoe.model.counter == drawn


@pytest.mark.parametrize("kind", KINDS)
def test_pull_while_locked_is_refused_and_reported(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS) as rig:
        rig.conn.wait_until_up(5)
        rig.shoe.pull(time.monotonic())
        refused = rig.next(ShoeStateChanged)
        assert refused == ShoeStateChanged(ShoeEvent.PULL_REFUSED, 0)
        assert rig.shoe.model.counter == 0


@pytest.mark.parametrize("kind", KINDS)
def test_indicators_clock_and_status(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS) as rig:
        rig.conn.wait_until_up(5)
        lights = Indicator.BANKER | Indicator.STOP
        rig.conn.send(SetIndicators(lights, beep_ms=200))
        rig.conn.send(SetClock(1_700_000_000_000))
        rig.conn.send(StatusRequest())
        report = rig.next(StatusReport)
        assert report.indicators == lights and rig.shoe.beeps == [200]
        assert 1_700_000_000_000 <= report.clock_unix_ms < 1_700_000_005_000
        assert report.exit_locked and report.loaded and report.counter == 0


@pytest.mark.parametrize("kind", KINDS)
def test_dealer_confirms_a_shown_result_with_the_button(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(button_delay=0.05)) as rig:
        rig.conn.wait_until_up(5)
        rig.conn.send(SetIndicators(Indicator.PLAYER | Indicator.RESULT))
        assert rig.next(ButtonPressed) == ButtonPressed(Button.DEALER, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_reset_new_shoe_restarts_the_counter(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0)) as rig:
        rig.conn.wait_until_up(5)
        rig.conn.send(SetExitLock(False))
        rig.next(CardDrawn, where=lambda m: m.counter == 3)
        rig.conn.send(SetExitLock(True))
        rig.conn.send(Reset(ResetKind.NEW_SHOE))
        loaded = rig.next(ShoeStateChanged, where=lambda m: m.event is ShoeEvent.SHOE_LOADED)
        assert loaded.counter == 2  # LOAD_NUMBER: the shoe's second load
        rig.conn.send(SetExitLock(False))
        first = rig.next(CardDrawn, where=lambda m: m.counter == 1)
        assert card_of(first) == EIGHT_DECKS[0]


@pytest.mark.parametrize("kind", KINDS)
def test_silent_host_locks_the_exit_and_the_unacked_card_is_resent(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0), commit_on_get=False) as rig:
        rig.conn.wait_until_up(5)
        rig.conn.send(SetExitLock(False))
        first = rig.next(CardDrawn)  # not committed: the host must stay silent (no ack)
        assert first.counter == 1
        wait_until(lambda: rig.shoe.model.exit_locked, timeout=3, what="the watchdog to lock")
        assert rig.shoe.unacked_cards() == 1 and rig.shoe.model.counter == 1
        rig.conn.commit()  # the host wakes up: the card is acknowledged, never delivered twice
        rig.next(LinkUp)
        wait_until(lambda: rig.shoe.unacked_cards() == 0, what="the card to be acknowledged")
        rig.conn.send(SetExitLock(False))
        second = rig.next(CardDrawn)
        rig.conn.commit()
        assert second.counter == 2 and card_of(second) == EIGHT_DECKS[1]


@pytest.mark.parametrize("kind", KINDS)
def test_host_restart_receives_what_the_old_host_never_acknowledged(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0), commit_on_get=False) as rig:
        rig.conn.wait_until_up(5)
        rig.conn.send(SetExitLock(False))
        rig.next(CardDrawn)
        rig.conn.commit()  # card 1 journalled and acknowledged
        rig.next(CardDrawn)  # card 2 received but the controller dies before journalling it
        rig.conn.close()
        wait_until(lambda: rig.shoe.model.exit_locked, timeout=3, what="the watchdog to lock")
        journalled = {1}
        with ShoeConnection(rig.pair.host, link_config=FAST_LINK) as again:
            item = again.get(timeout=5)
            while not isinstance(item, CardDrawn):
                item = again.get(timeout=5)
            assert item.counter not in journalled and item.counter == 2
            assert card_of(item) == EIGHT_DECKS[1]


@pytest.mark.parametrize("kind", KINDS)
def test_whole_eight_deck_shoe_arrives_exactly_once_in_order(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0)) as rig:
        rig.conn.wait_until_up(5)
        cards = deal_whole_shoe(rig, 416, timeout=30)
        assert [m.counter for m in cards] == list(range(1, 417))
        assert [card_of(m) for m in cards] == EIGHT_DECKS
        events = [m for m in rig.seen if isinstance(m, ShoeStateChanged)]
        empty = rig.next(ShoeStateChanged, where=lambda m: m.event is ShoeEvent.SHOE_EMPTY)
        assert events[0] == ShoeStateChanged(ShoeEvent.CUT_CARD_REACHED, 402)
        assert empty.counter == 416
        rig.conn.commit()  # the owner is done with the last message: acknowledge it
        wait_until(rig.shoe.all_cards_acknowledged, what="the last acknowledgement")


@pytest.mark.parametrize("kind", BREAKABLE)
def test_dropped_connections_are_re_established_and_the_shoe_carries_on(kind: str) -> None:
    with shoe_rig(kind, EIGHT_DECKS, dealer=VirtualDealer(pace=0)) as rig:
        rig.conn.wait_until_up(5)

        def unplug(n: int) -> None:
            if n % 100 == 0:
                rig.pair.break_link()
                time.sleep(0.05)
                rig.pair.restore_link()

        cards = deal_whole_shoe(rig, 416, timeout=40, on_card=unplug)
        assert [m.counter for m in cards] == list(range(1, 417))
        assert [card_of(m) for m in cards] == EIGHT_DECKS
        assert rig.conn.transport.reconnections >= 4
