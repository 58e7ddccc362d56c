"""The software shoe: a real protocol peer built on the same ``firmware_protocol`` code.

:class:`SimulatedShoe` joins the physical model (:class:`~simulators.shoe_model.ShoeModel`), the
shoe's end of the reliable link (:class:`~firmware_protocol.link.Link`, role SHOE) and an
optional :class:`~simulators.dealer.VirtualDealer`. Its core is sans-I/O like the link: feed it
bytes with :meth:`SimulatedShoe.receive`, run its timers and its dealer with
:meth:`SimulatedShoe.step`, take bytes to write from :meth:`SimulatedShoe.data_to_send`, always
passing ``now``. Tests drive it with a fake clock; :class:`ShoeRunner` (a thread) and
:func:`run_shoe` (a loop for the command line) drive it over a real transport.

Safety rule (SPEC.md 8.7): when the host falls silent (``LinkLost``: no heartbeat or frame for
``link_timeout``) the shoe locks its exit; cards drawn and not yet acknowledged stay in the
link's queue and are sent again when the link returns, in the same session or, after a host
restart, in the new one (card and state messages carry over, ``Message.CARRY_OVER``). The exit
also locks on power-up, on a host restart and on a reboot: only the host unlocks it.

A request for a new shoe is judged fresh or stale (the SHUFFLE light, issue 20). The dealer
reloads only when the host asked for a new shoe *after this one*: the shoe remembers, per load,
whether a SetIndicators with SHUFFLE lit arrived when the host had already acknowledged a card
drawn from this shoe (:meth:`SimulatedShoe.host_has_seen_this_shoe`). A light lit before the
load, or lit by a host that had not yet seen this shoe dealt from, is stale:
:attr:`TableView.shuffle_requested` stays false and only ``shuffle_lit`` shows the bulb. Why a
card and not the SHOE_LOADED announcement: a frame carries the acknowledgement current when it
is *sent*, not when its command was made, so a SetIndicators the host queued before it knew of
the load can arrive acknowledging the announcement; but it can never arrive after the first
card, which needs the host's unlock, sent after it and delivered in order after it. A
SetIndicators without SHUFFLE withdraws the request; a load, a host restart and a reboot forget
it.

The shoe is thread-safe (one lock): a test may pull a card or open the lid from its own thread
while a :class:`ShoeRunner` drives the shoe.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from firmware_protocol.link import (
    Link,
    LinkConfig,
    LinkEvent,
    LinkLost,
    LinkUp,
    PeerRestarted,
    Role,
)
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    Capability,
    CardDrawn,
    CardMisread,
    DeviceFault,
    DeviceIdentity,
    ErrorCode,
    ErrorReport,
    FaultCode,
    Indicator,
    Message,
    MisreadReason,
    Reset,
    ResetKind,
    Sensor,
    SetClock,
    SetExitLock,
    SetIndicators,
    SetState,
    ShoeEvent,
    ShoeStateChanged,
    StatusReport,
    StatusRequest,
)
from shoe_controller import __version__
from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError, TransportError
from shoe_controller.transports.base import Transport
from simulators.dealer import DealerAction, TableView, VirtualDealer
from simulators.shoe_model import CardOut, JamNotice, Notice, ShoeModel, ShoeOutput, StateNotice

__all__ = [
    "CONFIRM_LIGHTS",
    "ShoeModel",
    "ShoeRunner",
    "SimulatedShoe",
    "VirtualDealer",
    "confirm_requested",
    "run_shoe",
    "simulator_identity",
]

log = logging.getLogger("shoe.sim")

CONFIRM_LIGHTS = Indicator.RESULT
"""The host shows a round's result and asks the dealer to confirm it with the button."""
READ_CONFIDENCE = 99
"""Confidence (%) the simulated scanner reports for every card it reads."""


