"""An independent, table-driven statement of the Punto Banco rules, for checking the engine.

Written from the rule sheets without importing the engine: three separate statements of the
Banker's third-card rule (RULES.md's table, seed 001's S/C grid, seed 004's prose) that the tests
first prove identical, then a reference dealer that works on card *values* 0..9.
"""

from __future__ import annotations

# RULES.md / seed 000: Banker total -> Player third-card values on which Banker draws.
RULES_MD_TABLE = """
0 | 0 1 2 3 4 5 6 7 8 9
1 | 0 1 2 3 4 5 6 7 8 9
2 | 0 1 2 3 4 5 6 7 8 9
3 | 0 1 2 3 4 5 6 7 9
4 | 2 3 4 5 6 7
5 | 4 5 6 7
6 | 6 7
7 |
"""

# Seed 001 (Italian): rows Banker total 7..0, columns Player third card 0..9; S = sta, C = carta.
SEED_001_GRID = """
7 S S S S S S S S S S
6 S S S S S S C C S S
5 S S S S C C C C S S
4 S S C C C C C C S S
3 C C C C C C C C S C
2 C C C C C C C C C C
1 C C C C C C C C C C
0 C C C C C C C C C C
"""

# Seed 004 (Romanian prose): Player's third card -> Banker draws with totals 0..N.
SEED_004_PROSE = {2: 4, 3: 4, 4: 5, 5: 5, 6: 6, 7: 6, 8: 2, 1: 3, 9: 3, 0: 3}


def table_from_rules_md() -> dict[tuple[int, int], bool]:
    table = {}
    for line in RULES_MD_TABLE.strip().splitlines():
        total, draws = line.split("|")
        values = {int(v) for v in draws.split()}
        for p3 in range(10):
            table[int(total), p3] = p3 in values
    return table


def table_from_seed_001() -> dict[tuple[int, int], bool]:
    table = {}
    for line in SEED_001_GRID.strip().splitlines():
        total, *marks = line.split()
        assert len(marks) == 10
        for p3, mark in enumerate(marks):
            table[int(total), p3] = mark == "C"
    return table


def table_from_seed_004() -> dict[tuple[int, int], bool]:
    return {(b, p3): b <= top for p3, top in SEED_004_PROSE.items() for b in range(8)}


BANKER_TABLE = table_from_rules_md()


def reference_deal(values: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Deal from card values (0..9) in order; returns the Player's and Banker's values."""
    p = [values[0], values[2]]
    b = [values[1], values[3]]
    pt, bt = sum(p) % 10, sum(b) % 10
    if pt in (8, 9) or bt in (8, 9):
        return tuple(p), tuple(b)
    nxt = 4
    if pt <= 5:
        p3 = values[nxt]
        nxt += 1
        p.append(p3)
        if BANKER_TABLE[bt, p3]:
            b.append(values[nxt])
    elif bt <= 5:
        b.append(values[nxt])
    return tuple(p), tuple(b)


def reference_winner(p: tuple[int, ...], b: tuple[int, ...]) -> str:
    pt, bt = sum(p) % 10, sum(b) % 10
    return "player" if pt > bt else "banker" if bt > pt else "tie"


def brute_force_counts(value_counts: list[int]) -> dict[str, int]:
    """Ordered six-card sequence counts by direct enumeration of the deal tree (slow, simple)."""
    n = sum(value_counts)
    counts = {
        "banker": 0,
        "player": 0,
        "tie": 0,
        "banker_three_card_7": 0,
        "player_three_card_8": 0,
        "banker_wins_with_6": 0,
    }
    c = list(value_counts)

    def tail(used: int) -> int:
        result = 1
        for i in range(used, 6):
            result *= n - i
        return result

    def record(values: tuple[int, ...], weight: int) -> None:
        p, b = reference_deal(values + (0,) * (6 - len(values)))
        assert len(p) + len(b) == len(values)
        winner = reference_winner(p, b)
        w = weight * tail(len(values))
        counts[winner] += w
        if winner == "banker" and len(b) == 3 and sum(b) % 10 == 7:
            counts["banker_three_card_7"] += w
        if winner == "player" and len(p) == 3 and sum(p) % 10 == 8:
            counts["player_three_card_8"] += w
        if winner == "banker" and sum(b) % 10 == 6:
            counts["banker_wins_with_6"] += w

    def needed(values: tuple[int, ...]) -> int:
        if len(values) < 4:
            return 4
        p, b = reference_deal(values + (0,) * (6 - len(values)))
        return len(p) + len(b)

    def walk(values: tuple[int, ...], weight: int) -> None:
        if len(values) >= 4 and needed(values) <= len(values):
            record(values, weight)
            return
        for v in range(10):
            if c[v]:
                c[v] -= 1
                walk(values + (v,), weight * (c[v] + 1))
                c[v] += 1

    walk((), 1)
    return counts
