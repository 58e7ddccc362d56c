import time
from tests.live.rig import *
def test_happy(tmp_path):
    with live_table(tmp_path) as live:
        live.play_to_end()
        m = live.shoe.model
        print(id(m), id(live.shoe.sim.model), len(m.drawn), m.counter)
        print(len(live.shoe.dealt()), type(live.shoe).dealt)
        with live.shoe.sim._lock:
            print(len(m.drawn))
