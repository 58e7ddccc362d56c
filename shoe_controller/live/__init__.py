"""What every live table shares, whatever its device (a card shoe, a roulette wheel).

* :mod:`.inputs`: the journal inputs every table has (the session, the device link, the
  betting window, supervisors' actions) and the base of every input;
* :mod:`.supervision`: a supervisor's action from the PIN check to the table's decision, and
  the table system's reporter as a controller sees it;
* :mod:`.startup`: a table's journal (one controller per journal, its key, the hash chain
  checked before anything is rebuilt from it), the table-system reporter, the services'
  frame.

Also shared, in packages of their own: the journal (:mod:`shoe_controller.journal`), the
table-system stream and client (:mod:`shoe_controller.reporting`), supervisor access
(:mod:`shoe_controller.access`), the run configuration, logging, the web server's binding.

A device's own table is built on these: :mod:`shoe_controller.table` for a card shoe (cards,
exit lock, burn, cut card, shoe life, the firmware link), :mod:`shoe_controller.wheel_table`
for a wheel. Neither imports the other (``tests/wheel_table/test_layout.py`` holds that).
"""
