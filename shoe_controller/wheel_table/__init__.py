"""The wheel table: a live roulette table, driven by an automatic wheel instead of a shoe.

What every live table shares lives outside the shoe's own modules and is used here as it is:
the journal (:mod:`shoe_controller.journal`: every input durable before it has effect, the
state the fold of the inputs), the table-system stream and its exactly-once reporting
(:mod:`shoe_controller.reporting`), supervisor access (:mod:`shoe_controller.access`), the
session, link, betting and supervisor inputs (:mod:`shoe_controller.table.inputs`), the run
configuration, logging, metrics' registry and the web server's frame.

What belongs to a shoe stays in :mod:`shoe_controller.table` (cards, the exit lock, burn, cut
card, shoe life, the firmware link) and is not imported here. A wheel brings its own:

* :mod:`.inputs`: the wheel's lines and timer ticks as journal inputs;
* :mod:`.machine`: the pure table (rounds, betting window, latched irregularities, results,
  bias) over :class:`wheel_protocol.GameTracker`;
* :mod:`.connection`: the serial line to the wheel (any pyserial URL), read by a thread;
* :mod:`.controller`: the imperative shell: line in, journal, table, commands out, reporting;
* :mod:`.runtime`: building it all from the run configuration for ``shoe run``.
"""
