"""Controller between a card-scanning dealing shoe and a live table's game server."""

__version__ = "0.1.0"
