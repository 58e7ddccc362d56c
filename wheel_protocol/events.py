"""What the game tracker reports: game events, wheel faults and commands to send, in one stream.

One ordered list comes out of every tracker call (h11's habit): a caller can never see a
game's number before the "no more bets" that must precede it, or a command before the event
that explains it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from wheel_protocol.messages import Command


class VoidReason(enum.Enum):
    """Why a game was voided (journalled and reported with the game)."""

    MISSPIN = "misspin"  # flag 2: the ball ran the same way as the rotor
    BALL_NOT_DETECTED = "ball_not_detected"  # flag 1 past its grace, or state 7
    FAULT = "fault"  # flag 4 (sensor, motor or encoder) during the game
    WHEEL_IDLE = "wheel_idle"  # a silent drop to state 6 during the game
    ABANDONED = "abandoned"  # the wheel went back to "before a game" without a number
    NO_RESULT = "no_result"  # a new game began before this one's number was seen
    NOT_STARTED = "not_started"  # host-started game: the wheel did not launch in time
    NUMBER_MISMATCH = "number_mismatch"  # the status and the result line disagree
    SUPERVISOR = "supervisor"


class FaultCode(enum.Enum):
    """Wheel problems the table must show (with :attr:`WheelFault.remedy`)."""

    HARDWARE = "hardware"  # flag 4
    WHEEL_IDLE = "wheel_idle"  # silent drop to state 6 mid-game: a fault without mode 256
    MISSPIN = "misspin"
    BALL_NOT_DETECTED = "ball_not_detected"
    LAUNCH_RETRY = "launch_retry"  # flag 8 past the start-of-spin grace
    NOT_STARTED = "not_started"
    NUMBER_MISMATCH = "number_mismatch"
    NO_STATUS = "no_status"  # nothing heard from the wheel for too long
    GAME_NOT_OPENED = "game_not_opened"  # a game ran that no betting round was open for
    LINE_NOISE = "line_noise"  # a number reported while the ball was still running: dropped


REMEDIES: dict[FaultCode, str] = {
    FaultCode.HARDWARE: "Wheel reports a sensor, motor or encoder fault: stop the game, "
    "check the wheel, run a self-test",
    FaultCode.WHEEL_IDLE: "Wheel went idle during a game: the game is void; a self-test has "
    "been requested, check its result and restart the wheel",
    FaultCode.MISSPIN: "Misspin (ball ran with the rotor): the game is void and respun",
    FaultCode.BALL_NOT_DETECTED: "Ball not detected: check the ball is in the wheel; the game "
    "is void",
    FaultCode.LAUNCH_RETRY: "Ball launch failed, the wheel is retrying: watch the launch",
    FaultCode.NOT_STARTED: "The wheel did not start the game: check it is in host-start mode "
    "and the rotor is running",
    FaultCode.NUMBER_MISMATCH: "The wheel reported two different numbers: read the pocket and "
    "confirm or void the game",
    FaultCode.NO_STATUS: "No status from the wheel: check the cable and the wheel's power",
    FaultCode.GAME_NOT_OPENED: "A game ran while no betting round was open: it is not "
    "settled; check the table system",
    FaultCode.LINE_NOISE: "A winning number came while the ball was still running: ignored "
    "as line noise; check the wheel's cable if it happens again",
}


@dataclass(frozen=True, slots=True)
class RoundOpened:
    """Betting opens for ``game`` (the tracker's own count). ``respin_of`` names the voided
    game this one respins (its betting is already closed: the bets stand)."""

    game: int
    at: float
    spin: int | None = None
    respin_of: int | None = None


@dataclass(frozen=True, slots=True)
class NoMoreBets:
    game: int
    at: float


@dataclass(frozen=True, slots=True)
class NumberAccepted:
    """``game``'s winning number, accepted exactly once. ``source``: "status", "line" or
    "both" (the two agreed before it was accepted)."""

    game: int
    number: int
    source: str
    at: float
    spin: int | None = None


@dataclass(frozen=True, slots=True)
class GameVoided:
    game: int
    reason: VoidReason
    detail: str
    at: float


@dataclass(frozen=True, slots=True)
class WheelFault:
    """A problem to show with its remedy. ``latch``: the table latches an irregularity that a
    supervisor clears; otherwise it is a warning shown and logged."""

    code: FaultCode
    detail: str
    latch: bool
    at: float
    game: int | None = None

    @property
    def remedy(self) -> str:
        return REMEDIES[self.code]


@dataclass(frozen=True, slots=True)
class WheelStatusChanged:
    """The wheel's state or warning flags changed (for the display and the log)."""

    state: int
    warnings: int
    at: float


@dataclass(frozen=True, slots=True)
class SelfTestResult:
    """A ``*F <code>`` line, passed on as the wheel wrote it (codes are the vendor's)."""

    code: str
    at: float


@dataclass(frozen=True, slots=True)
class SendCommand:
    """Write ``command`` to the wheel now (``encode_command``)."""

    command: Command


GameEvent = RoundOpened | NoMoreBets | NumberAccepted | GameVoided
TrackerOutput = (
    RoundOpened | NoMoreBets | NumberAccepted | GameVoided | WheelFault | WheelStatusChanged
    | SelfTestResult | SendCommand
)