def confirm_requested(lights: int, exit_locked: bool) -> bool:
    """The dealer-button signal: the host shows a round's result and asks for confirmation
    (the RESULT light, SPEC.md), with the exit locked."""
    return exit_locked and bool(lights & Indicator.RESULT)


def simulator_identity(serial_number: str = "SIM-0001", *, load_numbers: bool = True,
                       state_command: bool = True) -> DeviceIdentity:
    """The software shoe's identity: every capability of revision 1.0, LOAD_NUMBER (revision
    1.1) and STATE_COMMAND (revision 1.2) unless turned off (then it behaves as an older
    shoe: it reports load 0, and answers SetState as an unknown command)."""
    capabilities = Capability(0xFF)
    if load_numbers:
        capabilities |= Capability.LOAD_NUMBER
    if state_command:
        capabilities |= Capability.STATE_COMMAND
    return DeviceIdentity(
        vendor="shoe-controller",
        model="Software Shoe",
        serial_number=serial_number,
        firmware_version=__version__,
        capabilities=capabilities,
    )


class SimulatedShoe:
    """A shoe on the protocol: model + link (role SHOE) + optional virtual dealer."""

    def __init__(
        self,
        model: ShoeModel,
        *,
        dealer: VirtualDealer | None = None,
        link_config: LinkConfig | None = None,
        identity: DeviceIdentity | None = None,
        next_shoe: Callable[[int], Sequence[Card]] | None = None,
        rng: random.Random | None = None,
        announce_loaded: bool = False,
    ) -> None:
        """``next_shoe(n)`` gives the cards for the ``n``-th reload (Reset NEW_SHOE; n from 1);
        without it the same cards are loaded again. ``rng`` picks session ids (seed it for
        reproducible runs). ``announce_loaded``: report SHOE_LOADED for the cards it powers up
        with, as a real shoe does when the dealer closes the lid on a fresh shoe (the table
        starts its shoe on that event); the link delivers it once a host connects."""
        self.model = model
        self.dealer = dealer
        self.identity = identity if identity is not None else simulator_identity()
        self.link_config = link_config if link_config is not None else LinkConfig()
        self._next_shoe = next_shoe
        self._reloads = 0
        self._first_cards = list(model.cards)
        self._cut_card = model.cut_card
        self._rng = rng if rng is not None else random.Random()
        self._lock = threading.RLock()
        self.link = self._new_link()
        self.link_events: list[LinkEvent] = []
        self.received: list[Message] = []
        """Every host command delivered to the shoe, in order (for tests and logs)."""
        self.beeps: list[int] = []
        self.button_presses = 0
        self.reboots = 0
        self._clock_set: tuple[int, float] | None = None
        self._last_now = 0.0
        self._first_card: Message | None = None  # the first card drawn from the current load
        self._shuffle_fresh = False  # SHUFFLE lit by a host that had seen this shoe dealt from
        if announce_loaded:
            self._report([StateNotice(Notice.SHOE_LOADED, model.loads)], 0.0)

    # -- the sans-I/O surface --------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """Feed bytes from the wire; host commands take effect at once."""
        with self._lock:
            self._last_now = now
            for item in self.link.receive(data, now):
                if isinstance(item, Message):
                    self.received.append(item)
                    self._handle_command(item, now)
                else:
                    self._on_link_event(item)

    def step(self, now: float) -> None:
        """Run the link's timers (heartbeat watchdog) and let the dealer act."""
        with self._lock:
            self._last_now = now
            for event in self.link.poll(now):
                self._on_link_event(event)
            if self.dealer is not None:
                for action in self.dealer.step(now, self.table_view()):
                    self._apply(action, now)

    def data_to_send(self, now: float) -> bytes:
        with self._lock:
            self._last_now = now
            return self.link.data_to_send(now)

    def next_deadline(self) -> float | None:
        """When to call :meth:`step` / :meth:`data_to_send` again at the latest (None: on input)."""
        with self._lock:
            times = [self.link.next_deadline()]
            if self.dealer is not None:
                times.append(self.dealer.next_deadline())
            present = [t for t in times if t is not None]
            return min(present) if present else None

    # -- physical actions (the dealer's, or a test's) --------------------------------------

    def pull(self, now: float, *, forced: bool = False) -> None:
        with self._lock:
            self._report(self.model.pull(forced=forced), now)

    def open_lid(self, now: float) -> None:
        with self._lock:
            self._report(self.model.open_lid(), now)

    def close_lid(self, now: float) -> None:
        with self._lock:
            self._report(self.model.close_lid(), now)

    def jam(self, now: float) -> None:
        with self._lock:
            self._report(self.model.jam(), now)

    def press_button(self, now: float, button: Button = Button.DEALER) -> None:
        with self._lock:
            self.button_presses += 1
            self.link.send(ButtonPressed(button, self.model.counter), now)

    # -- views -----------------------------------------------------------------------------

    @property
    def is_up(self) -> bool:
        with self._lock:
            return self.link.is_up

    def unacked_cards(self) -> int:
        """Card messages the host has not acknowledged yet (queued or in flight)."""
        with self._lock:
            return sum(
                isinstance(m, CardDrawn | CardMisread) for m in self.link.pending_messages()
            )

    def status(self, now: float) -> StatusReport:
        with self._lock:
            model = self.model
            return StatusReport(
                exit_locked=model.exit_locked,
                lid_open=model.lid_open,
                loaded=not model.is_empty,
                counter=model.counter,
                indicators=Indicator(model.indicators),
                clock_unix_ms=self._clock_ms(now),
                unacked_cards=min(self.unacked_cards(), 0xFFFF),
                fault=FaultCode.JAM if model.jammed else FaultCode.NONE,
            )

    def table_view(self) -> TableView:
        """What the dealer sees at the table now (see :class:`~simulators.dealer.TableView`)."""
        with self._lock:
            model = self.model
            lit = bool(model.indicators & Indicator.SHUFFLE)
            return TableView(
                exit_locked=model.exit_locked,
                counter=model.counter,
                is_empty=model.is_empty,
                card_in_flight=self.unacked_cards() > 0,
                confirm_requested=confirm_requested(model.indicators, model.exit_locked),
                shuffle_requested=lit and self._shuffle_fresh,
                shuffle_lit=lit,
            )

    def host_has_seen_this_shoe(self) -> bool:
        """Whether the host has acknowledged a card drawn from the current load: only then can
        a SHUFFLE light it sends ask for a shoe *after* this one (see the module docstring)."""
        with self._lock:
            card = self._first_card
            return card is not None and not any(m is card for m in self.link.pending_messages())

    def all_cards_acknowledged(self) -> bool:
        """This shoe is dealt out and the host acknowledged every card message (``shoe sim
        --exit-when-empty``). Dealt out: every card is out, or, with a cut card, the host
        asked for a new shoe after this one (the cards behind the cut card are never dealt;
        without this a shoe with a cut card never counted as done)."""
        with self._lock:
            return (self.model.is_empty or self._shuffle_fresh) and self.unacked_cards() == 0

    # -- internals -------------------------------------------------------------------------

    def _new_link(self) -> Link:
        return Link(Role.SHOE, self.link_config, self._rng.getrandbits(32), self.identity)

    def _apply(self, action: DealerAction, now: float) -> None:
        match action:
            case DealerAction.PULL:
                self.pull(now)
            case DealerAction.FORCED_PULL:
                self.pull(now, forced=True)
            case DealerAction.PRESS_BUTTON:
                self.press_button(now)
            case DealerAction.OPEN_LID:
                self.open_lid(now)
            case DealerAction.CLOSE_LID:
                self.close_lid(now)
            case DealerAction.LOAD_SHOE:
                self._reset(ResetKind.NEW_SHOE, now)

    def _on_link_event(self, event: LinkEvent) -> None:
        self.link_events.append(event)
        if isinstance(event, LinkLost):
            if not self.model.exit_locked:
                log.warning("host lost (%s): exit locked", event.reason)
            self.model.set_exit_locked(True)
        elif isinstance(event, PeerRestarted):
            log.info("host restarted: exit locked, %d messages carried over", event.carried_over)
            self.model.set_exit_locked(True)
            # The old host's lights mean nothing now (a RESULT light left on would keep the
            # dealer from seeing the new host ask for confirmation); the new host resends its own.
            self._set_lights(0)
        elif isinstance(event, LinkUp):
            log.info("host connected (session %08x, resumed=%s)", event.peer_session, event.resumed)

    def _handle_command(self, message: Message, now: float) -> None:
        match message:
            case SetExitLock(locked=locked, cards=cards, for_card=for_card):
                if not self.model.set_exit_locked(locked, cards, for_card):
                    log.info("unlock for card %d ignored: the next card out is %d",
                             for_card, self.model.counter + 1)
            case SetIndicators(lights=lights, beep_ms=beep_ms):
                self._set_lights(int(lights))
                if beep_ms:
                    self.beeps.append(beep_ms)
            case SetState(lights=lights, locked=locked, cards=cards, for_card=for_card) if (
                    self.identity.capabilities & Capability.STATE_COMMAND):
                self._set_lights(int(lights))  # lights first: never an exit newer than them
                if not self.model.set_exit_locked(locked, cards, for_card):
                    log.info("unlock for card %d ignored: the next card out is %d",
                             for_card, self.model.counter + 1)
            case StatusRequest():
                self.link.send(self.status(now), now)
            case SetClock(unix_ms=unix_ms):
                self._clock_set = (unix_ms, now)
            case Reset(kind=kind):
                self._reset(kind, now)
            case ErrorReport(code=code, detail=detail):
                log.warning("host reported an error: %s %s", code.name, detail)
            case _:
                detail = f"a shoe does not accept {type(message).__name__}"
                self.link.send(ErrorReport(ErrorCode.UNSUPPORTED_COMMAND, detail), now)

    def _reset(self, kind: ResetKind, now: float) -> None:
        if kind is ResetKind.CLEAR_FAULTS:
            self.model.clear_jam()
        elif kind is ResetKind.NEW_SHOE:
            self._reloads += 1
            cards = self._next_shoe(self._reloads) if self._next_shoe else self._first_cards
            self._report(self.model.load(cards, cut_card=self._cut_card), now)
        elif kind is ResetKind.REBOOT:
            # The firmware restarts with a new session id. Card and state messages not yet
            # acknowledged survive (a real shoe keeps them in non-volatile memory).
            kept = [m for m in self.link.pending_messages() if m.CARRY_OVER]
            self.reboots += 1
            self.model.set_exit_locked(True)
            self._set_lights(0)
            self.link = self._new_link()
            for message in kept:
                self.link.send(message, now)

    def _set_lights(self, lights: int) -> None:
        """Show the host's lights; note whether a SHUFFLE among them is a fresh request."""
        if not lights & Indicator.SHUFFLE:
            self._shuffle_fresh = False
        elif not self._shuffle_fresh and self.host_has_seen_this_shoe():
            self._shuffle_fresh = True
        elif not self._shuffle_fresh and not self.model.indicators & Indicator.SHUFFLE:
            log.info("SHUFFLE lit by a host that has not seen this shoe dealt from: not a "
                     "request for a new one")
        self.model.set_indicators(lights)

    def _report(self, outputs: list[ShoeOutput], now: float) -> None:
        for output in outputs:
            if (isinstance(output, StateNotice) and output.notice is Notice.SHOE_LOADED
                    and not self.identity.capabilities & Capability.LOAD_NUMBER):
                output = StateNotice(Notice.SHOE_LOADED, 0)  # a revision 1.0 shoe
            message = _to_message(output)
            if isinstance(output, StateNotice) and output.notice is Notice.SHOE_LOADED:
                # A new load: whatever SHUFFLE showed so far asked for a shoe before this one.
                self._first_card = None
                self._shuffle_fresh = False
            elif isinstance(output, CardOut) and self._first_card is None:
                self._first_card = message
            self.link.send(message, now)

    def _clock_ms(self, now: float) -> int:
        if self._clock_set is None:
            return 0
        unix_ms, at = self._clock_set
        return max(0, unix_ms + round((now - at) * 1000))


