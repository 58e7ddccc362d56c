"""mqtts:// for real: Mosquitto with a TLS listener that requires client certificates (their
common name is the user, the floor ACL applies), certificates made by ``openssl`` for the test;
a table publishes with its certificate, ``shoe pit`` reads with its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from shoe_controller.fleet.broker import Topics, broker_settings
from shoe_controller.fleet.publisher import MqttPublisher
from simulators.mosquitto import Mosquitto
from tests.e2e.processes import ProcessKeeper, shoe_command

from .rig import PIT_USER, fleet_table, floor_acl, wait_for


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def issue(directory: Path, name: str, *, ip: bool = False) -> tuple[Path, Path]:
    """A key and a certificate for ``name`` signed by the test CA in ``directory``."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
            cwd=directory)
    extensions = directory / f"{name}.ext"
    extensions.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n" if ip else
                          "extendedKeyUsage=clientAuth\n", encoding="utf-8")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", "-extfile", str(extensions),
            cwd=directory)
    return directory / f"{name}.pem", directory / f"{name}.key"


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path / "pki"
    directory.mkdir()
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=floor test CA", cwd=directory)
    return directory


def test_tables_and_the_pit_over_tls_with_client_certificates(tmp_path: Path,
                                                              pki: Path) -> None:
    server = issue(pki, "broker", ip=True)
    table_cert, pit_cert = issue(pki, "t-01"), issue(pki, PIT_USER)
    broker = Mosquitto(tmp_path / "broker", tls=(pki / "ca.pem", *server),
                       acl=floor_acl()).start()
    try:
        with ProcessKeeper(tmp_path) as procs:
            pit = procs.start(shoe_command(
                "pit", "--broker", broker.url, "--ca-file", str(pki / "ca.pem"),
                "--cert-file", str(pit_cert[0]), "--key-file", str(pit_cert[1]),
                "--http", "0", "--log-level", "warning"), "pit")
            url = pit.first_line(20).split()[1]
            settings = broker_settings(broker.url, ca_file=pki / "ca.pem",
                                       cert_file=table_cert[0], key_file=table_cert[1])
            # A client without a certificate does not get in.
            stranger = MqttPublisher(broker_settings(broker.url, ca_file=pki / "ca.pem"),
                                     Topics("shoe", "t-09")).start()
            with fleet_table(tmp_path, settings, "t-01", seed=2, wait_connected=True) as table:
                wait_for(lambda: table.controller.shoes_finished, "the shoe dealt", 60)

            def finished_at_the_pit() -> bool:
                with urllib.request.urlopen(url + "api/floor", timeout=5) as response:
                    tiles = {t["table_id"]: t for t in json.loads(response.read())["tables"]}
                return "t-01" in tiles and bool(tiles["t-01"]["shoe"]["finished"])
            wait_for(finished_at_the_pit, "the table's last state at the pit over TLS", 20)
            time.sleep(0.2)
            assert not stranger.connected and stranger.stats.connections == 0
            stranger.close()
            assert pit.alive(), pit.stderr()
    finally:
        broker.stop()
