"""Fixtures: a fresh, connected (host side, device side) pair per test, for every wire kind.

The factories live in ``simulators.transport_pairs`` so that other test areas (the host/shoe
conformance suite) can use the same pairs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulators.transport_pairs import PACED_KINDS, PAIR_KINDS, TransportPair
from simulators.transport_pairs import transport_pair as make_pair

ALL_KINDS = PAIR_KINDS + PACED_KINDS
BREAKABLE_KINDS = tuple(kind for kind in ALL_KINDS if not kind.startswith("pty"))


@pytest.fixture(params=ALL_KINDS)
def transport_pair(request: pytest.FixtureRequest) -> Iterator[TransportPair]:
    """Every kind: memory, pty, tcp, usb, and memory and pty paced at 115200 baud."""
    with make_pair(request.param) as pair:
        yield pair


@pytest.fixture(params=BREAKABLE_KINDS)
def breakable_transport_pair(request: pytest.FixtureRequest) -> Iterator[TransportPair]:
    """The kinds whose link a test can break and restore: memory (also paced), tcp, usb."""
    with make_pair(request.param) as pair:
        assert pair.can_break
        yield pair
