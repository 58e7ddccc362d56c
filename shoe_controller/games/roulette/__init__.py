"""Live roulette (seed 003 section 1): the single-zero wheel, bets and their validation,
profiles, exact settlement, and the wheel bias monitor (``bias.py``)."""
