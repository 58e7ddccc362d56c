"""The software shoe as a protocol peer, driven with a fake clock against a host Link."""

from __future__ import annotations

import random

import pytest

from firmware_protocol.link import Link, LinkConfig, LinkLost, PeerRestarted, Role
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardDrawn,
    CardMisread,
    DeviceFault,
    FaultCode,
    Indicator,
    Message,
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
from shoe_controller.cards import Card, new_shoe, parse_shoe
from simulators.dealer import VirtualDealer, parse_mistakes
from simulators.shoe import SimulatedShoe, confirm_requested
from simulators.shoe_model import ShoeModel

CONFIG = LinkConfig()


class Bench:
    """A host Link and a SimulatedShoe joined directly, on a fake clock (no I/O)."""

    def __init__(self, shoe: SimulatedShoe, host_session: int = 0x1111) -> None:
        self.shoe = shoe
        self.host = Link(Role.HOST, CONFIG, host_session)
        self.now = 100.0
        self.got: list[Message] = []
        self.host_events: list[object] = []
        self.connected = True

    def step(self, dt: float = 0.01) -> None:
        self.now += dt
        now = self.now
        to_shoe = self.host.data_to_send(now)
        self._take(self.host.poll(now))
        if self.connected and to_shoe:
            self.shoe.receive(to_shoe, now)
        self.shoe.step(now)
        to_host = self.shoe.data_to_send(now)
        if self.connected and to_host:
            self._take(self.host.receive(to_host, now))

    def _take(self, outputs: list[object]) -> None:
        """The host link's ordered output: messages to ``got``, link events to ``host_events``."""
        for item in outputs:
            (self.got if isinstance(item, Message) else self.host_events).append(item)

    def run_until(self, condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
        end = self.now + timeout
        while not condition():
            assert self.now < end, "condition not reached in simulated time"
            self.step()

    def command(self, message: Message) -> None:
        self.host.send(message, self.now)
        self.step()
        self.step()

    def cards(self) -> list[Card]:
        return [Card.from_wire(m.rank, m.suit) for m in self.got if isinstance(m, CardDrawn)]

    def states(self) -> list[ShoeEvent]:
        return [m.event for m in self.got if isinstance(m, ShoeStateChanged)]


def make(cards: list[Card] | None = None, dealer: VirtualDealer | None = None, **kw) -> Bench:  # type: ignore[no-untyped-def]
    model = ShoeModel(cards if cards is not None else parse_shoe("AS 2H 3D 4C 5S 6H"), **kw)
    bench = Bench(SimulatedShoe(model, dealer=dealer, rng=random.Random(1)))
    bench.run_until(lambda: bench.host.is_up)
    return bench


def test_handshake_gives_the_device_identity() -> None:
    bench = make()
    assert bench.host.peer is not None
    assert bench.host.peer.serial_number == "SIM-0001"  # type: ignore[union-attr]
    assert bench.shoe.is_up


def test_locked_on_power_up_pull_refused_and_reported() -> None:
    bench = make()
    bench.shoe.pull(bench.now)
    bench.run_until(lambda: bench.got)
    assert bench.got == [ShoeStateChanged(ShoeEvent.PULL_REFUSED, 0)]
    assert bench.shoe.model.counter == 0


def test_unlock_lets_the_dealer_deal_the_whole_shoe_in_order() -> None:
    cards = new_shoe(1, seed=5)
    bench = make(cards, dealer=VirtualDealer(pace=0), cut_card=10)
    bench.command(SetExitLock(False))
    bench.run_until(lambda: len(bench.cards()) == 52)
    assert bench.cards() == cards
    counters = [m.counter for m in bench.got if isinstance(m, CardDrawn)]
    assert counters == list(range(1, 53))
    assert bench.states() == [ShoeEvent.CUT_CARD_REACHED, ShoeEvent.SHOE_EMPTY]
    cut = next(m for m in bench.got if isinstance(m, ShoeStateChanged))
    assert cut.counter == 42
    bench.run_until(bench.shoe.all_cards_acknowledged)


def test_dealer_waits_for_the_ack_so_a_lock_stops_the_next_card() -> None:
    bench = make(dealer=VirtualDealer(pace=0))
    bench.command(SetExitLock(False))
    bench.run_until(lambda: len(bench.cards()) >= 2)
    bench.host.send(SetExitLock(True), bench.now)
    for _ in range(50):
        bench.step()
    drawn = bench.shoe.model.counter
    assert drawn <= 3  # at most the one card already in flight when the lock was sent
    for _ in range(50):
        bench.step()
    assert bench.shoe.model.counter == drawn


def test_indicators_status_and_clock() -> None:
    bench = make()
    bench.command(SetIndicators(Indicator.BANKER | Indicator.STOP, beep_ms=100))
    bench.command(SetClock(1_700_000_000_000))
    bench.now += 1.5
    bench.command(StatusRequest())
    bench.run_until(lambda: any(isinstance(m, StatusReport) for m in bench.got))
    report = next(m for m in bench.got if isinstance(m, StatusReport))
    assert report.exit_locked and not report.lid_open and report.loaded
    assert report.indicators == Indicator.BANKER | Indicator.STOP
    assert 1_700_000_001_500 <= report.clock_unix_ms <= 1_700_000_001_600
    assert report.counter == 0 and report.unacked_cards == 0 and report.fault is FaultCode.NONE
    assert bench.shoe.beeps == [100]


def test_misread_is_reported_without_a_face_and_keeps_the_counter() -> None:
    bench = make(misread_rate=1.0, seed=1)
    bench.shoe.pull(bench.now, forced=True)
    bench.run_until(lambda: bench.got)
    assert bench.got == [CardMisread(1, bench.got[0].sensor, bench.got[0].reason, True)]  # type: ignore[attr-defined]
    assert bench.shoe.model.drawn[0].card.code == "AS"


def test_heartbeat_loss_locks_the_exit_and_keeps_unacked_cards() -> None:
    cards = new_shoe(1, seed=9)
    bench = make(cards)
    bench.command(SetExitLock(False))
    bench.connected = False  # the cable is pulled
    bench.shoe.pull(bench.now)
    bench.shoe.pull(bench.now)
    bench.run_until(lambda: bench.shoe.model.exit_locked, timeout=CONFIG.link_timeout + 1)
    assert any(isinstance(e, LinkLost) for e in bench.shoe.link_events)
    assert bench.shoe.unacked_cards() == 2
    bench.shoe.pull(bench.now)  # refused: the exit is locked now
    bench.connected = True
    bench.run_until(lambda: len(bench.cards()) == 2 and bench.shoe.unacked_cards() == 0)
    assert bench.cards() == cards[:2]
    assert bench.states() == [ShoeEvent.PULL_REFUSED]


def test_host_restart_gets_unacked_cards_in_the_new_session_and_exit_locks() -> None:
    cards = new_shoe(1, seed=2)
    bench = make(cards)
    bench.command(SetExitLock(False))
    bench.connected = False
    bench.shoe.pull(bench.now)
    bench.host = Link(Role.HOST, CONFIG, 0x2222)  # the controller restarted
    bench.connected = True
    bench.run_until(lambda: bench.cards() == cards[:1])
    assert any(isinstance(e, PeerRestarted) for e in bench.shoe.link_events)
    assert bench.shoe.model.exit_locked


def test_button_pressed_when_the_result_is_shown() -> None:
    assert confirm_requested(Indicator.PLAYER | Indicator.RESULT, True)
    assert not confirm_requested(Indicator.PLAYER | Indicator.STOP, True)
    assert not confirm_requested(Indicator.RESULT, False)
    bench = make(dealer=VirtualDealer(button_delay=0.1))
    bench.command(SetIndicators(Indicator.TIE | Indicator.RESULT))
    bench.run_until(lambda: any(isinstance(m, ButtonPressed) for m in bench.got))
    assert [m for m in bench.got if isinstance(m, ButtonPressed)] == [
        ButtonPressed(Button.DEALER, 0)
    ]


def test_mistakes_forced_pull_and_lid_open() -> None:
    dealer = VirtualDealer(mistakes=parse_mistakes("forced-pull@0,lid-open@1"),
                           lid_open_seconds=0.2)
    bench = make(dealer=dealer)
    bench.run_until(lambda: ShoeEvent.LID_CLOSED in bench.states())
    drawn = [m for m in bench.got if isinstance(m, CardDrawn)]
    assert len(drawn) == 1 and drawn[0].drawn_while_locked
    assert bench.states() == [ShoeEvent.LID_OPENED, ShoeEvent.LID_CLOSED]


def test_jam_fault_and_clear() -> None:
    bench = make()
    bench.shoe.jam(bench.now)
    bench.run_until(lambda: bench.got)
    assert isinstance(bench.got[0], DeviceFault) and bench.got[0].code is FaultCode.JAM
    assert bench.shoe.status(bench.now).fault is FaultCode.JAM
    bench.command(Reset(ResetKind.CLEAR_FAULTS))
    assert bench.shoe.status(bench.now).fault is FaultCode.NONE


def test_reset_new_shoe_restarts_the_counter() -> None:
    cards = parse_shoe("AS 2H 3D")
    bench = make(cards)
    bench.shoe.pull(bench.now, forced=True)
    bench.command(Reset(ResetKind.NEW_SHOE))
    bench.run_until(lambda: ShoeEvent.SHOE_LOADED in bench.states())
    assert bench.shoe.model.counter == 0
    assert bench.shoe.model.exit_locked


def test_reboot_comes_back_with_a_new_session_and_keeps_unacked_cards() -> None:
    cards = parse_shoe("AS 2H 3D")
    bench = make(cards)
    old_session = bench.shoe.link.session_id
    bench.command(Reset(ResetKind.REBOOT))
    assert bench.shoe.reboots == 1 and bench.shoe.link.session_id != old_session
    bench.connected = False
    bench.shoe.pull(bench.now, forced=True)
    bench.connected = True
    bench.run_until(lambda: bench.cards() == cards[:1], timeout=15)
    bench.run_until(lambda: any(isinstance(e, PeerRestarted) for e in bench.host_events))


def test_unknown_command_is_answered_with_an_error() -> None:
    from firmware_protocol.messages import ErrorCode, ErrorReport

    bench = make()
    bench.shoe.receive(b"", bench.now)
    bench.shoe._handle_command(CardDrawn(1, 1, 0, 1, 99), bench.now)  # as if a host sent it
    bench.run_until(lambda: bench.got)
    assert isinstance(bench.got[0], ErrorReport)
    assert bench.got[0].code is ErrorCode.UNSUPPORTED_COMMAND


@pytest.mark.parametrize("rate", [0.0, 0.3])
def test_same_seed_same_run(rate: float) -> None:
    def run() -> list[Message]:
        bench = make(new_shoe(1, seed=4), dealer=VirtualDealer(pace=0.05), misread_rate=rate,
                     seed=8)
        bench.command(SetExitLock(False))
        bench.run_until(lambda: bench.shoe.model.is_empty, timeout=30)
        bench.run_until(bench.shoe.all_cards_acknowledged)
        return bench.got

    assert run() == run()


# -- SHUFFLE: a request for a new shoe counts only if the host had seen this one (issue 20) ----


def announced(cards: list[Card], dealer: VirtualDealer) -> Bench:
    """A bench whose shoe announces SHOE_LOADED for the cards it powers up with (as
    ``shoe sim`` does), with the link up."""
    shoe = SimulatedShoe(ShoeModel(cards), dealer=dealer, rng=random.Random(1),
                         announce_loaded=True)
    bench = Bench(shoe)
    bench.run_until(lambda: ShoeEvent.SHOE_LOADED in bench.states())
    return bench


def deal_one_card(bench: Bench) -> None:
    """The host unlocks for the next card; the dealer takes it; the host acknowledges it."""
    counter = bench.shoe.model.counter
    bench.command(SetExitLock(False, cards=1, for_card=counter + 1))
    bench.run_until(lambda: bench.shoe.model.counter == counter + 1
                    and bench.shoe.unacked_cards() == 0)


def loads(bench: Bench) -> int:
    return bench.states().count(ShoeEvent.SHOE_LOADED)


def test_a_shuffle_light_from_a_host_that_had_not_seen_the_shoe_dealt_from_is_stale() -> None:
    bench = announced(parse_shoe("AS 2H 3D 4C"), VirtualDealer(pace=0))
    # Issue 20: the host lit SHUFFLE ("load a shuffled shoe") before it took in SHOE_LOADED,
    # then unlocked for the first burn card; the frame turning SHUFFLE off is still on its
    # way. (The SetIndicators frame even acknowledges SHOE_LOADED: a frame carries the
    # acknowledgement of when it is sent.)
    bench.host.send(SetIndicators(Indicator.SHUFFLE), bench.now)
    deal_one_card(bench)
    assert not bench.shoe.table_view().shuffle_requested
    for _ in range(50):
        bench.step()
    view = bench.shoe.table_view()
    assert view.exit_locked and view.counter == 1 and view.shuffle_lit
    assert not view.shuffle_requested
    assert bench.shoe.host_has_seen_this_shoe()
    assert loads(bench) == 1, "the dealer reloaded one card into a fresh shoe"
    bench.command(SetIndicators(Indicator(0)))  # the retransmission arrives
    deal_one_card(bench)
    assert bench.shoe.model.counter == 2 and loads(bench) == 1


def test_a_shuffle_light_left_on_from_before_the_load_never_triggers_a_reload() -> None:
    bench = announced(parse_shoe("AS 2H 3D 4C"), VirtualDealer(pace=0))
    assert not bench.shoe.host_has_seen_this_shoe()
    deal_one_card(bench)
    assert bench.shoe.host_has_seen_this_shoe()
    bench.command(SetIndicators(Indicator.SHUFFLE))  # a fresh request: the dealer reloads
    bench.run_until(lambda: loads(bench) == 2)
    assert bench.shoe.model.counter == 0 and not bench.shoe.host_has_seen_this_shoe()
    # The light stays on until the host has taken in the new shoe: it asked for *this* one.
    view = bench.shoe.table_view()
    assert view.shuffle_lit and not view.shuffle_requested
    deal_one_card(bench)
    for _ in range(100):
        bench.step()
    assert bench.shoe.model.counter == 1 and loads(bench) == 2
    # Even resent by a host that has seen this shoe's cards, SHUFFLE is a request again.
    bench.command(SetIndicators(Indicator.SHUFFLE | Indicator.STOP))
    bench.run_until(lambda: loads(bench) == 3)


def test_a_request_is_withdrawn_when_the_light_goes_off_and_forgotten_on_a_host_restart() -> None:
    bench = announced(new_shoe(1, seed=3), VirtualDealer(pace=0))
    deal_one_card(bench)
    bench.shoe.dealer.auto_pull = False  # type: ignore[union-attr]
    with bench.shoe._lock:
        bench.shoe.model.set_exit_locked(False)  # hold the reload back: exit open
    bench.command(SetIndicators(Indicator.SHUFFLE))
    assert bench.shoe.table_view().shuffle_requested
    bench.command(SetIndicators(Indicator.BANKER))
    assert not bench.shoe.table_view().shuffle_requested
    bench.command(SetIndicators(Indicator.SHUFFLE))
    assert bench.shoe.table_view().shuffle_requested
    bench.host = Link(Role.HOST, CONFIG, 0x2222)  # the controller restarts
    bench.run_until(lambda: any(isinstance(e, PeerRestarted) for e in bench.shoe.link_events))
    view = bench.shoe.table_view()
    assert not view.shuffle_lit and not view.shuffle_requested
    assert loads(bench) == 1


def test_careless_dealer_reloads_on_a_stale_light() -> None:
    bench = announced(parse_shoe("AS 2H 3D 4C"), VirtualDealer(pace=0, careless_reload=True))
    bench.host.send(SetIndicators(Indicator.SHUFFLE), bench.now)
    bench.command(SetExitLock(False, cards=1, for_card=1))
    bench.run_until(lambda: loads(bench) == 2)
    assert bench.shoe.model.counter == 0
