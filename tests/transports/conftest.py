"""Fixtures: a fresh, connected (host side, device side) pair per test, for every wire kind.

The factories live in ``simulators.transport_pairs`` so that other test areas (the host/shoe
conformance suite) can use the same pairs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulators.transport_pairs import PAIR_KINDS, TransportPair
from simulators.transport_pairs import transport_pair as make_pair

BREAKABLE_KINDS = tuple(kind for kind in PAIR_KINDS if kind != "pty")


@pytest.fixture(params=PAIR_KINDS)
def transport_pair(request: pytest.FixtureRequest) -> Iterator[TransportPair]:
    """Every kind: memory, pty, tcp, usb."""
    with make_pair(request.param) as pair:
        yield pair


@pytest.fixture(params=BREAKABLE_KINDS)
def breakable_transport_pair(request: pytest.FixtureRequest) -> Iterator[TransportPair]:
    """The kinds whose link a test can break and restore: memory, tcp, usb."""
    with make_pair(request.param) as pair:
        assert pair.can_break
        yield pair
