"""The game tracker: parsed wheel messages and time in, game events out (pure, no I/O).

A real wheel repeats each status many times, may keep its spin counter across games and may
repeat or lose a result line; the status's "last winning number" is the *previous* game's in
every state but 5. The tracker therefore follows the wheel's *state* per game, never the spin
counter, and takes a number only

* for a game it opened a betting round for (state 2, or :meth:`GameTracker.open_betting` when
  the host starts games), and
* after it saw that game's ball launched (state 3 or 4), so a status still showing state 5 of
  the game before, or a late repeat of its result line, is never taken, and
* once, when ``confirmations`` reports agree (state-5 statuses and the bare result line; the
  protocol has no checksum, and a real wheel repeats its state-5 status every 500 ms, so a
  second report costs little and a digit flipped by line noise cannot decide a game), or when
  one report stands unchallenged for ``confirm_window`` (unless a status held for
  confirmation may deny it, or it is only the number the wheel showed before the game, which
  is what a state digit flipped to 5 shows) or until the wheel moves on to its next game.
  Reports that disagree before a number is accepted void the game; a report that disagrees
  after it latches a fault asking the supervisor to check the pocket.

A game finished while the host was away is told by its "last number" changing, and by its
spin counter moving (two games in a row draw the same number one time in 37); a
host-started game's launch is a ball running after its ``*u``, never the game before's.

Vendor guidance is applied with its grace periods as parameters (:class:`TrackerConfig`):
launch-failed (flag 8) is ignored for the first seconds of state 3; ball-not-detected (flag 1)
is tolerated for a few seconds, then voids the game; a misspin (flag 2) voids the game and the
tracker sends ``*R`` so the wheel respins (the respin is a new game whose betting is already
closed: ``RoundOpened(respin_of=...)``); a silent drop to state 6 mid-game voids it and asks
for a self-test. Every call returns one ordered list of outputs (:mod:`wheel_protocol.events`).
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from dataclasses import dataclass

from wheel_protocol.events import (
    FaultCode,
    GameVoided,
    NoMoreBets,
    NumberAccepted,
    RoundOpened,
    SelfTestResult,
    SendCommand,
    TrackerOutput,
    VoidReason,
    WheelFault,
    WheelStatusChanged,
)
from wheel_protocol.messages import (
    MIN_POLL_INTERVAL,
    AcknowledgeVoid,
    Direction,
    Reply,
    SelfTest,
    StartGame,
    Status,
    StatusPoll,
    Unparsed,
    WarningFlag,
    WheelMessage,
    WheelState,
    WinningNumberLine,
    number_field,
)

DIRECTIONS = ("alternate", "clockwise", "anticlockwise")


class TrackerStateError(RuntimeError):
    """A host action that the game's state does not allow (e.g. opening betting mid-game)."""


