"""Broker URLs, login and TLS options, topic names: a table of inputs and what they must give."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.errors import ConfigError
from shoe_controller.fleet.broker import (
    Topics,
    broker_settings,
    check_prefix,
    check_table_id,
    floor_subscriptions,
    split_topic,
)

GOOD = [
    # url, (host, port, tls, username)
    ("mqtt://broker", ("broker", 1883, False, None)),
    ("mqtt://broker:1884", ("broker", 1884, False, None)),
    ("mqtts://broker", ("broker", 8883, True, None)),
    ("MQTTS://table-07@broker.floor.example:8884", ("broker.floor.example", 8884, True,
                                                    "table-07")),
    ("mqtt://[::1]:1883", ("::1", 1883, False, None)),
    ("mqtt://127.0.0.1/", ("127.0.0.1", 1883, False, None)),
    ("mqtt://pit%40floor@h", ("h", 1883, False, "pit@floor")),
]

BAD = [
    ("", "expected mqtt://"),
    ("broker:1883", "mqtt:// or mqtts://"),
    ("tcp://broker", "mqtt:// or mqtts://"),
    ("ws://broker", "mqtt:// or mqtts://"),
    ("mqtt://", "no broker host"),
    ("mqtt://:1883", "no broker host"),
    ("mqtt://h:0", "port 0"),
    ("mqtt://h:65536", "from 1 to 65535"),
    ("mqtt://h:port", "from 1 to 65535"),
    ("mqtt://h/shoe", "no path"),
    ("mqtt://h?x=1", "no path"),
    ("mqtt://h#frag", "no path"),
    ("mqtt://u:secret@h", "password"),
    ("mqtt://h\tx", "expected mqtt://"),
    ("mqtt://h\x00", "expected mqtt://"),
]


@pytest.mark.parametrize(("url", "expected"), GOOD)
def test_good_urls(url: str, expected: tuple[object, ...]) -> None:
    settings = broker_settings(url)
    assert (settings.host, settings.port, settings.tls, settings.username) == expected


@pytest.mark.parametrize(("url", "words"), BAD)
def test_bad_urls_say_why(url: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        broker_settings(url)
    assert words in str(caught.value)
    assert "secret" not in str(caught.value)


def test_password_from_a_file_never_shown(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cret-pw\n", encoding="utf-8")
    settings = broker_settings("mqtts://t-1@h", password_file=secret)
    assert settings.password == "s3cret-pw"
    assert "s3cret" not in repr(settings) and "s3cret" not in settings.describe()
    assert settings.describe() == "mqtts://t-1@h:8883"
    with pytest.raises(ConfigError, match="needs a user"):
        broker_settings("mqtt://h", password_file=secret)
    with pytest.raises(ConfigError, match="cannot read"):
        broker_settings("mqtt://u@h", password_file=tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="one line"):
        broker_settings("mqtt://u@h", password_file=empty)


def test_tls_files(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate", encoding="utf-8")
    with pytest.raises(ConfigError, match="only used with mqtts"):
        broker_settings("mqtt://h", ca_file=ca)
    with pytest.raises(ConfigError, match="go together"):
        broker_settings("mqtts://h", cert_file=ca)
    with pytest.raises(ConfigError, match="cannot read the MQTT CA file"):
        broker_settings("mqtts://h", ca_file=tmp_path / "absent.pem")
    from shoe_controller.fleet.client import tls_context

    with pytest.raises(ConfigError, match="TLS files"):
        tls_context(broker_settings("mqtts://h", ca_file=ca))


@pytest.mark.parametrize(("prefix", "ok"), [
    ("shoe", True), ("casino/floor-2", True), ("a/b/c", True),
    ("", False), ("/shoe", False), ("shoe/", False), ("a//b", False), ("shoe/#", False),
    ("shoe/+/x", False), ("$SYS", False), ("sh\x00oe", False), ("x" * 201, False),
])
def test_prefixes(prefix: str, ok: bool) -> None:
    if ok:
        assert check_prefix(prefix) == prefix
    else:
        with pytest.raises(ConfigError, match="prefix"):
            check_prefix(prefix)


@pytest.mark.parametrize("table_id", ["a/b", "t+", "t#", "", "$t", "t\x01"])
def test_table_ids_that_are_not_one_topic_level(table_id: str) -> None:
    with pytest.raises(ConfigError, match="table_id"):
        check_table_id(table_id)


def test_topics() -> None:
    topics = Topics("casino/floor-2", "t-07")
    assert (topics.state, topics.events, topics.status) == (
        "casino/floor-2/tables/t-07/state", "casino/floor-2/tables/t-07/events",
        "casino/floor-2/tables/t-07/status")
    assert floor_subscriptions("shoe") == ["shoe/tables/+/state", "shoe/tables/+/events",
                                           "shoe/tables/+/status"]
    assert split_topic("shoe", "shoe/tables/t-1/state") == ("t-1", "state")
    for other in ("shoe/tables/t-1/other", "shoe/tables//state", "shoes/tables/t/state",
                  "shoe/tables/t-1", "shoe/x/t-1/state"):
        assert split_topic("shoe", other) is None


@given(st.text(max_size=60))
def test_any_url_is_settings_or_a_config_error(url: str) -> None:
    try:
        settings = broker_settings(url)
    except ConfigError:
        return
    assert settings.host and 0 < settings.port < 65536 and settings.password is None
