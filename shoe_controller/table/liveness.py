"""The liveness guard: does the shoe do what the controller told it? (pure, time passed in)

The controller tells the shoe its exit lock and lights and trusts the link to deliver them;
but a shoe can still end up in another state than the one the controller believes in (its
firmware ignored a command, it was reloaded by hand, a command was dropped by a restart), and
then the table waits for a card that can never come, in silence. So, while the link is up,
the controller asks the shoe for its status every ``interval`` seconds (``StatusRequest``).
The shoe handles messages in order, so its report reflects every command sent before the
request: the guard compares it with what those commands asked for (:class:`Expected`).

* The report agrees: nothing to do.
* It disagrees (exit locked although unlocked for the next card, exit open although locked,
  other lights): the controller **resynchronises** (sends its whole state again) and asks
  again at once.
* It still disagrees ``patience`` seconds after the first disagreement: the guard says
  **latch**, and the controller journals a "shoe not responding to commands" irregularity.
  It latches once per episode; an agreeing report ends the episode.
* No report within ``patience``: the controller resynchronises and asks again, but a late
  report is no disagreement (on a bad line a request can take seconds to get through; what
  the shoe reports when it answers is what counts).

What the report says about cards (its counter) is the table's business, not the guard's: a
counter ahead of the table's is a card that left the shoe unreported (``Table.status_news``).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Literal

STATUS_INTERVAL = 2.0
"""Seconds between status requests while the link is up."""
PATIENCE = 4.0
"""Seconds a disagreement may last, resynchronised, before it latches."""


@dataclass(frozen=True, slots=True)
class Expected:
    """What the shoe should report once it has handled every command sent so far.

    ``for_card``: the counter an unlock was for (the exit relocks by itself after that card,
    so a locked exit with that card out is what an unlock leads to). ``check_lock`` and
    ``check_lights``: whether the shoe has an exit lock and indicators at all."""

    exit_locked: bool
    for_card: int
    lights: int
    check_lock: bool = True
    check_lights: bool = True


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["ok", "resync", "latch"]
    detail: str = ""


def disagreement(expected: Expected, *, exit_locked: bool, counter: int, lights: int) -> str:
    """Why a status report disagrees with ``expected`` ("" when it agrees)."""
    problems = []
    if expected.check_lock:
        if expected.exit_locked and not exit_locked:
            problems.append("the exit is open although the controller locked it")
        elif not expected.exit_locked and exit_locked and counter < expected.for_card:
            problems.append(f"the exit is locked although the controller unlocked it for "
                            f"card {expected.for_card}")
    if expected.check_lights and lights != expected.lights:
        problems.append(f"lights 0x{lights:02x}, the controller set 0x{expected.lights:02x}")
    return "; ".join(problems)


class LivenessGuard:
    """Decides when to ask the shoe for its status and what a report means (see module).

    Requests and reports are not numbered, and a report can come late (a slow line) or
    unasked: so a report is judged against every request still unanswered, and agrees if it
    agrees with any of them (the shoe answered one of those, in order). Unanswered requests
    are forgotten after a while, never by a link change (a resumed link still answers them).
    """

    MAX_UNANSWERED = 8

    def __init__(self, *, interval: float = STATUS_INTERVAL, patience: float = PATIENCE) -> None:
        if not (interval > 0 and patience > 0 and math.isfinite(interval + patience)):
            raise ValueError("status interval and patience must be positive seconds")
        self.interval = interval
        self.patience = patience
        self._next_request = -math.inf
        self._asked: deque[tuple[float, Expected]] = deque(maxlen=self.MAX_UNANSWERED)
        self._overdue_reported: float | None = None  # the request whose silence was reported
        self._trouble_since: float | None = None
        self._latched = False
        self.requests = 0
        self.resyncs = 0

    def request_due(self, now: float) -> bool:
        """Whether to send a StatusRequest now (the link is up; the caller checks that):
        when the interval has passed (or a check was asked for), and no request is waiting
        for its answer, unless that one has waited ``patience`` already."""
        if self._asked and now - self._asked[-1][0] < self.patience:
            return False
        return now >= self._next_request

    def requested(self, now: float, expected: Expected) -> None:
        """A StatusRequest went out; its reply should match ``expected``."""
        self._forget_old(now)
        self._asked.append((now, expected))
        self._next_request = now + self.interval
        self.requests += 1

    def ask_soon(self) -> None:
        """Ask at the next chance (after a restart, a refused message, a resync)."""
        self._next_request = -math.inf

    def link_changed(self) -> None:
        """The link went down or came back: check the shoe as soon as it can answer."""
        self.ask_soon()

    def on_report(self, now: float, *, exit_locked: bool, counter: int, lights: int) -> Verdict:
        if not self._asked:
            return Verdict("ok")  # unasked, or answering a request forgotten: nothing to judge
        for index, (_, expected) in enumerate(self._asked):
            if not disagreement(expected, exit_locked=exit_locked, counter=counter,
                                lights=lights):
                for _ in range(index + 1):
                    self._asked.popleft()
                return self._judge(now, "")
        _, newest = self._asked[-1]
        self._asked.popleft()
        return self._judge(now, disagreement(newest, exit_locked=exit_locked, counter=counter,
                                             lights=lights))

    def check_overdue(self, now: float) -> Verdict:
        """The last request unanswered for ``patience``: resynchronise and ask again (not
        counted towards a latch: a slow line is not a disobedient shoe)."""
        if not self._asked:
            return Verdict("ok")
        when, _ = self._asked[-1]
        if now - when < self.patience or self._overdue_reported == when:
            return Verdict("ok")
        self._overdue_reported = when
        self.resyncs += 1
        self.ask_soon()
        return Verdict("resync", f"no status report within {self.patience:g} s")

    def next_deadline(self) -> float | None:
        times = [self._asked[-1][0] + self.patience] if self._asked else []
        if math.isfinite(self._next_request):
            times.append(self._next_request)
        return min(times) if times else None

    def _forget_old(self, now: float) -> None:
        while self._asked and now - self._asked[0][0] > 4 * self.patience:
            self._asked.popleft()

    def _judge(self, now: float, problem: str) -> Verdict:
        if not problem:
            self._trouble_since = None
            self._latched = False
            return Verdict("ok")
        self.resyncs += 1
        self.ask_soon()
        if self._trouble_since is None:
            self._trouble_since = now
        if not self._latched and now - self._trouble_since >= self.patience:
            self._latched = True
            return Verdict("latch", problem)
        return Verdict("resync", problem)
