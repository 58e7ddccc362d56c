"""``shoe pit``: the pit and floor view of every table publishing to an MQTT broker.

Subscribes to ``<prefix>/tables/+/{state,events,status}`` and serves a web page (and its JSON)
with every table live: game, dealer prompt, shoe progress, last results, latched
irregularities and their age, tables offline, player-edge alerts. Read-only: it never
publishes and never talks to a table. Runs until SIGINT/SIGTERM. docs/fleet.md.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from shoe_controller.config import LOG_LEVELS
from shoe_controller.fleet.broker import DEFAULT_PREFIX, PROTOCOLS, broker_settings, check_prefix
from shoe_controller.live.startup import StopSignals
from shoe_controller.logs import setup_logging
from shoe_controller.web.binding import http_from_args

log = logging.getLogger("shoe_controller.pit")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", required=True, metavar="URL",
                        help="the MQTT broker: mqtt://HOST[:PORT] or mqtts://[USER@]HOST[:PORT]")
    parser.add_argument("--http", required=True, metavar="[HOST:]PORT",
                        help="serve the pit page and its JSON; PORT alone listens on "
                        "127.0.0.1 (e.g. --http 8090); another host needs TLS")
    parser.add_argument("--prefix", default=DEFAULT_PREFIX, metavar="PREFIX",
                        help="the tables' topic prefix (their mqtt_prefix)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="5",
                        help="MQTT protocol version")
    parser.add_argument("--password-file", type=Path, metavar="FILE",
                        help="file holding the broker password of the URL's user")
    parser.add_argument("--ca-file", type=Path, metavar="FILE",
                        help="CA certificates the broker's certificate is checked against "
                        "(mqtts://; default: the system's)")
    parser.add_argument("--cert-file", type=Path, metavar="FILE",
                        help="client certificate for the broker (PEM; with --key-file)")
    parser.add_argument("--key-file", type=Path, metavar="FILE",
                        help="the client certificate's private key (PEM)")
    parser.add_argument("--http-cert", type=Path, metavar="FILE",
                        help="serve HTTPS with this certificate (PEM; with --http-key)")
    parser.add_argument("--http-key", type=Path, metavar="FILE",
                        help="the HTTPS certificate's private key (PEM)")
    parser.add_argument("--http-host", action="append", metavar="NAME",
                        help="another name browsers reach the page by (repeatable)")
    parser.add_argument("--http-insecure", action="store_true",
                        help="allow a non-loopback --http without TLS")
    parser.add_argument("--log-json", action="store_true",
                        help="logs as one JSON object a line on stderr")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info",
                        help="least severe log lines shown on stderr")


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_json, args.log_level)
    prefix = check_prefix(args.prefix)
    broker = broker_settings(args.broker, password_file=args.password_file,
                             ca_file=args.ca_file, cert_file=args.cert_file,
                             key_file=args.key_file, protocol=args.protocol, option="--broker")
    from shoe_controller.fleet.client import tls_context

    tls_context(broker)
    http = http_from_args(args)
    assert http is not None  # --http is required
    from shoe_controller.fleet.pit_app import PitServer

    stopping = StopSignals().install()
    stop, stopped_by = stopping.event, stopping.names
    with PitServer(broker, prefix, http).start() as pit:
        print(f"pit: {pit.url}", flush=True)
        log.info("pit view on %s, broker %s, prefix %s", pit.url, broker.describe(), prefix,
                 extra={"url": pit.url, "broker": broker.describe(), "prefix": prefix})
        while not stop.wait(0.5):
            pit.check()
    log.info("pit stopped (%s)", stopped_by[0] if stopped_by else "error")
    return 0
