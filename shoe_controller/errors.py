"""One exception tree for the whole product (python-can style): catch ``ShoeError`` for all.

Each error mixes in the stdlib exception it resembles, so callers that only know the
standard library (``except ValueError``, ``except TimeoutError``) still catch it.
"""


class ShoeError(Exception):
    """Base of every error this product raises on purpose."""


class ShoeFileError(ShoeError, ValueError):
    """A shoe file (card order) is malformed; the message names the line and the token."""


class CardCodeError(ShoeError, ValueError):
    """A card code such as ``AS`` or ``TD`` is not valid."""


class ConfigError(ShoeError, ValueError):
    """A configuration or profile value is wrong; the message names file, key and reason."""


class TransportError(ShoeError, OSError):
    """The link to the device failed (port vanished, socket closed, USB error)."""


class ShoeTimeoutError(ShoeError, TimeoutError):
    """An operation did not complete before its deadline."""


class JournalError(ShoeError):
    """The journal cannot be opened, read or written (not a journal, newer format, I/O)."""


class JournalNotReady(JournalError):
    """The file is an empty database: no journal yet, or one a controller is creating this
    moment (a reader opening it then sees no tables). Trying again later may succeed."""


class JournalReplayError(JournalError, ValueError):
    """The journal holds a record the table cannot replay."""


class JournalDataError(JournalError, ValueError):
    """A record to append cannot be journalled as given (not JSON-serialisable, bad kind)."""


class ProtocolViolation(ShoeError, ValueError):
    """A table-system message is malformed, unsigned, replayed or out of sequence.

    ``code`` is the protocol's error code (docs/table-protocol/README.md), sent back to the
    peer in an ``error`` message; ``ref`` names the offending message's ``seq`` when known.
    """

    def __init__(self, code: str, detail: str, ref: int | None = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.ref = ref


class TableSystemError(ShoeError):
    """The table-system reporter failed in a way it cannot recover from by reconnecting."""


class SupervisorHeldOffError(ShoeError, PermissionError):
    """Too many wrong PINs: this try was refused without checking the PIN.

    ``retry_after``: seconds until a try from the same client for the same id is checked again.
    """

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