def _to_message(output: ShoeOutput) -> Message:
    match output:
        case CardOut(counter=counter, card=card, misread=True, while_locked=locked):
            return CardMisread(counter, Sensor.OPTICAL_PRIMARY, MisreadReason.LOW_CONFIDENCE, locked)
        case CardOut(counter=counter, card=card, while_locked=locked):
            rank, suit = card.wire
            return CardDrawn(counter, rank, suit, Sensor.OPTICAL_PRIMARY, READ_CONFIDENCE, locked)
        case StateNotice(notice=notice, counter=counter):
            return ShoeStateChanged(ShoeEvent[notice.name], counter)
        case JamNotice(cleared=False, counter=counter):
            return DeviceFault(FaultCode.JAM, f"card jammed at the exit after card {counter}")
    raise ValueError(f"no message for {output!r}")  # JamNotice(cleared=True): status only


# -- I/O drivers -------------------------------------------------------------------------------

MAX_WAIT = 0.05
"""Longest the I/O loop blocks in one read, so a stop request is seen quickly."""


def run_shoe(
    shoe: SimulatedShoe,
    transport: Transport,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
    until: Callable[[], bool] | None = None,
) -> None:
    """Drive ``shoe`` over ``transport`` until ``stop`` is set (or ``until()`` holds).

    Returns normally when stopped; any other failure (including a :class:`TransportError`
    while not stopping) propagates to the caller.
    """
    try:
        while not stop.is_set():
            now = clock()
            if until is not None and until():
                return  # before the dealer acts on it (a new shoe loaded as the sim stops)
            shoe.step(now)
            out = shoe.data_to_send(now)
            if out:
                transport.write(out)
            if until is not None and until():
                return
            deadline = shoe.next_deadline()
            wait = MAX_WAIT if deadline is None else min(MAX_WAIT, max(0.0, deadline - clock()))
            data = transport.read(4096, wait)
            if data:
                shoe.receive(data, clock())
    except TransportError:
        if stop.is_set():
            return  # the transport was closed to stop us
        raise


class ShoeRunner:
    """Runs :func:`run_shoe` in a thread; an exception in it reaches the owner.

    ``close()`` (or leaving the ``with`` block) stops the thread, closes the transport if
    ``close_transport`` and re-raises whatever ended the thread abnormally; :meth:`check`
    re-raises it earlier, for an owner that polls.
    """

    def __init__(
        self,
        shoe: SimulatedShoe,
        transport: Transport,
        *,
        close_transport: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.shoe = shoe
        self.transport = transport
        self._close_transport = close_transport
        self._clock = clock
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="software-shoe", daemon=True)

    def start(self) -> ShoeRunner:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            run_shoe(self.shoe, self.transport, self._stop, clock=self._clock)
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()/close()
            self._error = exc
            log.error("software shoe stopped: %s", exc)

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive()

    def check(self) -> None:
        if self._error is not None:
            raise ShoeError(f"software shoe failed: {self._error}") from self._error

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        if self._close_transport:
            self.transport.close()  # also ends a read blocked in the transport
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        self.check()
        if self._thread.is_alive():
            raise ShoeError("software shoe thread did not stop within 4 s")

    def __enter__(self) -> Self:
        if not self._thread.is_alive() and not self._stop.is_set():
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