@dataclass(frozen=True, slots=True)
class TrackerConfig:
    """How the wheel is run and the vendor's grace periods (seconds).

    ``host_starts``: the host opens and closes betting and starts each game with ``*u``
    (wheel mode bit 2); otherwise the wheel runs games and state 2 opens a round.
    ``poll_interval``: send ``*X`` this often (None: the wheel sends status by itself).
    ``status_timeout``: silence after which a latched NO_STATUS fault is raised (0: never).
    ``confirmations``: agreeing reports that settle a number at once (1: the first report);
    ``confirm_window``: how long a lone report waits for another before it is taken.
    """

    host_starts: bool = False
    poll_interval: float | None = None
    launch_fail_grace: float = 3.0
    ball_not_detected_grace: float = 5.0
    confirmations: int = 2
    confirm_window: float = 1.2
    start_timeout: float = 10.0
    status_timeout: float = 3.0
    direction: str = "alternate"
    first_game: int = 1

    def __post_init__(self) -> None:
        problems = []
        for name in ("launch_fail_grace", "ball_not_detected_grace", "confirm_window",
                     "start_timeout", "status_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                problems.append(f"{name} must be a finite number of seconds >= 0, got {value!r}")
        poll = self.poll_interval
        if poll is not None and not (isinstance(poll, (int, float)) and math.isfinite(poll)
                                     and poll >= MIN_POLL_INTERVAL):
            problems.append(f"poll_interval must be at least {MIN_POLL_INTERVAL} s (the wheel "
                            f"asks for polls 100 ms apart), got {poll!r}")
        if isinstance(self.confirmations, bool) or self.confirmations not in (1, 2, 3):
            problems.append(f"confirmations must be 1, 2 or 3, got {self.confirmations!r}")
        if self.direction not in DIRECTIONS:
            problems.append(f"direction must be one of {', '.join(DIRECTIONS)}, "
                            f"got {self.direction!r}")
        if isinstance(self.first_game, bool) or not isinstance(self.first_game, int) \
                or self.first_game < 1:
            problems.append(f"first_game must be a whole number >= 1, got {self.first_game!r}")
        if problems:
            raise ValueError("; ".join(problems))


#: Warning flags that end a game at once (misspin, hardware fault): taken when repeated.
_CRITICAL_FLAGS = WarningFlag.MISSPIN | WarningFlag.HARDWARE_FAULT


_BALL_RUNNING = (WheelState.BALL_IN_RIM, WheelState.NO_MORE_BETS)


def _same_condition(held: Status, status: Status) -> bool:
    """Whether ``status`` bears out what ``held`` said: the same critical flags, and the same
    state, or for a launch the ball still running (3 then 4 is the game going on). The rotor
    speed and the spin may have moved on."""
    if held.warnings & _CRITICAL_FLAGS != status.warnings & _CRITICAL_FLAGS:
        return False
    if (WheelState.WINNING_NUMBER not in (held.state, status.state)
            and held.last_number != status.last_number):
        return False
    return held.state is status.state or (held.state in _BALL_RUNNING
                                          and status.state in _BALL_RUNNING)


class Phase(enum.Enum):
    IDLE = "idle"  # no game yet
    BETTING = "betting"  # round open
    CLOSED = "closed"  # no more bets, number not yet known
    COMPLETE = "complete"
    VOIDED = "voided"
    FOREIGN = "foreign"  # a game no round was opened for: watched, never settled


_IN_PROGRESS = (Phase.BETTING, Phase.CLOSED)


class GameTracker:
    """Follows one wheel. Feed it with :meth:`receive` (each parsed message) and :meth:`poll`
    (at :meth:`next_deadline`, or regularly); host-started tables also call
    :meth:`open_betting` and :meth:`close_betting`; a supervisor's void is :meth:`void`."""

    def __init__(self, config: TrackerConfig | None = None) -> None:
        self.config = config or TrackerConfig()
        self.phase = Phase.IDLE
        self.game = self.config.first_game - 1  # the current (or last) game's number
        self.accepted: int | None = None
        self.last_status: Status | None = None
        self._launched = False
        self._reports: list[tuple[int, str]] = []  # this game's number reports, not yet taken
        self._first_report_at = 0.0
        self._spin: int | None = None  # the spin counter of this game's state-5 status
        self._mismatch_reported = False
        self._dissent: int | None = None  # a number reported once after acceptance
        self._ball_missing_since: float | None = None
        self._rim_since: float | None = None
        self._launch_retry_reported = False
        self._start_sent_at: float | None = None
        self._start_pending = False  # *u waits for the wheel to be "before a game"
        self._is_respin = False
        self._respin_of: int | None = None
        self._hardware_raised = False
        self._heard_at: float | None = None
        self._unreadable_since_heard = 0  # lines not read since the last line read
        self._silence_reported = False
        self._next_poll: float | None = None
        self._shown: tuple[int, int] | None = None
        self._held: Status | None = None  # a status that would end the game, until repeated
        self._held_at = 0.0
        self._unreadable_since_held = False  # lines came after it that could not be read
        self._foreign_misspin_acked = False
        #: The previous game's number as the wheel shows it during this game ("last number"
        #: in every state but 5); a change means the wheel finished a game this tracker did
        #: not see (the line was down): this game's result was missed.
        self._prior: int | None = None
        self._prior_known = False
        self._prior_candidate: int | None = None  # learnt when two statuses agree on it
        #: This game's spin counter once two of its statuses agree on it (None: not yet, or
        #: a wheel that shows 000). A counter that then moves means another game: the
        #: counter moves when a new game starts (state 2: "a new game is being started"),
        #: and a wheel that keeps it across games never moves it. With the last number, it
        #: tells a game finished unseen even when two games in a row drew the same number.
        self._game_spin: int | None = None
        self._spin_candidate: int | None = None

    # ------------------------------------------------------------------ inputs

    @property
    def in_progress(self) -> bool:
        return self.phase in _IN_PROGRESS

    @property
    def _awaiting_start(self) -> bool:
        """A host-started game whose ``*u`` has not gone to the wheel yet: a ball running
        now is the game before's (voided while it ran, or its number taken from the result
        line before its state 5), never this round's launch."""
        return self._host_game_unlaunched and (self._start_sent_at is None
                                               or self._start_pending)

    @property
    def _host_game_unlaunched(self) -> bool:
        """A host-started game not launched yet: the wheel is between games, and the only
        game that can finish is the game before (its "last number" may still change)."""
        return (self.config.host_starts and self.in_progress and not self._launched
                and not self._is_respin)

    def receive(self, message: WheelMessage | Unparsed, now: float) -> list[TrackerOutput]:
        """One parsed message from the wheel (:class:`Unparsed` lines are ignored here)."""
        out: list[TrackerOutput] = []
        if isinstance(message, Unparsed):
            self._unreadable_since_held = self._held is not None
            self._unreadable_since_heard += 1
            return out
        self._heard_at = now
        self._unreadable_since_heard = 0
        self._silence_reported = False
        if isinstance(message, Status):
            self._status(message, now, out)
        elif isinstance(message, WinningNumberLine):
            self._result_line(message.number, now, out)
        elif (isinstance(message, Reply) and message.command == "u"
              and message.text.strip() == "NO" and self._start_sent_at is not None
              and self.in_progress and not self._launched and not self._start_pending):
            # The wheel refused the *u: it was not "before a game" after all (a status of
            # state 1 that was line noise): sent again when the wheel says it is.
            self._start_pending = True
            self._fault(FaultCode.LINE_NOISE, "the wheel refused *u (not before a game): "
                        "sent again when it is", False, now, out)
        elif isinstance(message, Reply) and message.command == "F":
            out.append(SelfTestResult(message.text, now))
            if self.in_progress and message.text.strip("0"):
                # Mode 256: the wheel reports faults with *F lines during play.
                self._lock_bets(now, out)
                self._fault(FaultCode.HARDWARE, f"*F {message.text} during the game", True,
                            now, out)
                self._void(VoidReason.FAULT, f"the wheel reported fault {message.text}", now,
                           out)
        return out

    def poll(self, now: float) -> list[TrackerOutput]:
        """Timers: a number reported once and not yet confirmed, the ball-not-detected grace,
        a host start that did not happen, silence from the wheel, and the next status poll."""
        out: list[TrackerOutput] = []
        cfg = self.config
        if self._heard_at is None:
            self._heard_at = now  # silence is counted from the first call
        if self._held is not None and now >= self._held_at + cfg.confirm_window:
            held, self._held = self._held, None
            if self._spin_moved(held) and not self._last_number_changed(held):
                # Only its spin counter says it is another game: one flipped digit says as
                # much, and the wheel's next status will say it again if it is so.
                self._drop_held(held, "of another spin, not repeated", now, out)
            elif self._unreadable_since_held and not self._only_a_launch(held):
                # The wheel went on talking and nothing it said could be read: no word
                # bears out a void or a fault (a repeat of it would have been held again).
                self._drop_held(held, "not repeated (the lines after it were unreadable)", now,
                                out)
            else:
                self._take_status(held, now, out)  # nothing contradicted it: the wheel
                # said it (and fell silent, or it is only the ball's launch)
        if self._window_may_settle() and now >= self._first_report_at + cfg.confirm_window:
            self._accept_reports(now, out)
        if (self._ball_missing_since is not None and self.in_progress
                and now >= self._ball_missing_since + cfg.ball_not_detected_grace):
            self._ball_missing(now, out)
        if (self._start_sent_at is not None and self.in_progress and not self._launched
                and now >= self._start_sent_at + cfg.start_timeout):
            self._fault(FaultCode.NOT_STARTED, f"no launch {cfg.start_timeout:g} s after *u",
                        True, now, out)
            self._void(VoidReason.NOT_STARTED, "the wheel did not launch the ball", now, out)
        if (cfg.status_timeout and not self._silence_reported
                and now >= self._heard_at + cfg.status_timeout):
            self._silence_reported = True
            silent = now - self._heard_at
            # A wheel heard only as noise is not silent: the line carries something (a wrong
            # baud rate or parity, a damaged cable), and the supervisor should know which.
            detail = (f"no readable line from the wheel for {silent:.1f} s "
                      f"({self._unreadable_since_heard} unreadable: check the line's speed, "
                      f"parity and cable)" if self._unreadable_since_heard
                      else f"nothing from the wheel for {silent:.1f} s")
            self._fault(FaultCode.NO_STATUS, detail, True, now, out)
        if cfg.poll_interval is not None and (self._next_poll is None or now >= self._next_poll):
            out.append(SendCommand(StatusPoll()))
            self._next_poll = now + cfg.poll_interval
        return out

    def resume(self, now: float) -> None:
        """The host (re)opened the line to the wheel: silence is counted from ``now``, not
        from the last line heard before (the host was away, not the wheel)."""
        self._heard_at = now
        self._silence_reported = False

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to do (None: only on input)."""
        cfg = self.config
        times = []
        if self._held is not None:
            times.append(self._held_at + cfg.confirm_window)
        if self._window_may_settle():
            times.append(self._first_report_at + cfg.confirm_window)
        if self._ball_missing_since is not None and self.in_progress:
            times.append(self._ball_missing_since + cfg.ball_not_detected_grace)
        if self._start_sent_at is not None and self.in_progress and not self._launched:
            times.append(self._start_sent_at + cfg.start_timeout)
        if cfg.status_timeout and not self._silence_reported and self._heard_at is not None:
            times.append(self._heard_at + cfg.status_timeout)
        if cfg.poll_interval is not None:
            times.append(self._next_poll if self._next_poll is not None else -math.inf)
        return min(times, default=None)

    # ------------------------------------------------------------------ host actions

    def open_betting(self, now: float) -> list[TrackerOutput]:
        """Host-started tables: the table system opens betting for the next game."""
        if not self.config.host_starts:
            raise TrackerStateError("the wheel runs the games (state 2 opens betting); "
                                    "open_betting is for host-started tables")
        if self.in_progress:
            raise TrackerStateError(f"game {self.game} is still in progress")
        out: list[TrackerOutput] = []
        self._held = None  # a status held before the round opened is not this round's
        self._respin_of = None
        self._open(now, out)
        return out

    def close_betting(self, now: float) -> list[TrackerOutput]:
        """Host-started tables: no more bets; the wheel is told to start the game (``*u``) at
        once if it is ready ("before a game"), else as soon as it says it is (a wheel still
        showing the last result refuses a start)."""
        if not self.config.host_starts:
            raise TrackerStateError("the wheel closes betting itself (state 4)")
        if self.phase is not Phase.BETTING:
            raise TrackerStateError(f"no betting round is open (game {self.game} is "
                                    f"{self.phase.value})")
        out: list[TrackerOutput] = []
        self._close(now, out)
        self._start_sent_at = now  # the start timeout runs from here
        ready = self.last_status is None or self.last_status.state is WheelState.BEFORE_GAME
        if ready:
            out.append(SendCommand(StartGame(self._start_direction())))
            self._held = None  # a status held from before the *u is the game before's
        self._start_pending = not ready
        return out

    def void(self, now: float, detail: str) -> list[TrackerOutput]:
        """A supervisor voids the game in progress."""
        if not self.in_progress:
            raise TrackerStateError(f"no game in progress to void (game {self.game} is "
                                    f"{self.phase.value})")
        out: list[TrackerOutput] = []
        self._held = None  # the wheel repeats what it meant; the void decides this game
        self._void(VoidReason.SUPERVISOR, detail, now, out)
        return out

    # ------------------------------------------------------------------ statuses

    def _status(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        """A status, held back if on its own word it would be the ball's launch, or end or
        fault the game: the protocol has no checksum, and one flipped bit turns "winning
        number" (5) into "no more bets" (4) (the last game's number would then look like
        this game's), "ball in the rim" (3) into "place your bets" (2), "before a game" (1)
        or "ball not detected" (7), or sets a misspin or fault flag. Such a status takes
        effect once the next status says the same (a real wheel repeats its status every
        500 ms) or nothing contradicts it for the confirm window; meanwhile bets are locked
        (closing betting early is safe; voiding a real game, opening a phantom one or taking
        a stale number is not), except for a launch seen in state 3, during which a wheel
        still takes bets. A held status that the next one contradicts was line noise: it is
        dropped with a warning."""
        held, self._held = self._held, None
        if held is not None:
            if self._bears_out(held, status):
                self._take_status(held, now, out)
            else:
                self._drop_held(held, "not repeated by the next one", now, out)
        if self._needs_confirmation(status):
            self._held, self._held_at = status, now
            self._unreadable_since_held = False
            # (awaiting its *u, a host-started round's betting stays open: what is held is
            # the game before's ball or result)
            if not self._awaiting_start and (status.state is not WheelState.BALL_IN_RIM
                                             or status.warnings & _CRITICAL_FLAGS):
                self._lock_bets(now, out)
            return
        self._take_status(status, now, out)

    def _bears_out(self, held: Status, status: Status) -> bool:
        """Whether ``status`` says what the ``held`` one said (:func:`_same_condition`),
        with the same spin counter when the held one is another game's by its counter."""
        return _same_condition(held, status) and (status.spin == held.spin
                                                  or not self._spin_moved(held))

    def _drop_held(self, held: Status, why: str, now: float,
                   out: list[TrackerOutput]) -> None:
        """A held status that nothing bore out: line noise, ignored with a warning."""
        self._fault(FaultCode.LINE_NOISE, f"status {held.encode().decode('ascii')!r} {why}: "
                    "ignored", False, now, out)

    def _needs_confirmation(self, status: Status) -> bool:
        """Whether ``status`` alone would be a launch, latch a fault, or void or replace the
        game in progress (a repeat of the last status never is: it was taken already)."""
        last = self.last_status
        state = status.state
        critical = status.warnings & WarningFlag.HARDWARE_FAULT
        if state in (WheelState.BALL_IN_RIM, WheelState.NO_MORE_BETS):
            critical |= status.warnings & WarningFlag.MISSPIN  # a misspin only means this then
        if critical and (last is None or (last.warnings & critical) != critical):
            return True
        if self._missed_a_game(status):
            return True  # a digit flipped in the last number would void a real game
        if last is not None and last.state is state:
            return False
        if state in (WheelState.BALL_IN_RIM, WheelState.NO_MORE_BETS):
            # the evidence that this game's ball was launched, which makes its state-5
            # reports count (a respin's too)
            return last is None or last.state not in (WheelState.BALL_IN_RIM,
                                                      WheelState.NO_MORE_BETS)
        if not self.in_progress:
            return False
        if state in (WheelState.TABLE_CLOSED, WheelState.BALL_NOT_DETECTED):
            return True
        if self.config.host_starts and not self._launched:
            return False  # "before a game" and "launching" are the wheel awaiting *u
        if state is WheelState.BEFORE_GAME:
            return not self._reports
        return state is WheelState.BETS_OPEN and self._launched and not self._reports

    def _only_a_launch(self, status: Status) -> bool:
        """Whether a held ``status`` would only be the ball's launch (no fault, no void)."""
        return (status.state in _BALL_RUNNING and not status.warnings & _CRITICAL_FLAGS
                and not self._missed_a_game(status))

    def _missed_a_game(self, status: Status) -> bool:
        """Whether ``status`` shows the wheel finished a game since this one opened that the
        tracker did not see: its "last number" changed outside state 5, or its spin counter
        moved from this game's."""
        return (self.in_progress and not self._reports and not self._host_game_unlaunched
                and (self._last_number_changed(status) or self._spin_moved(status)))

    def _last_number_changed(self, status: Status) -> bool:
        return (self._prior_known and status.state is not WheelState.WINNING_NUMBER
                and status.last_number != self._prior)

    def _spin_moved(self, status: Status) -> bool:
        """Whether ``status`` is of another game than this one by its spin counter. The
        launch of a game whose counter was learnt before it may show the next counter: a
        wheel that counts its games at the launch rather than at state 2 (the guide does
        not say which); further than that, it is another game."""
        if not self.in_progress or self._game_spin is None or status.spin in (
                0, self._game_spin):
            return False
        return not (not self._launched and status.state in _BALL_RUNNING
                    and status.spin == self._game_spin % 256 + 1)

    def _note_spin(self, status: Status) -> None:
        """Learn this game's spin counter from two of its statuses that agree (one could
        have a digit flipped by line noise). A host-started game's counter moves at its
        launch (``*u`` starts the new game): only statuses after it count."""
        if self._game_spin is not None or status.spin == 0:
            return
        if self.config.host_starts and not self._launched:
            return  # the wheel may still show the game before's state 5, or state 1
        if status.spin == self._spin_candidate:
            self._game_spin = status.spin
        else:
            self._spin_candidate = status.spin

    def _take_status(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        if self._missed_a_game(status):
            if self._last_number_changed(status):
                evidence = (f"its last number went from {number_field(self._prior).strip()} "
                            f"to {number_field(status.last_number).strip()}")
            else:
                evidence = (f"its spin counter went from {self._game_spin:03d} to "
                            f"{status.spin:03d}")
            self._lock_bets(now, out)
            self._void(VoidReason.NO_RESULT, f"the wheel finished a game this table did not "
                       f"see ({evidence})", now, out)
            if status.state in _BALL_RUNNING:
                # The ball running now is the wheel's next game, not the voided one's (which
                # has finished): a game no round was opened for, said so like any other.
                self._foreign_launch(status, now, out)
        elif self.in_progress:
            if ((not self._prior_known or self._host_game_unlaunched)
                    and status.state is not WheelState.WINNING_NUMBER):
                # Learnt from two statuses that agree (one may have a digit flipped); until
                # a host-started game's launch, the game before may still be finishing: its
                # number is the one this game's statuses will show.
                if status.last_number == self._prior_candidate:
                    self._prior, self._prior_known = status.last_number, True
                self._prior_candidate = status.last_number
            self._note_spin(status)
        self.last_status = status
        shown = (int(status.state), int(status.warnings))
        if shown != self._shown:
            self._shown = shown
            out.append(WheelStatusChanged(*shown, now))
        flags = status.warnings
        if WarningFlag.HARDWARE_FAULT in flags:
            if not self._hardware_raised:
                self._hardware_raised = True
                self._lock_bets(now, out)
                self._fault(FaultCode.HARDWARE, "warning flag 4", True, now, out)
                if self.in_progress:
                    self._void(VoidReason.FAULT, "sensor, motor or encoder fault", now, out)
        else:
            self._hardware_raised = False
        state = status.state
        if state is WheelState.BEFORE_GAME:
            self._before_game(now, out)
        elif state is WheelState.BETS_OPEN:
            self._bets_open(status, now, out)
        elif state in (WheelState.BALL_IN_RIM, WheelState.NO_MORE_BETS):
            self._ball_running(status, now, out)
        elif state is WheelState.WINNING_NUMBER:
            self._winning_status(status, now, out)
        elif state is WheelState.TABLE_CLOSED:
            self._table_closed(now, out)
        elif state is WheelState.BALL_NOT_DETECTED and self.in_progress:
            self._lock_bets(now, out)
            self._fault(FaultCode.BALL_NOT_DETECTED, "state 7", True, now, out)
            self._void(VoidReason.BALL_NOT_DETECTED, "the wheel reports no ball (state 7)",
                       now, out)

    def _before_game(self, now: float, out: list[TrackerOutput]) -> None:
        self._respin_of = None
        if self._start_pending and self.in_progress:
            self._start_pending = False
            self._start_sent_at = now  # the wheel has its start timeout from the *u itself
            out.append(SendCommand(StartGame(self._start_direction())))
        if not self.in_progress or (self.config.host_starts and not self._launched):
            return  # host-started: the wheel has not acted on *u yet
        if self._launched and self._reports:
            self._accept_reports(now, out)  # the wheel moved on: what it reported stands
        else:
            self._void(VoidReason.ABANDONED, "the wheel went back to 'before a game' "
                       "without a winning number", now, out)

    def _bets_open(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        if self.config.host_starts:
            return  # "launching" after *u; rounds are opened by the host
        if self.in_progress and not self._launched:
            return  # a repeat (betting may have been locked early: the same game still)
        if self.in_progress:
            if self._reports:
                self._accept_reports(now, out)
            else:
                self._void(VoidReason.NO_RESULT, "a new game began before this game's "
                           "number was seen", now, out)
        self._respin_of = None
        self._open(now, out, spin=status.spin)

    def _ball_running(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        if self._reports and self._moved_on(status):
            self._accept_reports(now, out)  # the wheel bears the report out; this launch
            # is its next game, whose "before a game" and "place your bets" were lost
        if not self.in_progress:
            if (self.phase is Phase.VOIDED and self._respin_of is not None
                    and WarningFlag.MISSPIN not in status.warnings):  # not a repeat of the void
                respin_of, self._respin_of = self._respin_of, None
                self._open(now, out, spin=status.spin, respin_of=respin_of)
                self._close(now, out)
            else:
                if self.phase not in (Phase.FOREIGN, Phase.VOIDED):  # a voided game's ball
                    # may still run: only a game that was never opened is foreign
                    self._foreign_launch(status, now, out)
                if self.phase is Phase.FOREIGN:
                    # Not this table's game, but the wheel waits for *R after a misspin
                    # whoever watches it (joined mid-game, or while latched): acknowledge it
                    # once, or the wheel stands still.
                    misspin = WarningFlag.MISSPIN in status.warnings
                    if misspin and not self._foreign_misspin_acked:
                        out.append(SendCommand(AcknowledgeVoid()))
                    self._foreign_misspin_acked = misspin
                return
        if self._awaiting_start:
            return  # not this round's ball (see _awaiting_start)
        if not self._launched and self._game_spin not in (None, status.spin):
            # the next counter (see _spin_moved), or a digit flipped: learnt again from
            # the statuses after the launch
            self._game_spin, self._spin_candidate = None, status.spin
        self._launched = True
        if self._reports:
            # A number was reported, yet the ball is still running: no wheel goes back from
            # "winning number" within a game, so the report was line noise (a flipped state
            # digit making the last game's number look current, or a stray two-digit line).
            # Taken, it would be settled after the confirm window: it is dropped instead.
            dropped = ", ".join(f"{number} ({source})" for number, source in self._reports)
            self._reports = []
            self._fault(FaultCode.LINE_NOISE, f"{dropped} reported while the ball was still "
                        f"running (state {int(status.state)})", False, now, out)
        if status.state is WheelState.NO_MORE_BETS and self.phase is Phase.BETTING:
            self._close(now, out)
        if self._rim_since is None:
            self._rim_since = now
        flags = status.warnings
        if WarningFlag.MISSPIN in flags:
            game = self.game
            self._lock_bets(now, out)
            self._fault(FaultCode.MISSPIN, f"warning flag 2 in state {int(status.state)}",
                        False, now, out)
            self._void(VoidReason.MISSPIN, "the ball ran the same way as the rotor", now, out)
            out.append(SendCommand(AcknowledgeVoid()))
            self._respin_of = game
            return
        if WarningFlag.BALL_NOT_DETECTED in flags:
            if self._ball_missing_since is None:
                self._ball_missing_since = now
            if now >= self._ball_missing_since + self.config.ball_not_detected_grace:
                self._ball_missing(now, out)
                return
        else:
            self._ball_missing_since = None
        if (WarningFlag.LAUNCH_FAILED in flags and status.state is WheelState.BALL_IN_RIM
                and not self._launch_retry_reported
                and now >= self._rim_since + self.config.launch_fail_grace):
            self._launch_retry_reported = True
            self._fault(FaultCode.LAUNCH_RETRY, "warning flag 8 after the launch grace",
                        False, now, out)

    def _foreign_launch(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        """The ball running in a game no round was opened for: watched, never settled."""
        self.phase = Phase.FOREIGN
        self._fault(FaultCode.GAME_NOT_OPENED, f"the wheel launched spin {status.spin:03d} "
                    "with no betting round open", False, now, out)

    def _window_may_settle(self) -> bool:
        """Whether the reports may be taken when ``confirm_window`` has passed without
        another. Not while a status is held (it may be the ball still running, which makes
        the report line noise), nor when the only number reported is the one the wheel
        showed before this game: a state digit flipped to 5 in a status of this game shows
        just that, so it needs a second report or the wheel's next game to bear it out (a
        game that draws the number of the game before waits for the wheel's repeat)."""
        return bool(self._reports) and self._held is None and not (
            self._prior_known and {number for number, _ in self._reports} == {self._prior})

    def _moved_on(self, status: Status) -> bool:
        """Whether a ball-running ``status`` (already borne out by the next one) belongs to
        the wheel's next game although this game's number was reported and not yet taken:
        its "last number" is the reported number, and not this game's prior one. Line noise
        cannot pass for it: a status of this game with its state digit flipped (to 5, making
        a report, or from 5 to 3 or 4) shows either the prior number or this game's own."""
        numbers = {number for number, _ in self._reports}
        return (self.in_progress and self._launched and numbers == {status.last_number}
                and ((self._prior_known and status.last_number != self._prior)
                     or self._spin_moved(status)))

    def _winning_status(self, status: Status, now: float, out: list[TrackerOutput]) -> None:
        number = status.last_number
        if number is None or self._spin_moved(status):
            return  # no number, or another game's state 5 (this game's was never seen)
        self._report(number, "status", now, out, spin=status.spin)

    def _table_closed(self, now: float, out: list[TrackerOutput]) -> None:
        self._respin_of = None
        if not self.in_progress or (self.config.host_starts and not self._launched):
            return  # idle between games; a host start that cannot happen times out
        self._lock_bets(now, out)
        self._fault(FaultCode.WHEEL_IDLE, "state 6 during a game", True, now, out)
        self._void(VoidReason.WHEEL_IDLE, "the wheel dropped to idle (a fault without "
                   "fault reporting)", now, out)
        out.append(SendCommand(SelfTest()))

    def _result_line(self, number: int, now: float, out: list[TrackerOutput]) -> None:
        self._report(number, "line", now, out)

    def _report(self, number: int, source: str, now: float, out: list[TrackerOutput],
                spin: int | None = None) -> None:
        """A winning number reported by a state-5 status or a result line."""
        if self.phase is Phase.COMPLETE and number != self.accepted:
            # Once is line noise (a digit flipped in a repeated status); the same other
            # number twice is the wheel saying it: the supervisor must read the pocket.
            if self._dissent == number:
                self._mismatch(number, self.accepted, now, out)
            else:
                self._dissent = number
                self._fault(FaultCode.LINE_NOISE, f"{number} ({source}) after {self.accepted} "
                            "was accepted: ignored unless repeated", False, now, out)
            return
        if not (self.in_progress and self._launched):
            return  # a stale status or a late repeat: not this game's
        self._lock_bets(now, out)  # a result means betting is over
        if not self._reports:
            self._first_report_at = now
        if spin is not None:
            self._spin = spin
        self._reports.append((number, source))
        # The first number with ``confirmations`` agreeing reports is the game's; one that
        # disagrees with it was outvoted (line noise). Undecided reports wait for the confirm
        # window or the wheel's next game (:meth:`_accept_reports`: a tie is a mismatch).
        if sum(seen == number for seen, _ in self._reports) >= self.config.confirmations:
            self._accept_reports(now, out)

    def _accept_reports(self, now: float, out: list[TrackerOutput]) -> None:
        """Take the number most reports agree on; a tie between different numbers is a
        mismatch (the game is void: the protocol cannot say which one is line noise)."""
        tally = Counter(seen for seen, _ in self._reports).most_common()
        if len(tally) > 1 and tally[0][1] == tally[1][1]:
            self._mismatch(tally[0][0], tally[1][0], now, out)
            return
        number = tally[0][0]
        sources = {source for seen, source in self._reports if seen == number}
        source = "both" if len(sources) == 2 else sources.pop()
        if len(tally) > 1:
            outvoted = ", ".join(str(seen) for seen, _ in tally[1:])
            self._fault(FaultCode.LINE_NOISE, f"{outvoted} reported once, outvoted by {number}",
                        False, now, out)
        self._accept(number, source, now, out, spin=self._spin)

    # ------------------------------------------------------------------ effects

    def _open(self, now: float, out: list[TrackerOutput], *, spin: int | None = None,
              respin_of: int | None = None) -> None:
        settled_before = self.accepted if self.phase is Phase.COMPLETE else None
        self.game += 1
        self.phase = Phase.BETTING
        self.accepted = None
        self._launched = False
        self._reports = []
        self._spin = None
        self._mismatch_reported = False
        self._dissent = None
        self._ball_missing_since = None
        self._rim_since = None
        self._launch_retry_reported = False
        self._start_sent_at = None
        self._start_pending = False
        self._is_respin = respin_of is not None
        last = self.last_status
        self._prior_known = last is not None
        self._prior = last.last_number if last is not None else None
        if settled_before is not None and self.config.host_starts:
            # The host opens the next round as soon as a number is taken, when the last
            # status taken may still show the ball running (the state-5 statuses lost on
            # the line, the number taken from the result line): the number taken is what
            # the wheel shows as its last number from now on. (A wheel that runs games
            # opens a round with a status that shows it.)
            self._prior, self._prior_known = settled_before, True
        self._prior_candidate = self._prior
        self._game_spin = None
        self._spin_candidate = spin if not self.config.host_starts else None
        out.append(RoundOpened(self.game, now, spin, respin_of))

    def _close(self, now: float, out: list[TrackerOutput]) -> None:
        self.phase = Phase.CLOSED
        out.append(NoMoreBets(self.game, now))

    def _accept(self, number: int, source: str, now: float, out: list[TrackerOutput],
                spin: int | None = None) -> None:
        if self.phase is Phase.BETTING:
            self._close(now, out)
        self.phase = Phase.COMPLETE
        self.accepted = number
        self._reports = []
        self._ball_missing_since = None
        out.append(NumberAccepted(self.game, number, source, now, spin))

    def _void(self, reason: VoidReason, detail: str, now: float,
              out: list[TrackerOutput]) -> None:
        if self.phase is Phase.BETTING:
            self._close(now, out)  # bets are locked before the void is reported
        self.phase = Phase.VOIDED
        self._reports = []
        self._ball_missing_since = None
        out.append(GameVoided(self.game, reason, detail, now))

    def _lock_bets(self, now: float, out: list[TrackerOutput]) -> None:
        """Close betting before a fault or void is reported (the guide: "lock bets")."""
        if self.phase is Phase.BETTING:
            self._close(now, out)

    def _ball_missing(self, now: float, out: list[TrackerOutput]) -> None:
        self._lock_bets(now, out)
        grace = self.config.ball_not_detected_grace
        self._fault(FaultCode.BALL_NOT_DETECTED, f"warning flag 1 for {grace:g} s", True,
                    now, out)
        self._void(VoidReason.BALL_NOT_DETECTED, f"ball not detected for {grace:g} s", now, out)

    def _mismatch(self, number: int, other: int | None, now: float,
                  out: list[TrackerOutput]) -> None:
        detail = f"the wheel reported {number} and {other}"
        if self.in_progress:
            self._lock_bets(now, out)
            self._fault(FaultCode.NUMBER_MISMATCH, detail, True, now, out)
            self._void(VoidReason.NUMBER_MISMATCH, detail, now, out)
        elif not self._mismatch_reported:
            self._mismatch_reported = True
            self._fault(FaultCode.NUMBER_MISMATCH, f"{detail} after {self.accepted} was "
                        "accepted", True, now, out)

    def _fault(self, code: FaultCode, detail: str, latch: bool, now: float,
               out: list[TrackerOutput]) -> None:
        game = self.game if self.in_progress or self.phase is Phase.COMPLETE else None
        out.append(WheelFault(code, detail, latch, now, game))

    def _start_direction(self) -> Direction:
        if self.config.direction == "clockwise":
            return Direction.CLOCKWISE
        if self.config.direction == "anticlockwise":
            return Direction.ANTICLOCKWISE
        last = self.last_status.direction if self.last_status else Direction.ANTICLOCKWISE
        return Direction.ANTICLOCKWISE if last is Direction.CLOCKWISE else Direction.CLOCKWISE
