"""The live table: a pure state machine fed with journalled inputs, and the shell around it.

``inputs``: what can happen at the table (each one a journal record kind).
``irregularities``: the latched errors and what the dealer is told to do.
``machine``: the game-independent table (shoe life, betting, error latch) on ``transitions``.
``game``: the interface a game (baccarat now, blackjack next) plugs into the table with.
``controller``: the imperative shell: device link, journal, timers, outputs.
"""
