"""A stop signal always stops a command's loop, whenever it lands (in a process of its own:
the test installs SIGTERM handlers)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# The main thread loops on the stop event as the commands do (`while not stop.wait(...)`,
# here with no timeout at all, which spends the most time inside the Event's lock); another
# thread sends SIGTERM at a random moment, many times over. Setting the event in the
# handler itself hung the process in its first trials (the handler ran inside the
# main thread's own wait, holding the Event's lock): every trial must end.
SCRIPT = textwrap.dedent("""
    import os, random, signal, sys, threading, time
    from shoe_controller.live.startup import StopSignals

    for trial in range(TRIALS):
        stopping = StopSignals().install()
        seen = threading.Event()

        def send(delay):
            time.sleep(delay)
            os.kill(os.getpid(), signal.SIGTERM)
            if not seen.wait(5):
                print(f"trial {trial}: the loop never saw the signal", flush=True)
                os._exit(1)

        sender = threading.Thread(target=send, args=(random.random() * 0.002,))
        sender.start()
        while not stopping.event.wait(0):
            pass
        seen.set()
        sender.join()
        assert stopping.names == ["SIGTERM"], stopping.names
    print("stopped every time")
""")


@pytest.mark.timeout(120)
def test_a_stop_signal_landing_inside_the_loop_s_own_wait_still_stops_it() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT.replace("TRIALS", "400")],
                          capture_output=True, text=True, timeout=100, check=False)
    assert done.returncode == 0 and "stopped every time" in done.stdout, (
        done.stdout[-2000:] + done.stderr[-2000:])


SCOPED = textwrap.dedent("""
    import os, signal, threading
    from shoe_controller.stop_signal import stopped_by_signals

    before = signal.getsignal(signal.SIGTERM)
    stop = threading.Event()
    with stopped_by_signals(stop):
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5), "SIGTERM did not set the stop event"
    assert signal.getsignal(signal.SIGTERM) is before, "the handler before was not put back"
    print("ok")
""")


def test_the_simulators_stop_signals_set_their_event_and_put_the_handlers_back() -> None:
    """What the simulators' command lines use: inside, SIGTERM sets the stop event; after,
    the handler from before is back."""
    done = subprocess.run([sys.executable, "-c", SCOPED], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
