"""An independent, table-driven statement of the blackjack rules, for checking the engine.

Written from seed 003 section 2 and ../shared/RULES.md without importing the engine: it works on
card codes (``"AS"``, ``"TD"``), keeps the rules as literal tables (legal actions for every
two-card hand, the dealer's draw table, a settlement table of every combination), and has its
own small hand arithmetic. Tests compare the engine with these tables, never the engine with
itself.
"""

from __future__ import annotations

# -- card values (2.1.8: 2-10 face value, J/Q/K ten, ace one or eleven) ---------------------

VALUE_OF_RANK = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
                 "T": 10, "J": 10, "Q": 10, "K": 10}


def value(code: str) -> int:
    return VALUE_OF_RANK[code[0]]


def total(codes: list[str]) -> tuple[int, bool]:
    """(total, soft): one ace counts eleven unless that takes the hand over 21."""
    hard = sum(value(c) for c in codes)
    if any(value(c) == 1 for c in codes) and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def natural(codes: list[str], from_split: bool) -> bool:
    """Blackjack: an ace and a ten-value card as the first two cards (not after a split)."""
    return not from_split and len(codes) == 2 and {value(c) for c in codes} == {1, 10}


# -- legal actions at a hand's first decision -------------------------------------------------
# H hit, S stand, D double, P split; "-" = the hand takes no decision (blackjack / 21).
# Rows: first card, columns: second card (by value; J/Q/K as T). Seed 003: double any first two
# cards; split two cards of equal value (any two ten-value cards too), aces included.

FIRST_DECISION = """
      2    3    4    5    6    7    8    9    T    A
2   HSDP  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
3    HSD HSDP  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
4    HSD  HSD HSDP  HSD  HSD  HSD  HSD  HSD  HSD  HSD
5    HSD  HSD  HSD HSDP  HSD  HSD  HSD  HSD  HSD  HSD
6    HSD  HSD  HSD  HSD HSDP  HSD  HSD  HSD  HSD  HSD
7    HSD  HSD  HSD  HSD  HSD HSDP  HSD  HSD  HSD  HSD
8    HSD  HSD  HSD  HSD  HSD  HSD HSDP  HSD  HSD  HSD
9    HSD  HSD  HSD  HSD  HSD  HSD  HSD HSDP  HSD  HSD
T    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD HSDP    -
A    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD    - HSDP
"""

# The first decision of a split hand: rows the split card, columns the card it receives.
# No resplit (2.2.7); double after a split allowed (2.2.6); split aces take one card and no
# decision; ace + ten after a split is 21 (no decision, and not a blackjack).
AFTER_SPLIT = """
      2    3    4    5    6    7    8    9    T    A
2    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
3    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
4    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
5    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
6    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
7    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
8    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
9    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD
T    HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD  HSD    -
A      -    -    -    -    -    -    -    -    -    -
"""

ACTION_WORDS = {"H": "hit", "S": "stand", "D": "double", "P": "split"}
#: Insurance is offered exactly when the up card is an ace (2.2.5); the dealer then checks the
#: hole card for blackjack (2.3.8). No check with any other up card.
INSURANCE_ON = {"A"}
PEEKS_ON = {"A"}


def _grid(text: str) -> dict[tuple[str, str], frozenset[str]]:
    lines = text.strip().splitlines()
    columns = lines[0].split()
    table = {}
    for line in lines[1:]:
        row, *cells = line.split()
        assert len(cells) == len(columns), line
        for column, cell in zip(columns, cells, strict=True):
            table[row, column] = frozenset(
                () if cell == "-" else (ACTION_WORDS[letter] for letter in cell)
            )
    return table


FIRST_DECISION_TABLE = _grid(FIRST_DECISION)
AFTER_SPLIT_TABLE = _grid(AFTER_SPLIT)


def value_label(code: str) -> str:
    v = value(code)
    return "A" if v == 1 else "T" if v == 10 else str(v)


