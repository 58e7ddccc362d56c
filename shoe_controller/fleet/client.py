"""A paho-mqtt client configured from :class:`~.broker.BrokerSettings` (both the publisher and
the pit use it): protocol version, login, TLS, reconnection backoff, last will.

paho runs its network loop in a thread of its own (``loop_start``): it connects, reconnects
with backoff after any loss, and never blocks a caller of ``publish``.
"""

from __future__ import annotations

import ssl
from typing import Any

import paho.mqtt.client as mqtt

from shoe_controller.fleet.broker import BrokerSettings, BrokerSettingsError

#: Reconnection backoff: fast after a short blip, at most this long between tries.
RECONNECT_MIN_SECONDS = 0.25
RECONNECT_MAX_SECONDS = 10.0


def new_client(settings: BrokerSettings, client_id: str, *,
               will: tuple[str, bytes] | None = None,
               cls: type[mqtt.Client] = mqtt.Client) -> mqtt.Client:
    """An unconnected client (of paho's class, or ``cls``); ``will``: (topic, payload)
    published retained at QoS 1 by the broker if this client goes away without saying
    goodbye (a crash, SIGKILL, a cable)."""
    protocol = mqtt.MQTTv5 if settings.protocol == "5" else mqtt.MQTTv311
    client = cls(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                 protocol=protocol, clean_session=None if protocol == mqtt.MQTTv5 else True)
    if settings.username is not None:
        client.username_pw_set(settings.username, settings.password)
    context = tls_context(settings)
    if context is not None:
        client.tls_set_context(context)
    if will is not None:
        client.will_set(will[0], will[1], qos=1, retain=True)
    client.reconnect_delay_set(RECONNECT_MIN_SECONDS, RECONNECT_MAX_SECONDS)
    return client


def tls_context(settings: BrokerSettings) -> ssl.SSLContext | None:
    """The TLS context of an ``mqtts://`` broker (TLS 1.2 at least, the broker's certificate
    checked against ``ca_file`` or the system's CAs); raises :class:`BrokerSettingsError` for
    a CA file, certificate or key that is not one."""
    if not settings.tls:
        return None
    try:
        context = ssl.create_default_context(
            cafile=None if settings.ca_file is None else str(settings.ca_file))
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if settings.cert_file is not None:
            context.load_cert_chain(str(settings.cert_file),
                                    None if settings.key_file is None else str(settings.key_file))
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise BrokerSettingsError(f"MQTT TLS files (CA {settings.ca_file}, certificate "
                                  f"{settings.cert_file}, key {settings.key_file}): "
                                  f"{getattr(exc, 'strerror', None) or exc}") from None
    return context


def connect(client: mqtt.Client, settings: BrokerSettings) -> None:
    """Start the client's network thread; it connects (and reconnects) by itself."""
    client.connect_async(settings.host, settings.port, keepalive=settings.keepalive)
    client.loop_start()


def reason_text(reason_code: Any) -> str:
    """A CONNACK/PUBACK reason as words (paho's ReasonCode, or a v3 return code)."""
    return str(getattr(reason_code, "getName", lambda: reason_code)())


def is_failure(reason_code: Any) -> bool:
    failure = getattr(reason_code, "is_failure", None)
    if failure is not None:
        return bool(failure)
    return bool(reason_code)
