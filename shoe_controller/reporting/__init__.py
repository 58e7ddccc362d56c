"""Reporting to the table system (game server): docs/table-protocol/README.md."""
