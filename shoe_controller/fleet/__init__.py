"""The fleet: each controller publishes its table to an MQTT broker, ``shoe pit`` shows them all.

* :mod:`.broker` the broker URL and its TLS and login options, and the topic names (pure).
* :mod:`.state` the retained state payload folded from the table's view and events (pure).
* :mod:`.publisher` the non-blocking publisher beside the controller (a thread, paho-mqtt).
* :mod:`.floor` the pit's model: every table's last state, status and events (pure).
* :mod:`.pit_app` the pit's web page, JSON API and live stream (``shoe pit``).

Payloads and topics: docs/mqtt/README.md; running a floor: docs/fleet.md.
"""