def first_decision(first: str, second: str) -> frozenset[str]:
    return FIRST_DECISION_TABLE[value_label(first), value_label(second)]


def after_split_decision(split_card: str, received: str) -> frozenset[str]:
    return AFTER_SPLIT_TABLE[value_label(split_card), value_label(received)]


def legal_actions(codes: list[str], from_split: bool) -> frozenset[str]:
    """A hand's options at any decision (seed 003 rules): hit and stand while under 21;
    double on two cards (also after a split); split two equal values, once."""
    if total(codes)[0] >= 21:
        return frozenset()
    options = {"hit", "stand"}
    if len(codes) == 2:
        options.add("double")
        if not from_split and value(codes[0]) == value(codes[1]):
            options.add("split")
    return frozenset(options)


# -- the dealer (2.4.4: draws to 17; stands on all 17s, or hits soft 17 where posted) ------------

DEALER_DRAWS = """
# total  hard  soft-S17  soft-H17
   2      H     -         -
   3      H     -         -
   4      H     -         -
   5      H     -         -
   6      H     -         -
   7      H     -         -
   8      H     -         -
   9      H     -         -
  10      H     -         -
  11      H     -         -
  12      H     H         H
  13      H     H         H
  14      H     H         H
  15      H     H         H
  16      H     H         H
  17      S     S         H
  18      S     S         S
  19      S     S         S
  20      S     S         S
  21      S     S         S
"""


def _dealer_table() -> dict[tuple[str, int, bool], bool]:
    table = {}
    for line in DEALER_DRAWS.strip().splitlines():
        if line.lstrip().startswith("#"):
            continue
        number, hard, s17, h17 = line.split()
        table["S17", int(number), False] = table["H17", int(number), False] = hard == "H"
        if s17 != "-":
            table["S17", int(number), True] = s17 == "H"
            table["H17", int(number), True] = h17 == "H"
    return table


DEALER_TABLE = _dealer_table()


def dealer_play(start: list[str], draws: list[str], rule: str) -> list[str]:
    """The dealer's final cards from two starting cards and the cards that follow."""
    hand = list(start)
    following = iter(draws)
    while True:
        points, soft = total(hand)
        if points > 21 or not DEALER_TABLE[rule, points, soft]:
            return hand
        hand.append(next(following))


# -- settlement (2.2.1-2.2.7) -------------------------------------------------------------------


def hand_units(codes: list[str], from_split: bool, doubled: bool, dealer: list[str]) -> float:
    """Net result of one unit on a hand (its original bet): blackjack 3:2, win 1:1, push 0;
    a doubled hand stakes two units, but a dealer blackjack takes only the original one."""
    stake = 2 if doubled else 1
    mine, _ = total(codes)
    theirs, _ = total(dealer)
    dealer_natural = natural(dealer, False)
    if mine > 21:
        return -stake
    if natural(codes, from_split):
        return 0 if dealer_natural else 1.5
    if dealer_natural:
        return -1  # 2.2.6: of a doubled hand only the original bet is taken
    if theirs > 21 or mine > theirs:
        return stake
    return 0 if mine == theirs else -stake


def insurance_units(dealer: list[str]) -> float:
    """Net of one unit of insurance: 2:1 when the hole card makes a blackjack, else lost."""
    return 2 if natural(dealer, False) else -1


