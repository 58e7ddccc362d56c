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


class JournalDataError(JournalError, ValueError):
    """A record to append cannot be journalled as given (not JSON-serialisable, bad kind)."""
