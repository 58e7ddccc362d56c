"""``shoe run --mqtt`` as an operator runs it: real ``shoe sim`` and ``shoe run`` processes, a
real Mosquitto; the last will when ``shoe run`` is SIGKILLed; bad options refused at start."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.e2e.processes import ProcessKeeper, run_args, run_shoe_cli, start_sim

from .rig import Mosquitto, Subscriber


def test_last_will_marks_the_table_offline_when_shoe_run_is_killed(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker").start()
    watcher = Subscriber(broker)
    try:
        with ProcessKeeper(tmp_path) as procs:
            _sim, port = start_sim(procs, "--decks", "1", "--seed", "4", "--pace", "0.05")
            args = run_args(port, tmp_path / "journal.sqlite", "--mqtt", broker.url)
            run = procs.start([*args[:args.index("--shoes")], *args[args.index("--shoes") + 2:]],
                              "run")
            watcher.wait(lambda: any(p["online"] for p in watcher.payloads("table-1", "status")),
                         "the table online", 30)
            watcher.wait(lambda: len(watcher.of("table-1", "events")) >= 3, "events", 30)
            watcher.wait(lambda: watcher.of("table-1", "state"), "a state", 30)
            run.popen.send_signal(signal.SIGKILL)
            run.popen.wait(10)
            watcher.wait(lambda: not watcher.payloads("table-1", "status")[-1]["online"],
                         "the last will", 10)
        will = watcher.of("table-1", "status")[-1]
        assert will.payload["reason"] == "connection lost"
        late = Subscriber(broker)
        # Retained messages of two topics come in either order: wait for both.
        late.wait(lambda: late.of("table-1", "status") and late.of("table-1", "state"),
                  "the retained status and the last state")
        assert late.payloads("table-1", "status")[0]["online"] is False
        late.close()
    finally:
        watcher.close()
        broker.stop()


def test_bad_mqtt_options_stop_shoe_run_before_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    cases = {
        "mqtt://user:secret@127.0.0.1": "password",
        "http://127.0.0.1": "mqtt:// or mqtts://",
        "mqtt://127.0.0.1/floor": "no path",
    }
    for url, words in cases.items():
        done = run_shoe_cli(*run_args(1, journal, "--mqtt", url)[3:])
        assert done.returncode == 1, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not journal.exists()
    done = run_shoe_cli(*run_args(1, journal, "--mqtt", "mqtt://127.0.0.1",
                                  "--mqtt-prefix", "shoe/#")[3:])
    assert done.returncode == 1 and "wildcards" in done.stderr, done.stderr
    assert not journal.exists()
