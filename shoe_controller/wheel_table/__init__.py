"""The wheel table: a live roulette table, driven by an automatic wheel instead of a shoe.

What every live table shares is :mod:`shoe_controller.live` (inputs, supervision, start-up),
the journal, the table-system reporting, supervisor access, the run configuration and the web
server's frame; the wheel table uses them as they are. What belongs to a shoe stays in
:mod:`shoe_controller.table` (cards, the exit lock, burn, cut card, shoe life) and the firmware
link: none of it is imported here (``tests/wheel_table/test_layout.py``).

A wheel brings its own:

* :mod:`.inputs`: the wheel's lines and timer ticks as journal inputs;
* :mod:`.machine`: the pure table (rounds, betting window, latched irregularities, results,
  bias) over :class:`wheel_protocol.GameTracker`;
* :mod:`.connection`: the serial line to the wheel (any pyserial URL), read by a thread;
* :mod:`.controller`: the imperative shell: line in, journal, table, commands out, reporting;
* :mod:`.runtime`: building it all from the run configuration for ``shoe run``.
"""
