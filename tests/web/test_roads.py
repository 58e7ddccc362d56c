"""The scoreboards against examples worked by hand (grid drawn in each comment: columns left
to right, rows top to bottom; B Banker, P Player, r red, b blue)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.web.roads import (
    BLUE,
    RED,
    RoundMark,
    bead_plate,
    big_road,
    derived_marks,
    place,
    roads,
)


def marks(text: str) -> list[RoundMark]:
    return [RoundMark(ch) for ch in text.replace(" ", "")]


def cells(road_cells) -> list[tuple[int, int, str]]:
    return [(c.col, c.row, c.value) for c in road_cells]


def test_bead_plate_fills_columns_of_six_top_to_bottom():
    # B P T B B P | P      -> the 7th round starts the second column
    plate = bead_plate(marks("BPTBBPP"))
    assert cells(plate) == [(0, 0, "B"), (0, 1, "P"), (0, 2, "T"), (0, 3, "B"), (0, 4, "B"),
                            (0, 5, "P"), (1, 0, "P")]


def test_bead_plate_keeps_pairs_and_naturals():
    plate = bead_plate([RoundMark("B", player_pair=True, natural=True), RoundMark("P")])
    assert plate[0].player_pair and plate[0].natural and not plate[0].banker_pair
    assert not plate[1].player_pair


def test_ties_before_the_first_result_are_counted_on_the_first_cell():
    # T T B B P: two ties before anything else. They are counted at the start (leading_ties)
    # and marked on the first Banker/Player cell when it comes:
    #   B(2 ties) P
    #   B
    road = big_road(marks("TTBBP"))
    assert road.leading_ties == 2
    assert [(c.col, c.row, c.value, c.ties) for c in road.cells] == [
        (0, 0, "B", 2), (0, 1, "B", 0), (1, 0, "P", 0)]
    assert road.streaks == (2, 1)


def test_ties_only_so_far_leave_the_road_empty_but_counted():
    road = big_road(marks("TTT"))
    assert road.cells == () and road.leading_ties == 3 and road.streaks == ()


def test_a_tie_is_marked_on_the_previous_cell_and_does_not_break_a_streak():
    # B T T B P T: the two ties go on the first B, the streak B B continues, the last tie on P.
    road = big_road(marks("BTTBPT"))
    assert [(c.col, c.row, c.value, c.ties) for c in road.cells] == [
        (0, 0, "B", 2), (0, 1, "B", 0), (1, 0, "P", 1)]
    assert road.leading_ties == 0


def test_a_long_streak_turns_right_along_the_bottom_row():
    # Eight Bankers: six down the first column, then the "dragon tail" along row 5:
    #   B . .
    #   B . .
    #   B . .
    #   B . .
    #   B . .
    #   B B B
    road = big_road(marks("B" * 8))
    assert cells(road.cells) == [(0, r, "B") for r in range(6)] + [(1, 5, "B"), (2, 5, "B")]
    assert road.streaks == (8,)


def test_a_streak_blocked_by_an_earlier_tail_turns_above_it():
    # B x8 (tail in row 5 under columns 1 and 2), then P x7, then B:
    # the Players start at the top of column 1 (right of where the Bankers started), go down to
    # row 4 (row 5 is the Bankers' tail) and turn right along row 4. The next Banker starts at
    # the top of column 2.
    #   B P B . .
    #   B P . . .
    #   B P . . .
    #   B P . . .
    #   B P P P .
    #   B B B . .
    road = big_road(marks("B" * 8 + "P" * 7 + "B"))
    players = [(c.col, c.row) for c in road.cells if c.value == "P"]
    assert players == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4)]
    assert (road.cells[-1].col, road.cells[-1].row, road.cells[-1].value) == (2, 0, "B")
    assert road.streaks == (8, 7, 1)


def test_place_never_puts_two_marks_in_one_cell():
    # A shoe of alternating long and short streaks exercises tails, blocked columns and turns.
    values = list("B" * 9 + "P" * 8 + "B" * 7 + "P" + "B" * 6 + "P" * 12)
    positions = [(col, row) for col, row, _, _ in place(values)]
    assert len(set(positions)) == len(positions)
    assert all(0 <= row < 6 for _, row in positions)


@given(st.lists(st.sampled_from("BP"), max_size=120))
def test_place_is_a_proper_big_road(values):
    positions = place(values)
    grid = [(col, row) for col, row, _, _ in positions]
    assert len(set(grid)) == len(grid)
    for (col, row, streak, depth), previous in zip(positions[1:], positions):
        if depth > 0:  # within a streak: one step down, or one step right (tail)
            assert (col, row) in ((previous[0], previous[1] + 1), (previous[0] + 1, previous[1]))
        else:  # a new streak starts at the top
            assert row == 0 and col > 0


# Derived roads. The worked example: big road B B P B B B P P, columns (streaks) 2, 1, 3, 2:
#   col:  0 1 2 3
#   row0: B P B P
#   row1: B . B P
#   row2: . . B .
# Entries in order as (column, depth): (0,0) (0,1) (1,0) (2,0) (2,1) (2,2) (3,0) (3,1).
EXAMPLE = "BBPBBBPP"


def test_big_eye_boy_worked_example():
    # k = 1. Column 1 has only one cell, so the road starts at the first cell of column 2.
    # (2,0) new column: len(col 1) = 1 vs len(col 0) = 2, different -> blue
    # (2,1) col 1 ends exactly at depth 0 (has row 0, not row 1) -> blue
    # (2,2) col 1 has neither row 2 nor row 1 (a "straight fall") -> red
    # (3,0) new column: len(col 2) = 3 vs len(col 1) = 1 -> blue
    # (3,1) col 2 has a cell at row 1 -> red
    assert derived_marks([2, 1, 3, 2], 1) == [BLUE, BLUE, RED, BLUE, RED]
    board = roads(marks(EXAMPLE)).derived["big_eye_boy"]
    # placed like a big road: b b | r | b | r
    assert cells(board) == [(0, 0, BLUE), (0, 1, BLUE), (1, 0, RED), (2, 0, BLUE), (3, 0, RED)]


def test_small_road_worked_example():
    # k = 2. Column 2 has a second cell, so the road starts at (2,1).
    # (2,1) col 0 has a cell at row 1 -> red
    # (2,2) col 0 ends exactly at depth 1 -> blue
    # (3,0) new column: len(col 2) = 3 vs len(col 0) = 2 -> blue
    # (3,1) col 1 ends exactly at depth 0 -> blue
    assert derived_marks([2, 1, 3, 2], 2) == [RED, BLUE, BLUE, BLUE]
    board = roads(marks(EXAMPLE)).derived["small_road"]
    assert cells(board) == [(0, 0, RED), (1, 0, BLUE), (1, 1, BLUE), (1, 2, BLUE)]


def test_cockroach_pig_worked_example():
    # k = 3. Column 3 has a second cell, so the road starts at (3,1):
    # (3,1) col 0 has a cell at row 1 -> red. Nothing before it.
    assert derived_marks([2, 1, 3, 2], 3) == [RED]
    assert cells(roads(marks(EXAMPLE)).derived["cockroach_pig"]) == [(0, 0, RED)]


def test_derived_roads_start_at_their_documented_cells():
    # Each road needs k + 1 columns, or k columns with a second cell in column k.
    # Big eye boy: nothing until the second cell of column 1 ...
    assert derived_marks([1], 1) == [] and derived_marks([1, 1], 1) == []
    assert len(derived_marks([1, 2], 1)) == 1  # ... (1,1) is its first entry
    assert len(derived_marks([1, 1, 1], 1)) == 1  # or (2,0) when column 1 has one cell
    # Small road: (2,1) or (3,0).
    assert derived_marks([3, 3], 2) == [] and derived_marks([3, 3, 1], 2) == []
    assert len(derived_marks([3, 3, 2], 2)) == 1 and len(derived_marks([1, 1, 1, 1], 2)) == 1
    # Cockroach pig: (3,1) or (4,0).
    assert derived_marks([1, 1, 1, 1], 3) == []
    assert len(derived_marks([1, 1, 1, 2], 3)) == 1 and len(derived_marks([1] * 5, 3)) == 1


def test_a_chopping_shoe_is_all_red_and_a_streak_after_chops_turns_blue():
    # B P B P B P: every column one long, each new column as long as the one k back -> red.
    assert set(derived_marks([1] * 6, 1)) == {RED}
    # B P B P B B: the last B goes down column 4; column 3 ends exactly at depth 0 -> blue.
    assert derived_marks([1, 1, 1, 1, 2], 1)[-1] == BLUE


def test_ties_do_not_enter_the_derived_roads():
    with_ties = roads(marks("BTBPTTBBBPP"))
    without = roads(marks("BBPBBBPP"))
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        assert cells(with_ties.derived[name]) == cells(without.derived[name])


def test_roads_document_is_json_ready():
    doc = roads(marks("TBPPB")).to_dict()
    assert doc["rows"] == 6 and doc["big_road"]["leading_ties"] == 1
    assert [c["value"] for c in doc["bead_plate"]] == list("TBPPB")
    assert set(doc) == {"rows", "bead_plate", "big_road", "big_eye_boy", "small_road",
                        "cockroach_pig"}
