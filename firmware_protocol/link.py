"""Reliable, ordered, exactly-once message link over an unreliable byte stream (sans I/O).

The same class runs on the host and in the (simulated) shoe; only the handshake differs by
:class:`Role`. It never touches a port, a clock or a thread: the owner feeds received bytes with
:meth:`Link.receive`, asks for bytes to write with :meth:`Link.data_to_send`, and calls
:meth:`Link.poll` for timer-driven events, each time passing ``now`` (monotonic seconds). So every
behaviour, including timeouts, is reproducible in a test with a simulated clock.

Rules (SPEC.md section 8): sliding window with cumulative acknowledgement; the receiver delivers
in sequence order exactly once, buffering early frames and dropping duplicates by 16-bit
sequence number (serial arithmetic, so wrap-around is seamless); the sender retransmits every
unacknowledged frame when the oldest one times out, with exponential backoff up to a cap;
heartbeats when idle; the link is lost when nothing valid arrives for ``link_timeout``.
Between peers that agree (revisions 1.2 and 1.3, SPEC 8.8 and 8.9), damage is answered by a
Nak at once, the timeout follows the measured round trip, and a lone frame goes with a copy
right behind it, so that a damaged frame costs a frame time instead of a Nak and a resend.

**One ordered output stream** (as h11's ``next_event()``): :meth:`receive` and :meth:`poll`
return :data:`LinkOutput` items, delivered messages and link events alike, in the order they
happened. A refused frame is reported (:class:`ProtocolError` with its ``seq``) at the place its
sequence number has in the stream, so an owner never sees message N+1 before it learns that
message N could not be read.

Acknowledgements for messages returned by :meth:`receive` are only sent by the *next*
:meth:`data_to_send` call, so the host can make what it received durable first: a message is
never acknowledged before its owner had the chance to journal it.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections import deque
from dataclasses import dataclass, fields

from firmware_protocol.codec import (
    DELIMITER,
    MAX_PAYLOAD,
    DamagedBlock,
    Frame,
    FrameDecoder,
    RejectedFrame,
    RejectReason,
    encode_frame,
)
from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    UNSEQUENCED_TYPES,
    Ack,
    Capability,
    DeviceIdentity,
    DeviceInfo,
    ErrorCode,
    ErrorReport,
    Heartbeat,
    HostHello,
    LinkFeature,
    LinkOptions,
    Message,
    MessageType,
    Nak,
)
from firmware_protocol.rtt import RttEstimator

SEQ_MODULO = 1 << 16
_HALF = SEQ_MODULO // 2
MIN_RESEND_WAIT = 0.0002
"""Seconds: the least time after sending a frame before a Nak makes it be sent again (half a
measured round trip otherwise): a scheduler's wake-up, not a line's frame time."""
COPY_WAIT_FACTOR = 1.5
"""Revision 1.3: a Nak for a damaged block waits this many times the measured time from an
original to its copy (a copy of a longer frame takes longer than the one measured)."""
COPY_GAP_GAIN = 0.25
HELLO_FIRST_RETRY = 0.1
"""Revision 1.2 host: seconds before the first repeat of an unanswered HostHello; each repeat
then waits twice as long, up to ``hello_interval``. A hello and its DeviceInfo take 4 ms on the
wire at 115200 baud and 60 ms at 9600: a lost hello no longer costs half a second, and an
absent shoe gets one hello per ``hello_interval`` from 0.7 s on."""
HELD_ACK_LOOK_MIN = 0.0005  # seconds: how soon to look again at an acknowledgement held...
HELD_ACK_LOOK_SHARE = 0.25  # ...for the owner's commit: this share of how long it is held...
HELD_ACK_LOOK_MAX = 0.02  # ...at most this

SHOE_TO_HOST = frozenset(
    {
        MessageType.CARD_DRAWN,
        MessageType.CARD_MISREAD,
        MessageType.SHOE_STATE_CHANGED,
        MessageType.BUTTON_PRESSED,
        MessageType.DEVICE_FAULT,
        MessageType.STATUS_REPORT,
        MessageType.ERROR_REPORT,
    }
)
HOST_TO_SHOE = frozenset(
    {
        MessageType.SET_EXIT_LOCK,
        MessageType.SET_INDICATORS,
        MessageType.STATUS_REQUEST,
        MessageType.SET_CLOCK,
        MessageType.RESET,
        MessageType.SET_STATE,
        MessageType.ERROR_REPORT,
    }
)
_REJECT_CODES = {
    RejectReason.UNSUPPORTED_VERSION: ErrorCode.UNSUPPORTED_VERSION,
    RejectReason.BAD_LENGTH: ErrorCode.BAD_LENGTH,
    RejectReason.UNKNOWN_TYPE: ErrorCode.UNKNOWN_MESSAGE_TYPE,
    RejectReason.BAD_PAYLOAD: ErrorCode.BAD_PAYLOAD,
}


class Role(enum.Enum):
    HOST = "host"
    SHOE = "shoe"


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    """Host: sending HostHello every ``hello_interval``. Shoe: waiting for a HostHello."""
    UP = "up"


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """Timings and limits of the link (SPEC.md section 8.6). Validated on construction."""

    window: int = 8
    """Most reliable frames in flight unacknowledged."""
    retransmit_timeout: float = 0.25
    """Initial time to wait for an acknowledgement before resending (seconds)."""
    retransmit_backoff: float = 2.0
    """Factor applied to the timeout after each retransmission without progress."""
    retransmit_timeout_max: float = 2.0
    max_retransmissions: int = 10
    """Consecutive retransmissions without any progress before the link is declared lost."""
    heartbeat_interval: float = 0.5
    """Send a Heartbeat when nothing else was sent for this long."""
    link_timeout: float = 2.0
    """Declare the link lost when no valid frame arrived from the peer for this long."""
    hello_interval: float = 0.5
    """Host: repeat HostHello this often while connecting. Shoe: rate of NOT_CONNECTED replies."""
    max_queued: int = 4096
    """Most messages waiting (queued plus unacknowledged); :meth:`Link.send` refuses more."""
    fast_recovery: bool = True
    """Revision 1.2 (SPEC 8.8): between peers that both speak it, a receiver that sees damage
    sends a Nak at once and the sender resends what is missing without waiting for its
    timeout; and the timeout follows the measured round trip (RFC 6298). False: revision 1.0
    exactly (what an older peer does)."""
    retransmit_timeout_min: float = 0.002
    """Floor of the adaptive retransmission timeout (seconds). On a serial line the measured
    round trip sets the timeout (about 6 ms at 115200); the floor matters on fast lines (a
    TCP line answers in under a millisecond, and a 10 ms floor made every silent loss cost
    ten round trips)."""
    nak_holdoff: float = 0.001
    """Shortest time between two Naks; before a round trip is measured, also the least time
    after sending a frame before a Nak makes it be sent again (it may still be on its way)."""
    ack_delay: float = 0.001
    """With fast recovery: how long an acknowledgement may wait for a frame to ride on before
    it goes alone (an Ack frame is one more frame for the line to damage). 0: at once."""
    frame_copies: bool = True
    """Revision 1.3 (SPEC 8.9), with fast recovery: between peers that both speak it, a
    reliable frame that goes out alone (nothing else in flight or queued: the sender now waits
    for an answer, and its direction of the line would stay idle) is followed at once by a
    copy. A damaged original then costs one frame time, not a Nak and a resend."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not (isinstance(self.window, int) and 1 <= self.window <= 64):
            problems.append(f"window must be 1..64, got {self.window!r}")
        times_ok = True
        for name in (
            "retransmit_timeout",
            "retransmit_timeout_max",
            "heartbeat_interval",
            "link_timeout",
            "hello_interval",
            "retransmit_timeout_min",
            "nak_holdoff",
        ):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                problems.append(f"{name} must be a positive number of seconds, got {value!r}")
                times_ok = False
        if times_ok:
            if self.retransmit_timeout_max < self.retransmit_timeout:
                problems.append("retransmit_timeout_max must be >= retransmit_timeout")
            if self.retransmit_timeout_min > self.retransmit_timeout_max:
                problems.append("retransmit_timeout_min must be <= retransmit_timeout_max")
            if self.link_timeout < 2 * self.heartbeat_interval:
                problems.append(
                    "link_timeout must be at least 2 x heartbeat_interval "
                    f"({self.link_timeout} < 2 x {self.heartbeat_interval})"
                )
        if not (isinstance(self.retransmit_backoff, int | float) and self.retransmit_backoff >= 1):
            problems.append(f"retransmit_backoff must be >= 1, got {self.retransmit_backoff!r}")
        if not (isinstance(self.max_retransmissions, int) and self.max_retransmissions >= 1):
            problems.append(f"max_retransmissions must be >= 1, got {self.max_retransmissions!r}")
        if not (isinstance(self.ack_delay, int | float) and math.isfinite(self.ack_delay)
                and 0 <= self.ack_delay <= self.retransmit_timeout_min):
            problems.append("ack_delay must be 0 .. retransmit_timeout_min seconds, got "
                            f"{self.ack_delay!r}")
        if not isinstance(self.fast_recovery, bool):
            problems.append(f"fast_recovery must be true or false, got {self.fast_recovery!r}")
        if not isinstance(self.frame_copies, bool):
            problems.append(f"frame_copies must be true or false, got {self.frame_copies!r}")
        if not (isinstance(self.max_queued, int) and self.max_queued >= self.window):
            problems.append(f"max_queued must be an int >= window, got {self.max_queued!r}")
        if problems:
            raise ValueError("invalid LinkConfig: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The handshake completed. ``resumed``: same peer session as before (nothing was reset)."""

    peer_session: int
    peer: DeviceInfo | HostHello
    resumed: bool


@dataclass(frozen=True, slots=True)
class LinkLost:
    """No valid frame for ``link_timeout``, no acknowledgement after the retransmission limit,
    or the shoe reported it has no session. The shoe must lock its exit (SPEC.md 8.7)."""

    reason: str


@dataclass(frozen=True, slots=True)
class PeerRestarted:
    """The peer came back with a new session id: sequence state was reset.

    ``carried_over`` unacknowledged card/state messages will be sent again in the new session;
    ``dropped`` are the unacknowledged messages that are stale after a restart (commands,
    button presses, status reports) and were discarded; the owner decides whether to re-issue.
    ``peer`` is the restarted peer's handshake (DeviceInfo on the host). A restart seen while
    the link stays up comes without a :class:`LinkUp`: this event is the owner's only cue to
    send its state again.
    """

    old_session: int
    new_session: int
    carried_over: int
    dropped: tuple[Message, ...]
    peer: DeviceInfo | HostHello | None = None


@dataclass(frozen=True, slots=True)
class ProtocolError:
    """A frame was refused. ``from_peer``: the peer sent us an ErrorReport; otherwise we
    refused one of the peer's frames (and told it with an ErrorReport).

    ``seq``: the sequence number of a refused *reliable* message of the peer's. That message
    is acknowledged and skipped (SPEC 8.2), so the owner must treat it as lost: the event
    comes at the message's place in the ordered output, before anything sent after it."""

    code: ErrorCode
    detail: str
    from_peer: bool
    seq: int | None = None


LinkEvent = LinkUp | LinkLost | PeerRestarted | ProtocolError
LinkOutput = Message | LinkEvent
"""What :meth:`Link.receive` and :meth:`Link.poll` return, in the order it happened."""


@dataclass(slots=True)
class LinkStats:
    frames_sent: int = 0
    data_frames_sent: int = 0
    retransmissions: int = 0
    ack_frames_sent: int = 0
    heartbeats_sent: int = 0
    hellos_sent: int = 0
    delivered: int = 0
    duplicates: int = 0
    out_of_window: int = 0
    buffered_early: int = 0
    fast_retransmissions: int = 0
    """Frames sent again because a Nak said they were missing (not counted in
    ``retransmissions``, which are the timeout's)."""
    naks_sent: int = 0
    naks_received: int = 0
    copies_sent: int = 0
    """Proactive copies of a lone frame (revision 1.3, SPEC 8.9)."""
    copies_used: int = 0
    """Copies received whose original had not arrived (lost or damaged): each one a recovery
    that took no Nak."""
    ignored: int = 0
    """Valid frames that made no sense in the current state (e.g. data while connecting)."""

    def as_dict(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(slots=True)
class _Outgoing:
    seq: int
    message: Message
    first_sent: float = -math.inf
    last_sent: float = -math.inf
    resent: bool = False
    """Sent more than once: its acknowledgement is no round-trip sample (Karn)."""
    sacked: bool = False
    """A Nak said the peer has it (waiting behind a missing one): not resent on a timeout."""
    resend_at: float = math.inf
    """A Nak said it is missing: resend at this time (at once, or once it has had the time
    to arrive if it was sent only just before)."""
    recoveries_at_send: int = 0
    """The link's recovery count when it was first sent: if it has changed by the time the
    acknowledgement comes, that acknowledgement may have waited for a recovery."""


def initial_sequence(own_session: int, peer_session: int) -> int:
    """First sequence number of a session pair (both directions use it).

    Derived from both session ids so that a late frame from an earlier session lands outside
    the receive window with high probability instead of being taken for a new one.
    """
    return (own_session ^ peer_session ^ (own_session >> 16) ^ (peer_session >> 16)) & 0xFFFF


class Link:
    """One end of the link. See the module docstring and SPEC.md section 8."""

    def __init__(
        self,
        role: Role,
        config: LinkConfig | None = None,
        session_id: int = 0,
        identity: DeviceIdentity | None = None,
    ) -> None:
        """``session_id``: random u32 chosen by the owner at each start (kept out of here so
        the link stays deterministic). ``identity`` is required for the shoe (its DeviceInfo)."""
        if not isinstance(role, Role):
            raise TypeError(f"role must be a Role, got {role!r}")
        if type(session_id) is not int or not 0 <= session_id <= 0xFFFFFFFF:
            raise ValueError(f"session_id must be a u32, got {session_id!r}")
        if role is Role.SHOE and identity is None:
            raise ValueError("a SHOE link needs its DeviceIdentity for the handshake")
        self.role = role
        self.config = config if config is not None else LinkConfig()
        self.session_id = session_id
        self._device_info = (
            self._announce(DeviceInfo.from_identity(identity, session_id))
            if identity is not None else None
        )
        self._device_info_reply = (
            encode_frame(self._device_info) if self._device_info is not None else b""
        )
        self._allowed_types = SHOE_TO_HOST if role is Role.SHOE else HOST_TO_SHOE
        self._decoder = FrameDecoder()
        self._state = LinkState.CONNECTING
        self._peer_session: int | None = None
        self._peer: DeviceInfo | HostHello | None = None
        self._output: deque[LinkOutput] = deque()
        self._replies: list[bytes] = []
        self._next_notice: dict[ErrorCode, float] = {}
        self._queue: deque[Message] = deque()
        self._unacked: deque[_Outgoing] = deque()
        self._tx_next = 0
        self._rtt = RttEstimator(self.config.retransmit_timeout,
                                 self.config.retransmit_timeout_min,
                                 self.config.retransmit_timeout_max)
        self._rto = self.config.retransmit_timeout
        self._rto_deadline: float | None = None
        self._peer_takes_nak = False  # both ends speak FAST_RECOVERY: Naks may be sent
        self._copies = False  # both ends speak FRAME_COPIES: lone frames go with a copy
        self._copy_due = False  # the next block is the copy of the frame just received
        self._copied_at = -math.inf  # when that original arrived
        self._copy_gap: float | None = None  # measured: original to its copy, smoothed
        self._nak_hold = -math.inf  # a Nak for damage waits until then for a copy
        self._nak_wanted = False
        self._next_nak = -math.inf
        self._last_nak: tuple[int, int] | None = None
        # Damaged frames seen and Naks received: an acknowledgement that arrives after one of
        # them may have waited for that recovery, and is no round-trip sample (_on_ack).
        self._recoveries = 0
        self._retries = 0
        self._rx_expected = 0
        self._rx_early: dict[int, Message | ProtocolError] = {}
        self._owner_commits = False
        # With owner_commits: the sequence number of each item handed to the owner and not yet
        # committed, in order (None: one of an earlier peer session, committed all the same).
        self._uncommitted: deque[int | None] = deque()
        self._held_since: float | None = None  # since when an acknowledgement waits for it
        self._ack_pending = False
        self._ack_due = math.inf  # when a pending acknowledgement goes alone at the latest
        self._last_rx = -math.inf
        self._last_tx = -math.inf
        self._next_hello = -math.inf
        self._hello_gap = HELLO_FIRST_RETRY  # revision 1.2: the next hello's wait, doubling
        self._hello_answers = False  # the next hello answers a sign of the shoe (_hello_soon)
        # The handshake's round trip (HostHello -> DeviceInfo at the host, DeviceInfo ->
        # LinkOptions at the shoe) is the first sample, answered by the peer's link, not its
        # application: see _handshake_sample.
        self._handshake_sent_at = -math.inf
        self._handshakes_out = 0
        self._missed_while_connecting = False  # host: the shoe sent frames we could not take
        self._now = -math.inf
        self.stats = LinkStats()

    # ------------------------------------------------------------------ public state

    @property
    def is_up(self) -> bool:
        return self._state is LinkState.UP

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def peer_session(self) -> int | None:
        return self._peer_session

    @property
    def peer(self) -> DeviceInfo | HostHello | None:
        """The peer's last handshake message (DeviceInfo on the host, HostHello on the shoe)."""
        return self._peer

    @property
    def decoder_stats(self) -> dict[str, int]:
        return self._decoder.stats.as_dict()

    @property
    def unacked_count(self) -> int:
        """Messages sent or queued that the peer has not acknowledged yet."""
        return len(self._unacked) + len(self._queue)

    def pending_messages(self) -> tuple[Message, ...]:
        """Every message not yet acknowledged, oldest first (what a shoe must persist)."""
        return tuple(out.message for out in self._unacked) + tuple(self._queue)

    # ------------------------------------------------------------------ the four verbs

    def send(self, message: Message, now: float) -> None:
        """Queue ``message`` for reliable, in-order delivery (sent by :meth:`data_to_send`).

        Raises ValueError for a message this role may not send or that does not fit a frame,
        BufferError when ``max_queued`` messages are already waiting.
        """
        self._now = max(self._now, now)
        if message.TYPE in UNSEQUENCED_TYPES or message.TYPE not in self._allowed_types:
            raise ValueError(f"a {self.role.value} link cannot send {type(message).__name__}")
        if len(message.encode_payload()) > MAX_PAYLOAD:
            raise ValueError(f"{type(message).__name__} payload exceeds {MAX_PAYLOAD} bytes")
        if self.unacked_count >= self.config.max_queued:
            raise BufferError(
                f"link send queue full ({self.config.max_queued} messages unacknowledged)"
            )
        self._queue.append(message)

    def receive(self, data: bytes | bytearray | memoryview, now: float) -> list[LinkOutput]:
        """Feed received bytes; return what they caused, in order: each newly delivered
        message (exactly once, in sequence order) and each link event, interleaved."""
        self._now = max(self._now, now)
        damaged = self._damage()
        for item in self._decoder.feed_blocks(data):
            # Whether this block comes right behind an original marked COPIED (SPEC 8.9).
            copy_due, self._copy_due = self._copy_due, False
            if isinstance(item, DamagedBlock):
                damaged += 1
                self._on_damage(now, copy_due)
            elif isinstance(item, Frame):
                self._on_frame(item, now, copy_due)
            else:
                self._on_rejected(item, now)
        if self._damage() > damaged:  # a run too long for a frame, its delimiter still to come
            self._on_damage(now, False)
        return self._take()

    def _on_damage(self, now: float, copy_due: bool) -> None:
        """A damaged block (COBS, length or CRC) arrived; ``copy_due``: right behind an
        original whose copy was to follow."""
        if self._state is not LinkState.UP:
            self._hello_soon(now)  # maybe the shoe's DeviceInfo
            return
        if copy_due:
            # The copy, damaged: we have its original, there is nothing to ask for (SPEC 8.9).
            # Were it something else (the copy lost, then a frame damaged), a gap or the
            # peer's timer would bring it.
            return
        self._want_nak()  # a frame was damaged on the way: maybe one of ours to get
        self._recoveries += 1
        self._await_recovery(now)
        if now <= self._nak_hold:
            # A second damaged block while the Nak waited for a copy: a copy comes right
            # behind its original, so this was it (or nothing was coming): ask now.
            self._nak_hold = -math.inf
        elif self._copies and self._copy_gap is not None:
            # It may be an original whose copy is on its way: the Nak waits for as long as a
            # copy has taken to follow its original (measured), then goes if nothing came.
            self._nak_hold = now + COPY_WAIT_FACTOR * self._copy_gap

    def _await_recovery(self, now: float) -> None:
        """Revision 1.2: a damaged frame came in, most likely the peer's answer to what we
        have in flight (its acknowledgement rides on every frame it sends). Our Nak asks for
        it again, which takes a round trip: the retransmission timer restarts from now, as
        for a Nak received, instead of firing meanwhile and putting a copy of our frame on
        the line ahead of the answer (on a serial line with 1 % of bytes corrupted, most
        expiries were such: 128 and 112 a shoe at the two ends, 31 and 24 with this rule).
        Bounded: the deadline never moves past two timeouts after the oldest frame's last
        copy, so a line that only ever brings damage still retransmits."""
        if not (self.config.fast_recovery and self._peer_takes_nak and self._unacked):
            return
        if self._rto_deadline is None:
            return
        latest = self._unacked[0].last_sent + 2 * self._rto
        self._rto_deadline = max(self._rto_deadline, min(now + self._rto, latest))

    def _damage(self) -> int:
        stats = self._decoder.stats
        return stats.bad_crc + stats.bad_cobs + stats.too_short + stats.oversize

    def poll(self, now: float) -> list[LinkOutput]:
        """Run the timers; return what happened since the last call (events, in order)."""
        self._now = max(self._now, now)
        if self._state is LinkState.UP:
            if now - self._last_rx >= self.config.link_timeout:
                self._go_down(
                    now, f"no valid frame from the peer for {self.config.link_timeout:g} s"
                )
            elif (
                self._rto_deadline is not None
                and now >= self._rto_deadline
                and self._retries >= self.config.max_retransmissions
                # A measured timeout runs through its retransmissions quickly: an outage
                # shorter than the link timeout is still no lost link (revision 1.2).
                and (not self.config.fast_recovery or not self._unacked
                     or now - self._unacked[0].first_sent >= self.config.link_timeout)
            ):
                self._go_down(now, f"no acknowledgement after {self._retries} retransmissions")
        return self._take()

    def _take(self) -> list[LinkOutput]:
        taken = list(self._output)
        self._output.clear()
        return taken

    def data_to_send(self, now: float) -> bytes:
        """Bytes to write now: handshake, replies, retransmissions, new frames, ack, heartbeat.

        Returns b"" when there is nothing to send. Each non-empty burst starts with a 0x00 so
        that line noise received before it cannot merge with its first frame.
        """
        self._now = max(self._now, now)
        out: list[bytes] = []
        if (
            self.role is Role.HOST
            and self._state is LinkState.CONNECTING
            and now >= self._next_hello
        ):
            out.append(encode_frame(HostHello(PROTOCOL_VERSION, self.session_id)))
            interval = self.config.hello_interval
            if self.config.fast_recovery:
                interval = min(interval, self._hello_gap)
                if not self._hello_answers:  # only an unanswered hello makes the next wait
                    self._hello_gap *= 2
                self._hello_answers = False
            self._next_hello = now + interval
            self.stats.hellos_sent += 1
            self._handshake_sent(now)
        if self._replies:
            if self._device_info_reply in self._replies:
                self._handshake_sent(now)
            out.extend(self._replies)
            self._replies.clear()
        if self._state is LinkState.UP:
            sent_before = len(out)
            self._emit_nak(now, out)
            self._emit_data(now, out)
            carried_ack = len(out) > sent_before
            # An acknowledgement held for the owner's commit waits for it (one sent now
            # would say nothing new); frames that go meanwhile carry what may be acknowledged.
            holding = self._holding_acks()
            if self._ack_pending and not carried_ack and not holding and now >= self._ack_due:
                out.append(encode_frame(Ack(), 0, self._ack_number()))
                self.stats.ack_frames_sent += 1
                carried_ack = True
            if carried_ack and not holding:
                self._ack_pending = False
                self._ack_due = math.inf
            if not out and now - self._last_tx >= self.config.heartbeat_interval:
                time_ms = int(now * 1000) & 0xFFFFFFFF
                out.append(encode_frame(Heartbeat(time_ms), 0, self._ack_number()))
                self.stats.heartbeats_sent += 1
        if not out:
            return b""
        self._last_tx = now
        self.stats.frames_sent += len(out)
        return DELIMITER + b"".join(out)

    def acknowledge_on_commit(self) -> None:
        """From now on a message handed out is acknowledged to the peer only once the owner
        has called :meth:`commit` for it (the host's safety rule: a card is acknowledged only
        once it is journalled, SPEC 8.2). Everything else (its own messages, Naks, link
        options, heartbeats) keeps flowing meanwhile, with the acknowledgement it may give."""
        self._owner_commits = True

    def commit(self, count: int, now: float | None = None) -> None:
        """The owner has made the next ``count`` items it was handed (messages and refused
        reliable frames, in order) durable: they may be acknowledged now (within
        ``ack_delay`` of ``now``, so that the command the owner sends next carries it)."""
        if count < 0 or count > len(self._uncommitted):
            raise ValueError(f"commit of {count} items, {len(self._uncommitted)} uncommitted")
        before = self._ack_number()
        for _ in range(count):
            self._uncommitted.popleft()
        if self._ack_number() != before:
            if now is not None:
                self._now = max(self._now, now)
            self._ack_pending = True
            # what was held is news now: it waits for a frame to ride on from now, not from
            # when the message arrived (that time went to the owner's journal)
            delay = self.config.ack_delay if self.config.fast_recovery else 0.0
            self._ack_due = self._now + delay
        if count:  # still held: counted from now (when it came is not kept), so looked at soon
            self._held_since = self._now if self._holding_acks() else None

    def _ack_number(self) -> int:
        """What our frames acknowledge: everything received, or with :meth:`acknowledge_on_commit`
        everything before the first item the owner has not committed."""
        for seq in self._uncommitted:
            if seq is not None:
                return seq
        return self._rx_expected

    def _holding_acks(self) -> bool:
        return any(seq is not None for seq in self._uncommitted)

    def line_restored(self, now: float) -> None:
        """The byte pipe under the link was made anew (a transport reconnected, a TCP line
        cut and reopened): whatever was in flight on the old one is gone, and the timer has
        backed off while nothing could get through. Resend what is unacknowledged at once,
        owe the peer an acknowledgement, and (revision 1.2) ask it by a Nak for what it had
        in flight to us, instead of waiting for timers that backed off while the line was
        down."""
        self._now = max(self._now, now)
        if self._state is not LinkState.UP:
            self._next_hello = min(self._next_hello, now)  # host: say hello on the new line
            self._hello_gap = HELLO_FIRST_RETRY
            return
        self._rto = self._base_rto()
        self._retries = 0
        if self._unacked:
            for outgoing in self._unacked:
                if not outgoing.sacked:  # as for a Nak: no backoff, no round-trip sample
                    outgoing.resend_at = now
            self._rto_deadline = now + self._rto
        self._ack_pending = True
        self._ack_due = min(self._ack_due, now)
        self._want_nak()
        self._last_nak = None  # whatever was said before went down with the old line

    def acknowledge_now(self) -> None:
        """Let a pending acknowledgement go with the next :meth:`data_to_send` instead of
        waiting for ``ack_delay`` (an owner about to close the line wants it out)."""
        if self._ack_pending:
            self._ack_due = min(self._ack_due, self._now)

    def next_deadline(self) -> float | None:
        """Latest time to call :meth:`poll` and :meth:`data_to_send` again (None: only on input).

        Returns the last ``now`` seen when something is already due (a reply, an ack, a queued
        message with room in the window, or undelivered events).
        """
        config = self.config
        ack_ready = self._ack_pending and not self._holding_acks()
        if self._output or self._replies or (ack_ready and self._ack_due <= self._now):
            return self._now
        resend = min((out.resend_at for out in self._unacked), default=math.inf)
        if self._state is LinkState.UP and resend <= self._now:
            return self._now
        if self._state is not LinkState.UP:
            return self._next_hello if self.role is Role.HOST else None
        if self._queue and len(self._unacked) < config.window:
            return self._now
        deadlines = [self._last_rx + config.link_timeout, self._last_tx + config.heartbeat_interval]
        if self._rto_deadline is not None:
            deadlines.append(self._rto_deadline)
        if self._nak_wanted and not self._holding_acks():
            deadlines.append(max(self._nak_hold, self._now if self._nak_news()
                                 else max(self._now, self._next_nak)))
        if resend < math.inf:
            deadlines.append(resend)
        if ack_ready:
            deadlines.append(self._ack_due)
        elif self._ack_pending:
            # Held for the owner's commit, which may come from another thread while our
            # owner waits on this deadline: look again within an acknowledgement delay, so
            # that an acknowledgement no frame of the owner's carries goes out in time. An
            # owner that holds it long (not yet reading, replaying its journal, a stalled
            # disk) is looked at less often, at most a quarter of its delay later than at
            # once: a thousand wake-ups a second for nothing cost a floor PC's CPU.
            held = 0.0 if self._held_since is None else self._now - self._held_since
            deadlines.append(self._now + min(HELD_ACK_LOOK_MAX, max(
                self.config.ack_delay, HELD_ACK_LOOK_MIN, HELD_ACK_LOOK_SHARE * held)))
        return min(deadlines)

    # ------------------------------------------------------------------ sending internals

    def _emit_nak(self, now: float, out: list[bytes]) -> None:
        """A Nak, if damage was seen. One that says something new (another next expected,
        another frame buffered) goes at once; the same one again only after ``nak_holdoff``,
        so a very bad line cannot turn into a storm of them: a new Nak needs a new frame."""
        if (not (self._nak_wanted and self._peer_takes_nak) or self._holding_acks()
                or now < self._nak_hold):
            # While the owner has not committed a message, a Nak could not say we have it
            # (its `ack` would name it as missing): it waits for the commit, a millisecond.
            return
        state = self._nak_state()
        if state == self._last_nak and now < self._next_nak:
            return
        out.append(encode_frame(Nak(state[1]), 0, state[0]))
        self._nak_wanted = False
        self._last_nak = state
        self._next_nak = now + self.config.nak_holdoff
        self.stats.naks_sent += 1

    def _emit_data(self, now: float, out: list[bytes]) -> None:
        config = self.config
        ack = self._ack_number()
        before = len(out)
        for outgoing in self._unacked:  # what a Nak said is missing: at once, in order
            if outgoing.resend_at <= now:
                outgoing.resend_at = math.inf
                self._transmit(outgoing, now, ack, out)
                self.stats.fast_retransmissions += 1
        if (
            self._unacked
            and self._rto_deadline is not None
            and now >= self._rto_deadline
            and self._retries < config.max_retransmissions
        ):
            for outgoing in self._unacked:
                if not outgoing.sacked:
                    self._transmit(outgoing, now, ack, out)
                    self.stats.retransmissions += 1
            self._retries += 1
            self._rto = min(self._rto * config.retransmit_backoff, config.retransmit_timeout_max)
            self._rto_deadline = now + self._rto
        # A lone new frame (SPEC 8.9): nothing else in flight, queued or resent. Its sender
        # now waits for the peer's answer, which takes at least the frame's own wire time to
        # come, so its direction of the line would stay idle about that long. A copy right
        # behind it fills that time: a damaged or lost original then costs one frame time,
        # where a Nak and a resend take a Nak's wire time, a frame's and the turnarounds
        # (3.5 ms a card at 115200: damaged originals were most of a bad line's extra time).
        # Resends get no copy: on a line so bad that frames need resending, copies of copies
        # would crowd out the answers.
        lone = (self._copies and len(out) == before and not self._unacked
                and len(self._queue) == 1)
        # New frames go out whatever was resent: the window, not the resends, limits them.
        while self._queue and len(self._unacked) < config.window:
            outgoing = _Outgoing(self._tx_next, self._queue.popleft(), now, now,
                                 recoveries_at_send=self._recoveries)
            self._tx_next = (self._tx_next + 1) % SEQ_MODULO
            self._unacked.append(outgoing)
            out.append(encode_frame(outgoing.message, outgoing.seq, ack, reliable=True,
                                    copied=lone))
            self.stats.data_frames_sent += 1
            if lone:
                out.append(encode_frame(outgoing.message, outgoing.seq, ack, reliable=True,
                                        copy=True))
                self.stats.copies_sent += 1
            if self._rto_deadline is None:
                self._rto_deadline = now + self._rto

    @staticmethod
    def _transmit(outgoing: _Outgoing, now: float, ack: int, out: list[bytes]) -> None:
        out.append(encode_frame(outgoing.message, outgoing.seq, ack, reliable=True))
        outgoing.last_sent = now
        outgoing.resent = True
        outgoing.resend_at = math.inf

    def _on_ack(self, ack: int, now: float) -> None:
        if not self._unacked:
            return
        count = (ack - self._unacked[0].seq) % SEQ_MODULO
        if count == 0:
            self._ack_shows_loss(now)
            return
        if count > len(self._unacked):
            return  # an old (or bogus) acknowledgement: nothing new
        freed = [self._unacked.popleft() for _ in range(count)]
        # Karn's rule, and more: if any frame freed here was sent again (or was held by the
        # peer behind a missing one), or if damage was seen or a Nak came since it was sent
        # (the acknowledgement itself may have been damaged and asked for again), this
        # acknowledgement waited for a recovery, not a trip. Counted, such waits made the
        # timeout twice the round trip on a bad line, and the loss of a frame cost that.
        # Until a first sample, though, a trip with a recovery in it is taken all the same: it
        # can only overstate the round trip, and the initial 0.25 s timeout (which RACK cannot
        # shorten without a round trip) made every early loss on a bad line cost a third of a
        # second; a later clean sample at most half of it restarts the estimate (rtt.py).
        clean = freed[-1].recoveries_at_send == self._recoveries
        if (self.config.fast_recovery and not any(f.resent or f.sacked for f in freed)
                and (clean or self._rtt.srtt is None)):
            self._rtt.sample(now - freed[-1].first_sent)
        self._rto = self._base_rto()
        self._retries = 0
        self._rto_deadline = now + self._rto if self._unacked else None

    def _ack_shows_loss(self, now: float) -> None:
        """Revision 1.2, as RACK does (RFC 8985): the peer's frame still asks for our oldest
        frame although it left the peer after that frame should have arrived (more than a
        round trip after we sent it). The copy was lost, or damaged along with the peer's Nak
        for it: the retransmission timer expires now instead of later. It is the timer's
        expiry, with its backoff and its count towards a lost link: after each expiry the
        next one needs twice as long here too, so a peer that answers but never
        acknowledges gets copies at the timer's doubling pace, not at its own frame rate."""
        if not self.config.fast_recovery or self._rto_deadline is None:
            return
        overdue = self._rtt.overdue
        oldest = self._unacked[0]
        if overdue is None or oldest.sacked or oldest.resend_at != math.inf:
            return
        backoff = self._rto / self._base_rto()
        if now - oldest.last_sent >= overdue * backoff:
            self._rto_deadline = min(self._rto_deadline, now)

    def _base_rto(self) -> float:
        """The timeout after progress: measured (RFC 6298) with fast recovery, else fixed."""
        return self._rtt.rto if self.config.fast_recovery else self.config.retransmit_timeout

    def _on_nak(self, ack: int | None, received: int, now: float) -> None:
        """The peer says what it is missing: resend it now, unless it was sent so recently
        that it may still be on its way (then the Nak did not know of it yet)."""
        self.stats.naks_received += 1
        self._recoveries += 1
        if ack is None or not self.config.fast_recovery:
            return
        # The peer saw damage: if it was our acknowledgement, it waits for it. Send it again,
        # at once: the peer is waiting, and nothing else may come for it to ride on.
        self._ack_pending = True
        self._ack_due = self._now
        if self._rx_early:
            # We hold frames behind a gap, so our own Nak is still owed an answer: the damage
            # the peer saw may have been that Nak. Say it again (after nak_holdoff), rather
            # than leave the gap to the peer's timer. A gap is filled by the peer's resend,
            # so two peers cannot keep answering each other's Naks with Naks.
            self._want_nak()
        # The peer is there and answering: the timer goes back to the measured timeout (a
        # backoff grown on a run of damaged frames would make the next loss cost seconds),
        # and restarts for what this Nak has us resend.
        self._rto = self._base_rto()
        if self._unacked:
            self._rto_deadline = now + self._rto
        # Frames before the last one the peer has are missing for sure (the line keeps
        # order): resend them now. A frame after it may still be on its way: resend it only
        # once it has had a one-way trip to arrive (before a round trip is measured, the
        # holdoff stands in for it).
        round_trip = self._rtt.round_trip
        holdoff = (self.config.nak_holdoff if round_trip is None
                   else max(MIN_RESEND_WAIT, round_trip / 2))
        highest = received.bit_length()  # offset of the last frame the peer holds
        for outgoing in self._unacked:
            offset = (outgoing.seq - ack) % SEQ_MODULO
            if offset > 64:
                continue  # beyond what a Nak describes (or an old Nak): leave it to the timer
            if offset >= 1 and (received >> (offset - 1)) & 1:
                outgoing.sacked = True
            elif offset < highest:
                outgoing.resend_at = now
            else:
                outgoing.resend_at = min(outgoing.resend_at,
                                         max(now, outgoing.last_sent + holdoff))

    def _hello_soon(self, now: float) -> None:
        """Host, connecting, revision 1.2: the shoe is there (a damaged frame, or one sent
        as if the link were up), so its answer to our hello was probably damaged. Say hello
        again after ``nak_holdoff`` instead of ``hello_interval`` (a 40-byte DeviceInfo is
        the frame a noisy line damages most; each loss cost half a second)."""
        if self.role is Role.HOST and self.config.fast_recovery:
            soon = max(now, self._handshake_sent_at + self.config.nak_holdoff)
            if soon < self._next_hello:
                self._next_hello = soon
                self._hello_answers = True

    def _handshake_sent(self, now: float) -> None:
        self._handshake_sent_at = now
        self._handshakes_out += 1

    def _handshake_sample(self, now: float) -> None:
        """The handshake's round trip as the first sample (as TCP takes its SYN's).

        The peer's link answers it at once (a shoe's DeviceInfo answers a HostHello; a host's
        LinkOptions goes as soon as its DeviceInfo arrives), so it measures the line, not the
        peer's application. Without it the first sample would be the first message's, whose
        acknowledgement a host holds until its journal has the record: a host still starting
        up (replaying its journal) gave shoes a first sample of 70 ms, and RFC 6298's estimator
        then keeps the timeout at hundreds of milliseconds for the next dozen frames. Taken
        only when a single handshake frame is out (Karn: with two, which one was answered?).
        """
        if self.config.fast_recovery and self._handshakes_out == 1:
            self._rtt.sample(now - self._handshake_sent_at)
            if self._unacked and self._retries == 0 and self._rto_deadline is not None:
                # the timer running was set from the initial guess: the line is known now
                self._rto = self._base_rto()
                self._rto_deadline = min(self._rto_deadline,
                                         self._unacked[0].last_sent + self._rto)
        self._handshakes_out = 2  # one sample per handshake

    def _nak_state(self) -> tuple[int, int]:
        """What a Nak would say: the next frame expected, and which after it are buffered."""
        received = 0
        for offset in range(1, min(self.config.window, 65)):
            if (self._rx_expected + offset) % SEQ_MODULO in self._rx_early:
                received |= 1 << (offset - 1)
        return self._rx_expected, received

    def _nak_news(self) -> bool:
        """Whether a Nak now would say something the last one did not."""
        if self._last_nak is None:
            return True
        ack, received = self._nak_state()
        return ack != self._last_nak[0] or bool(received & ~self._last_nak[1])

    def _ack_soon(self) -> None:
        """An acknowledgement is due: on the next frame out, or alone after ``ack_delay``."""
        delay = self.config.ack_delay if self.config.fast_recovery else 0.0
        self._ack_pending = True
        self._ack_due = min(self._ack_due, self._now + delay)

    def _want_nak(self) -> None:
        if self._peer_takes_nak:
            self._nak_wanted = True

    def _notify(self, code: ErrorCode, detail: str, now: float) -> None:
        """Tell the peer (unsequenced ErrorReport) and the owner (event), at most once per
        ``hello_interval`` per code, so a confused peer cannot make us flood the line."""
        if now < self._next_notice.get(code, -math.inf):
            return
        self._next_notice[code] = now + self.config.hello_interval
        self._replies.append(encode_frame(ErrorReport(code, detail[:200])))
        if code is not ErrorCode.NOT_CONNECTED:
            self._output.append(ProtocolError(code, detail, from_peer=False))

    # ------------------------------------------------------------------ receiving internals

    def _on_frame(self, frame: Frame, now: float, copy_due: bool = False) -> None:
        message = frame.message
        if isinstance(message, HostHello):
            self._on_host_hello(message, now)
            return
        if isinstance(message, DeviceInfo):
            self._on_device_info(message, now)
            return
        reliable = frame.reliable and message.TYPE not in UNSEQUENCED_TYPES
        if self._state is not LinkState.UP:
            self.stats.ignored += 1
            if isinstance(message, ErrorReport) and not reliable:
                self._on_peer_error(message, now)
            elif self.role is Role.SHOE:
                self._notify(ErrorCode.NOT_CONNECTED, "no session: send HostHello", now)
            else:
                # The shoe talks as if the handshake were done: its DeviceInfo was lost.
                self._missed_while_connecting |= reliable
                self._hello_soon(now)
            return
        self._last_rx = now
        ack = frame.ack_number
        if ack is not None:
            self._on_ack(ack, now)
        if reliable:
            copy = frame.is_copy and self._copies
            if copy and copy_due:
                gap = now - self._copied_at  # a copy right behind its original: measured
                self._copy_gap = gap if self._copy_gap is None else (
                    (1 - COPY_GAP_GAIN) * self._copy_gap + COPY_GAP_GAIN * gap)
            if copy and now <= self._nak_hold and not self._rx_early:
                self._nak_wanted = False  # the damage held back was the original: explained
            self._nak_hold = -math.inf
            self._on_sequenced(frame.seq, message, copy=copy)
            if frame.is_copied and self._copies:
                self._copy_due = True
                self._copied_at = now
        elif isinstance(message, Nak):
            self._on_nak(ack, message.received, now)
        elif isinstance(message, ErrorReport):
            self._on_peer_error(message, now)

    def _on_sequenced(self, seq: int, item: Message | ProtocolError,
                      copy: bool = False) -> None:
        """Deliver in order exactly once. ``item`` a ProtocolError: a refused frame that
        still used its sequence number (acknowledged and skipped, never retried forever);
        the owner hears of it at that number's place in the stream. ``copy``: a proactive
        copy (SPEC 8.9) from a peer that agreed to them."""
        distance = (seq - self._rx_expected) % SEQ_MODULO
        if copy:
            if distance >= _HALF or seq in self._rx_early:
                # The original arrived: the copy is what the sender sends behind every lone
                # frame, no sign that our acknowledgement was lost (a duplicate is).
                return
            if distance < self.config.window:
                self.stats.copies_used += 1
        self._ack_soon()
        if distance == 0:
            self._deliver(item)
            self._rx_expected = (self._rx_expected + 1) % SEQ_MODULO
            while self._rx_expected in self._rx_early:
                self._deliver(self._rx_early.pop(self._rx_expected))
                self._rx_expected = (self._rx_expected + 1) % SEQ_MODULO
        elif distance < self.config.window:
            if seq in self._rx_early:
                self.stats.duplicates += 1
            else:
                self._rx_early[seq] = item
                self.stats.buffered_early += 1
            self._want_nak()  # a gap: what is before it was lost or damaged
        elif distance >= _HALF:
            # A copy of what we have: our acknowledgement did not arrive (or the line
            # duplicated the frame). It goes again at once; a Nak would only make the peer
            # resend more copies.
            self.stats.duplicates += 1
            self._ack_due = self._now
        else:
            self.stats.out_of_window += 1
            self._want_nak()  # far ahead: everything before it is missing

    def _deliver(self, item: Message | ProtocolError) -> None:
        if isinstance(item, LinkOptions):  # the link's own: never handed to the application
            if self.role is Role.SHOE:
                self._peer_takes_nak = self.config.fast_recovery and bool(
                    item.features & LinkFeature.FAST_RECOVERY)
                self._copies = (self._peer_takes_nak and self.config.frame_copies
                                and bool(item.features & LinkFeature.FRAME_COPIES))
                self._handshake_sample(self._now)
            return
        self._output.append(item)
        if self._owner_commits:
            self._uncommitted.append(self._rx_expected)  # called before it moves past item
            if self._held_since is None:
                self._held_since = self._now
        if not isinstance(item, ProtocolError):
            self.stats.delivered += 1

    def _on_rejected(self, rejected: RejectedFrame, now: float) -> None:
        code = _REJECT_CODES[rejected.reason]
        if rejected.reason is RejectReason.UNSUPPORTED_VERSION:
            self._notify(code, rejected.detail, now)
            return
        if self._state is not LinkState.UP:
            self.stats.ignored += 1
            return
        self._last_rx = now
        ack = rejected.ack_number
        if ack is not None:  # the CRC is good: its acknowledgement is the peer's
            self._on_ack(ack, now)
        seq = rejected.seq_number
        if seq is None:
            self._notify(code, rejected.detail, now)
            return
        detail = f"seq {seq}: {rejected.detail}"
        distance = (seq - self._rx_expected) % SEQ_MODULO
        if distance < self.config.window and seq not in self._rx_early:
            # Each refused message is reported to the peer once, not each retransmission.
            self._replies.append(encode_frame(ErrorReport(code, detail[:200])))
        self._on_sequenced(seq, ProtocolError(code, detail, from_peer=False, seq=seq))

    def _on_peer_error(self, report: ErrorReport, now: float) -> None:
        if report.code is ErrorCode.NOT_CONNECTED:
            if self.role is Role.HOST and self._state is LinkState.UP:
                self._go_down(now, f"shoe has no session ({report.detail})")
            return
        self._output.append(ProtocolError(report.code, report.detail, from_peer=True))

    def _on_host_hello(self, hello: HostHello, now: float) -> None:
        if self.role is not Role.SHOE or self._device_info is None:
            self.stats.ignored += 1
            return
        if hello.protocol_version != PROTOCOL_VERSION:
            detail = (
                f"host offered protocol version {hello.protocol_version}; "
                f"this shoe speaks {PROTOCOL_VERSION}"
            )
            self._notify(ErrorCode.UNSUPPORTED_VERSION, detail, now)
            return
        self._adopt_peer(hello.session_id, hello, now)
        self._replies.append(self._device_info_reply)

    def _on_device_info(self, info: DeviceInfo, now: float) -> None:
        if self.role is not Role.HOST:
            self.stats.ignored += 1
            return
        if info.protocol_version != PROTOCOL_VERSION:
            detail = (
                f"shoe speaks protocol version {info.protocol_version}; "
                f"this host speaks {PROTOCOL_VERSION}"
            )
            if now >= self._next_notice.get(ErrorCode.UNSUPPORTED_VERSION, -math.inf):
                self._next_notice[ErrorCode.UNSUPPORTED_VERSION] = (
                    now + 10 * self.config.hello_interval
                )
                self._output.append(ProtocolError(ErrorCode.UNSUPPORTED_VERSION, detail, False))
            return
        if self._state is LinkState.UP and info.session_id == self._peer_session:
            self._last_rx = now  # a repeated answer to a repeated hello
            return
        self._handshake_sample(now)
        self._adopt_peer(info.session_id, info, now)

    def _adopt_peer(self, peer_session: int, hello: DeviceInfo | HostHello, now: float) -> None:
        """Handshake completed with ``peer_session``: first contact, resumption or restart."""
        first_contact = self._peer_session is None
        resumed = peer_session == self._peer_session
        if self.role is Role.HOST or not resumed:
            self._handshakes_out = 0  # a new handshake: count the frames that start it
        if first_contact:
            self._peer_session = peer_session
            self._reset_sequences()
        elif not resumed:
            self._restart_with(peer_session, hello)
        self._peer = hello
        self._last_rx = now
        if not resumed:
            self._negotiate(hello)
        if self._missed_while_connecting:
            # what the shoe sent before we were up was dropped: ask for it now (a Nak, where
            # the shoe takes them), not after its timeout, backed off while we were away
            self._missed_while_connecting = False
            self._want_nak()
        if self._state is not LinkState.UP:
            self._state = LinkState.UP
            self._output.append(LinkUp(peer_session, hello, resumed))
            if self._unacked:  # resume: resend what may have been lost at once
                self._rto = self._base_rto()
                self._retries = 0
                self._rto_deadline = now

    def _announce(self, info: DeviceInfo) -> DeviceInfo:
        """The shoe's DeviceInfo says whether its link speaks FAST_RECOVERY (the link's
        business, not the identity's)."""
        capabilities = info.capabilities & ~(Capability.FAST_RECOVERY
                                             | Capability.FRAME_COPIES)
        if self.config.fast_recovery:
            capabilities |= Capability.FAST_RECOVERY
            if self.config.frame_copies:
                capabilities |= Capability.FRAME_COPIES
        return dataclasses.replace(info, capabilities=Capability(capabilities))

    def _negotiate(self, hello: DeviceInfo | HostHello) -> None:
        """A new peer session: agree on fast recovery afresh. The host may send Naks to a shoe
        that announced FAST_RECOVERY and tells it, by LinkOptions as its first reliable
        message, that it takes them; a shoe sends none until it has that message."""
        self._peer_takes_nak = False
        self._copies = False
        if (self.role is Role.HOST and isinstance(hello, DeviceInfo)
                and self.config.fast_recovery
                and hello.capabilities & Capability.FAST_RECOVERY):
            self._peer_takes_nak = True
            features = LinkFeature.FAST_RECOVERY
            if self.config.frame_copies and hello.capabilities & Capability.FRAME_COPIES:
                self._copies = True  # revision 1.3 on both ends (SPEC 8.9)
                features |= LinkFeature.FRAME_COPIES
            self._queue.appendleft(LinkOptions(features))

    def _restart_with(self, peer_session: int, hello: DeviceInfo | HostHello) -> None:
        waiting = [out.message for out in self._unacked] + list(self._queue)
        kept = [message for message in waiting if message.CARRY_OVER]
        dropped = tuple(message for message in waiting if not message.CARRY_OVER)
        old_session = self._peer_session if self._peer_session is not None else 0
        self._unacked.clear()
        self._queue = deque(kept)
        self._peer_session = peer_session
        self._reset_sequences()
        self._output.append(PeerRestarted(old_session, peer_session, len(kept), dropped, hello))

    def _reset_sequences(self) -> None:
        assert self._peer_session is not None
        start = initial_sequence(self.session_id, self._peer_session)
        self._tx_next = start
        self._rx_expected = start
        self._rx_early.clear()
        # The owner still commits what it was handed of the old session; it no longer holds
        # back the new session's acknowledgements.
        self._uncommitted = deque(None for _ in self._uncommitted)
        self._held_since = None
        self._ack_pending = False
        self._ack_due = math.inf
        self._rto = self._base_rto()
        self._rto_deadline = None
        self._retries = 0

    def _go_down(self, now: float, reason: str) -> None:
        """Back to CONNECTING; sessions, sequence state and queues are kept for resumption."""
        self._state = LinkState.CONNECTING
        self._handshakes_out = 0
        self._rto_deadline = None
        self._ack_pending = False
        self._ack_due = math.inf
        self._next_hello = now
        self._hello_gap = HELLO_FIRST_RETRY
        self._output.append(LinkLost(reason))
