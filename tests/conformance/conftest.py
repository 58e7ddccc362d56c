"""The older pairings of link revisions run on the memory and pty wires only (the wire does not
change what a revision does, and the TCP and USB pairs take longest)."""

from __future__ import annotations

import pytest

from .rig import NEWEST

OLDER_PAIRING_KINDS = ("memory", "pty")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        pairing = params.get("link_revisions", NEWEST)
        kind = params.get("kind", "memory")
        (drop if pairing != NEWEST and kind not in OLDER_PAIRING_KINDS else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
