"""The virtual dealer: pulls cards when the exit opens, presses the button, makes planned mistakes.

Pure and deterministic: :meth:`VirtualDealer.step` looks at what a dealer can see at the table
(:class:`TableView`) at time ``now`` and returns the :class:`DealerAction` values the dealer
performs. :class:`simulators.shoe.SimulatedShoe` applies them to the shoe.

How the dealer behaves (the heuristic, documented because table tests depend on it):

- **Pulling.** Whenever the exit is unlocked and the shoe is not empty, the dealer pulls the next
  card ``pace`` seconds after the exit opened or after the previous card, and only once the
  previous card has been acknowledged by the host (``card_in_flight`` is false). A real dealer
  does not wait for acknowledgements, but at ``pace`` 0 this is what "as fast as the link allows"
  means: one card in flight, so the host's "lock the exit" can arrive before the next pull.
- **The button.** When the host asks for a confirmation (``confirm_requested``: the host lit the
  CONFIRM indicator, i.e. the round's result is shown) the dealer presses the button
  ``button_delay`` seconds later, once per request (the light must go off and on again for
  another press).
- **A new shoe.** The dealer replaces the shoe as a careful dealer does: only when the host
  asked for a new shoe *after* this one was loaded, with the exit locked, and only a shoe that
  has been dealt from (a shoe nobody has drawn from yet is already fresh):

  ==========================================  ==============================================
  the SHUFFLE light ...                       the dealer
  ==========================================  ==============================================
  lit by the host after it had seen cards     loads a new shoe (once the exit is locked)
  of this shoe (``shuffle_requested``)
  left on from before this shoe was loaded    keeps dealing: the host has not caught up yet
  lit by a host that had not seen this shoe   keeps dealing: the command crossed the shoe's
  dealt from (a stale light)                  announcement, or the frame turning it off is
                                              waiting for its retransmission
  ==========================================  ==============================================

  Which light is fresh is decided by the shoe, which knows what the host has acknowledged
  (:class:`simulators.shoe.SimulatedShoe`). ``careless_reload=True`` keeps the old, careless
  behaviour for tests that reproduce issue 20: any lit SHUFFLE (``shuffle_lit``) with the exit
  locked after a card makes the dealer reload, even one card into a fresh shoe.
- **Mistakes** follow a plan, so a test or a demo can reproduce them exactly. Each
  :class:`PlannedMistake` fires once, at the first step after ``after_card`` cards have been drawn
  (counting from the shoe being loaded) where its condition holds:

  ================  =========================================================================
  ``extra-card``    the exit is locked (end of a round): the dealer tries to pull one card too
                    many; the card stop refuses it and the shoe reports PULL_REFUSED.
  ``early-pull``    the dealer has confirmed a result since card ``N``, the host has taken
                    it (its CONFIRM light is out: it lights the shoe after opening betting,
                    in the same step) and the exit is still locked (betting is open): the
                    dealer pulls before betting closes; refused.
  ``forced-pull``   the exit is locked: the dealer forces a card past the stop; the card comes
                    out and is reported as drawn while locked.
  ``lid-open``      at once (mid-round): the dealer opens the lid and closes it again
                    ``lid_open_seconds`` later.
  ================  =========================================================================

  Command-line syntax (``shoe sim --mistake``): ``KIND@N`` items separated by commas, e.g.
  ``extra-card@12,lid-open@40`` (``N`` = cards drawn before the mistake).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass

from shoe_controller.errors import ConfigError


class Mistake(enum.Enum):
    EXTRA_CARD = "extra-card"
    EARLY_PULL = "early-pull"
    FORCED_PULL = "forced-pull"
    LID_OPEN = "lid-open"


@dataclass(frozen=True, slots=True)
class PlannedMistake:
    """Make ``mistake`` once, after ``after_card`` cards have been drawn."""

    mistake: Mistake
    after_card: int

    def __str__(self) -> str:
        return f"{self.mistake.value}@{self.after_card}"


class DealerAction(enum.Enum):
    PULL = "pull"
    FORCED_PULL = "forced-pull"
    PRESS_BUTTON = "press-button"
    OPEN_LID = "open-lid"
    CLOSE_LID = "close-lid"
    LOAD_SHOE = "load-shoe"


@dataclass(frozen=True, slots=True)
class TableView:
    """What the dealer can see: the shoe's state and the host's lights."""

    exit_locked: bool
    counter: int
    is_empty: bool
    card_in_flight: bool
    confirm_requested: bool
    #: The host asked for a freshly shuffled shoe after this one: SHUFFLE was lit by a host
    #: that had already seen cards of the current shoe (a stale light does not count).
    shuffle_requested: bool = False
    #: The SHUFFLE light is on, fresh or stale (all a careless dealer looks at).
    shuffle_lit: bool = False


def parse_mistakes(text: str) -> list[PlannedMistake]:
    """Parse ``KIND@N[,KIND@N...]``; raises :class:`ConfigError` naming the bad item."""
    kinds = ", ".join(m.value for m in Mistake)
    plan: list[PlannedMistake] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, number = item.partition("@")
        try:
            mistake = Mistake(name.strip().lower())
        except ValueError:
            raise ConfigError(f"unknown dealer mistake {item!r}: expected one of {kinds}") from None
        if not sep or not number.strip().isdigit():
            raise ConfigError(
                f"dealer mistake {item!r} needs '@N' (after N cards), e.g. '{mistake.value}@12'"
            )
        plan.append(PlannedMistake(mistake, int(number)))
    return plan


class VirtualDealer:
    """A deterministic dealer; see the module docstring for the behaviour."""

    def __init__(
        self,
        *,
        pace: float = 0.0,
        mistakes: Iterable[PlannedMistake] = (),
        button_delay: float = 0.2,
        lid_open_seconds: float = 1.0,
        auto_pull: bool = True,
        careless_reload: bool = False,
    ) -> None:
        """``careless_reload``: reload on any lit SHUFFLE, stale or not (issue 20's dealer)."""
        if pace < 0 or button_delay < 0 or lid_open_seconds < 0:
            raise ConfigError("dealer pace, button delay and lid-open time must not be negative")
        self.pace = pace
        self.button_delay = button_delay
        self.lid_open_seconds = lid_open_seconds
        self.auto_pull = auto_pull
        self.careless_reload = careless_reload
        self.pending: list[PlannedMistake] = sorted(mistakes, key=lambda m: m.after_card)
        self.done: list[PlannedMistake] = []
        self._was_locked = True
        self._next_pull_at = math.inf
        self._blocked = False
        self._press_at: float | None = None
        self._confirm_seen = False
        self._lid_close_at: float | None = None
        self._confirmed_since: dict[PlannedMistake, bool] = {}

    def step(self, now: float, view: TableView) -> list[DealerAction]:
        actions: list[DealerAction] = []
        actions += self._watch_lid(now)
        actions += self._make_mistakes(now, view)  # before the button: an early pull follows
        actions += self._watch_button(now, view)  # a press, it never comes in the same step
        actions += self._watch_shuffle(view)
        if self.auto_pull:
            actions += self._pull(now, view)
        return actions

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`step` may act without anything else changing."""
        times = [t for t in (self._press_at, self._lid_close_at) if t is not None]
        if self.auto_pull and not (self._was_locked or self._blocked):
            times.append(self._next_pull_at)
        return min(times) if times else None

    # -- parts of a step ------------------------------------------------------------------

    def _pull(self, now: float, view: TableView) -> list[DealerAction]:
        if view.exit_locked:
            self._was_locked = True
            return []
        if self._was_locked:  # the exit just opened: the dealer reaches for the card
            self._was_locked = False
            self._next_pull_at = now + self.pace
        # Waiting for an acknowledgement (or an empty shoe) is waiting for input, not for time.
        self._blocked = view.is_empty or view.card_in_flight
        if self._blocked or now < self._next_pull_at:
            return []
        self._next_pull_at = now + self.pace
        return [DealerAction.PULL]

    def _watch_button(self, now: float, view: TableView) -> list[DealerAction]:
        if not view.confirm_requested:
            self._confirm_seen = False
            self._press_at = None
            return []
        if not self._confirm_seen:
            self._confirm_seen = True
            self._press_at = now + self.button_delay
        if self._press_at is not None and now >= self._press_at:
            self._press_at = None
            for planned in self._confirmed_since:
                self._confirmed_since[planned] = True
            return [DealerAction.PRESS_BUTTON]
        return []

    def _watch_shuffle(self, view: TableView) -> list[DealerAction]:
        # A shoe nobody has drawn from yet is already fresh: only a used shoe is replaced.
        requested = view.shuffle_lit if self.careless_reload else view.shuffle_requested
        if requested and view.exit_locked and view.counter > 0:
            return [DealerAction.LOAD_SHOE]
        return []

    def _watch_lid(self, now: float) -> list[DealerAction]:
        if self._lid_close_at is not None and now >= self._lid_close_at:
            self._lid_close_at = None
            return [DealerAction.CLOSE_LID]
        return []

    def _make_mistakes(self, now: float, view: TableView) -> list[DealerAction]:
        actions: list[DealerAction] = []
        for planned in list(self.pending):
            if view.counter < planned.after_card:
                break  # sorted: later ones are not due either
            action = self._try(planned, now, view)
            if action is not None:
                self.pending.remove(planned)
                self._confirmed_since.pop(planned, None)
                self.done.append(planned)
                actions.append(action)
        return actions

    def _try(self, planned: PlannedMistake, now: float, view: TableView) -> DealerAction | None:
        match planned.mistake:
            case Mistake.EXTRA_CARD:
                return DealerAction.PULL if view.exit_locked and not view.is_empty else None
            case Mistake.FORCED_PULL:
                return DealerAction.FORCED_PULL if view.exit_locked and not view.is_empty else None
            case Mistake.EARLY_PULL:
                confirmed = self._confirmed_since.setdefault(planned, False)
                # Not before the host has taken the press: a pull racing the press itself
                # would be an extra card between rounds, another mistake.
                taken = confirmed and not view.confirm_requested
                return DealerAction.PULL if taken and view.exit_locked else None
            case Mistake.LID_OPEN:
                self._lid_close_at = now + self.lid_open_seconds
                return DealerAction.OPEN_LID
        return None  # pragma: no cover - match is exhaustive
