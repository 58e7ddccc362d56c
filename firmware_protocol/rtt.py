"""The retransmission timeout from measured round trips (RFC 6298), pure.

A fixed 250 ms timeout is an eternity on a serial line where a frame takes 2 ms and the peer
answers in a few: the timeout should follow what the line actually does. RFC 6298's estimator
keeps a smoothed round-trip time (SRTT) and its variation (RTTVAR) and sets

    RTO = max(floor, SRTT + max(granularity, SRTT / 2, 4 * RTTVAR))

capped by the configured maximum. Samples come only from frames sent once (Karn's rule: the
acknowledgement of a retransmitted frame cannot tell which copy it answers). Until the first
sample the configured initial timeout holds (SPEC 8.3); the link's exponential backoff still
applies on top after a timeout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA = 1 / 8
BETA = 1 / 4
K = 4
GRANULARITY = 0.001
"""Seconds: the clock's resolution as RFC 6298 means it (a millisecond here)."""
WARM_UP = 8
"""Samples during which a sample far below the estimate restarts it (see ``sample``)."""
RESTART_RATIO = 2


@dataclass(slots=True)
class RttEstimator:
    """SRTT / RTTVAR / RTO in seconds (RFC 6298, section 2)."""

    initial: float
    floor: float
    ceiling: float
    srtt: float | None = None
    rttvar: float = 0.0
    samples: int = 0

    def sample(self, rtt: float) -> None:
        """A round trip measured on a frame sent once (seconds, >= 0)."""
        if not (math.isfinite(rtt) and rtt >= 0):
            return
        if (self.srtt is not None and self.samples < WARM_UP
                and rtt * RESTART_RATIO < self.srtt):
            # The first samples can measure something other than the line: a peer still
            # starting up, or a copy we could not know the peer had to send again (the
            # shoe cannot tell a resent LinkOptions from the first). Smoothed at 1/8 per
            # sample, one such 90 ms sample on a 5 ms line kept the timeout above 50 ms
            # for forty frames. A sample half as long or less, this early, restarts the
            # estimate (RFC 6298 2.2) from it: the timeout is then three times that sample.
            self.srtt = None
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = (1 - BETA) * self.rttvar + BETA * abs(self.srtt - rtt)
            self.srtt = (1 - ALPHA) * self.srtt + ALPHA * rtt
        self.samples += 1

    @property
    def rto(self) -> float:
        if self.srtt is None:
            return self.initial
        # RFC 6298's variation term, but never under half a round trip: samples taken only
        # across clean trips (the link's rule) vary by microseconds, and a timeout of SRTT +
        # 1 ms then fired whenever a frame waited behind another on the wire.
        margin = max(GRANULARITY, self.srtt / 2, K * self.rttvar)
        return min(self.ceiling, max(self.floor, self.srtt + margin))

    @property
    def round_trip(self) -> float | None:
        """The smoothed round trip, None before the first sample."""
        return self.srtt

    @property
    def overdue(self) -> float | None:
        """How long after a frame was sent an acknowledgement that does not cover it shows
        it lost: the peer answered after the frame should have reached it (a round trip,
        plus the clock's granularity; the line keeps order, so no reordering window as RACK
        has, RFC 8985). None before the first sample."""
        if self.srtt is None:
            return None
        return self.srtt + GRANULARITY