# Every combination of blackjack, bust, double, split, insurance and dealer blackjack, for a
# bet of 10 on one seat (insurance 5 when taken). Cards: the seat's two, the dealer's up and
# hole card, then every later card in the order dealt (the seat's, then the dealer's). "net" is
# the seat's whole result including insurance; "behind" the result of 10 bet behind the seat by
# a player who does not follow doubles and splits (first hand only, undoubled, no insurance).
SETTLEMENT = """
# profile  | seat  | up hole | actions              | then           | ins | net  | behind
S17        | AS KD | TH QC   |                      |                | 0   | 15   | 15
S17        | AS KD | AH KC   |                      |                | 0   | 0    | 0
S17        | AS KD | AH KC   |                      |                | 5   | 10   | 0
S17        | AS KD | AH 8C   |                      |                | 5   | 10   | 15
S17        | AS KD | KH AC   |                      |                | 0   | 0    | 0
S17        | AS KD | 6H TC   |                      |                | 0   | 15   | 15
S17        | TS KD | AH KC   |                      |                | 0   | -10  | -10
S17        | TS KD | AH KC   |                      |                | 5   | 0    | -10
S17        | TS KD | AH 8C   | stand                |                | 5   | 5    | 10
S17        | TS KD | TH QC   | stand                |                | 0   | 0    | 0
S17        | TS KD | 6H TC   | stand                | 8D             | 0   | 10   | 10
S17        | TS KD | KH AC   | stand                |                | 0   | -10  | -10
S17        | 5S 6D | KH AC   | hit                  | TD             | 0   | -10  | -10
S17        | 5S 6D | TH QC   | hit                  | TD             | 0   | 10   | 10
S17        | TS 6D | 6H TC   | hit                  | TD             | 0   | -10  | -10
S17        | TS 6D | KH AC   | hit                  | TD             | 0   | -10  | -10
S17        | 5S 6D | 6H TC   | double               | 9D 8C          | 0   | 20   | 10
S17        | 5S 6D | TH QC   | double               | 2D             | 0   | -20  | -10
S17        | 5S 6D | TH QC   | double               | 9D             | 0   | 0    | 0
S17        | 5S 6D | KH AC   | double               | 9D             | 0   | -10  | -10
S17        | TS 2D | 6H TC   | double               | TD             | 0   | -20  | -10
S17        | 5S 6D | AH 8C   | double               | 9D             | 5   | 15   | 10
S17        | 8S 8D | TH QC   | split stand hit      | TC 3H TD       | 0   | 0    | -10
S17        | 8S 8D | 6H TC   | split stand stand    | TC QH 8C       | 0   | 20   | 10
S17        | 8S 8D | KH AC   | split stand stand    | TC QH          | 0   | -20  | -10
S17        | 8S 8D | KH AC   | split double stand   | 3C TH QH       | 0   | -20  | -10
S17        | 8S 8D | TH QC   | split stand double   | TC 3H TD       | 0   | 10   | -10
S17        | AS AD | TH QC   | split                | KC 5H          | 0   | 0    | 10
S17        | AS AD | KH AC   | split                | KC 9H          | 0   | -20  | -10
S17        | AS AD | TH 5C   | split                | KC 9H 6D       | 0   | -10  | 0
S17        | 8S 8D | 6H TC   | split hit stand      | 5C TH TD 8C    | 0   | 0    | -10
S17        | 8S 8D | 6H TC   | split hit hit        | 6C TH 5D KC    | 0   | -20  | -10
S17        | 8S 8D | AH 7C   | split stand stand    | TC KH          | 5   | -5   | 0
S17        | 8S 8D | AH KC   |                      |                | 0   | -10  | -10
S17        | 8S 8D | AH KC   |                      |                | 5   | 0    | -10
S17        | TS 8D | 6H AC   | stand                |                | 0   | 10   | 10
H17        | TS 8D | 6H AC   | stand                | 3D             | 0   | -10  | -10
"""


def settlement_rows() -> list[dict[str, object]]:
    rows = []
    for line in SETTLEMENT.strip().splitlines():
        if line.startswith("#"):
            continue
        profile, seat, dealer, actions, then, ins, net, behind = (
            part.strip() for part in line.split("|")
        )
        rows.append({
            "profile": profile,
            "seat": seat.split(),
            "dealer": dealer.split(),
            "actions": actions.split(),
            "then": then.split(),
            "insurance": int(ins),
            "net": int(net),
            "behind": int(behind),
            "line": line,
        })
    return rows
