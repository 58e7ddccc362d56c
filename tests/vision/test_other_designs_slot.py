"""The fixed slot camera over deck designs other than ece395's (issue 16): the product is
measured on decks not given here, and ece395 is one deck. The simulated slot camera
(``low_res_slot``, the frames laid out as ece395's photos: 2 per card enrolled, each in
another light, the third read) renders any installed design; these runs are the ones where
a design showed a wrong read (docs/vision.md, "Other decks, simulated")."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.camera_compare import real_plan
from simulators.camera_realism import condition_named, write_matching_folder
from tests.vision.test_real_photos import OV7670, real_set
from vision.bench import holdout_bench
from vision.roi import WHOLE_FRAME


@pytest.mark.slow
@pytest.mark.parametrize(("name", "seed"), [("lattmann", 7), ("guyenne-classic", 2024),
                                            ("orell", 2024), ("atlasnye", 2024)])
def test_other_designs_in_the_slot_are_never_misread(name: str, seed: int, designs,
                                                     card_cache: Path, tmp_path: Path) -> None:
    """Each run once read a number card wrong. The first three one rank off by its look,
    just over the deck's threshold (a Lattmann 9C as TC, a Guyenne TC as 9C, an Orell TH
    as 9H), its pips reading it rightly: a look read its pips contradict is declined. The
    Atlasnye run (after session a's shadow side was softened) a 2S as 3S by its pips, a dip
    in the uneven light between them counted as a third: a mark without ink's edge is no
    pip (vision.region_pips.PIP_EDGE). Measured at the last change: 30, 32, 32 and 38
    read of 52, none wrong."""
    plan = [(card, session) for card, session, _ in real_plan(real_set(OV7670))]
    write_matching_folder(tmp_path, designs[name], condition_named("low_res_slot"), plan,
                          seed=seed, cache=card_cache)
    held = holdout_bench(tmp_path, 2, seed, roi=WHOLE_FRAME, name=name)
    assert held.result.frames == 52
    assert held.result.wrong == 0, held.result.mistakes
    assert held.result.right >= 20  # (what makes the test: cards read, not all declined)
