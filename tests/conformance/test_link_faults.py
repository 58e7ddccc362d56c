"""A whole 8-deck shoe over a bad line: every card reaches the host exactly once, in order.

Faults in both directions (host->shoe and shoe->host, independent seeds): 1 % of bytes
corrupted, 0.5 % of frames dropped, 0.5 % duplicated, and the connection dropped at a rate of
0.0002 per byte: about every 140 cards shoe->host and every 260 cards host->shoe, so about
every 90 cards in all. Seed 39 is chosen so that, whatever the timing, at least two drops fall
inside each direction's byte stream of one shoe (the drop positions depend on the seed alone).
"""

from __future__ import annotations

import dataclasses

import pytest

from shoe_controller.cards import new_shoe
from simulators.faults import FaultConfig
from simulators.scenarios import LOOPBACK_LINK, deal_shoe

EIGHT_DECKS = new_shoe(8, seed=416)
BAD_LINE = FaultConfig.parse("corrupt=0.01,drop-frame=0.005,dup-frame=0.005,disconnect=0.0002,seed=39")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def check_exactly_once_in_order(run) -> None:  # type: ignore[no-untyped-def]
    assert [m.counter for m in run.cards] == list(range(1, 417))
    assert run.received_cards() == EIGHT_DECKS


@pytest.mark.parametrize("kind", ["memory", "tcp"])
def test_whole_shoe_over_a_bad_line_arrives_exactly_once_in_order(kind: str) -> None:
    run = deal_shoe(kind, EIGHT_DECKS, faults=BAD_LINE, timeout=90)
    check_bad_line_run(run)


@pytest.mark.parametrize("older", ["shoe", "host"])
def test_a_bad_line_between_link_revisions_still_delivers_exactly_once(older: str) -> None:
    """Fast recovery on one end only (the other a revision 1.0 link): the old behaviour."""
    old = dataclasses.replace(LOOPBACK_LINK, fast_recovery=False)
    run = deal_shoe("memory", EIGHT_DECKS, faults=BAD_LINE, timeout=90,
                    link_config=old if older == "host" else LOOPBACK_LINK,
                    shoe_link_config=old if older == "shoe" else LOOPBACK_LINK)
    check_bad_line_run(run)


def check_bad_line_run(run) -> None:  # type: ignore[no-untyped-def]
    check_exactly_once_in_order(run)
    assert run.repeats_filtered == 0  # one host session: the link alone de-duplicates
    for direction in (run.host_to_shoe, run.shoe_to_host):
        assert direction.corrupted_bytes > 0
        assert direction.dropped_frames > 0 or direction.duplicated_frames > 0
        assert direction.disconnects >= 2
    assert run.reconnections >= 4


@pytest.mark.parametrize("kind", ["memory", "tcp"])
def test_host_restarts_mid_shoe_lose_nothing_and_count_nothing_twice(kind: str) -> None:
    run = deal_shoe(kind, EIGHT_DECKS, faults=BAD_LINE, restart_host_after=[150, 300],
                    timeout=90)
    check_exactly_once_in_order(run)
    # The card the old host journalled but never acknowledged came again and was filtered.
    assert run.repeats_filtered >= 2
