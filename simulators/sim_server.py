"""The I/O half of ``shoe sim``: open the pty or TCP port, apply wire faults, run the shoe.

Wire faults (``--faults``) are applied at the shoe's end in both directions (what the shoe
sends and what it receives, with seeds ``seed`` and ``seed + 1``). A ``disconnect`` fault
drops the host's TCP connection (the shoe keeps listening on the same port, like a shoe whose
cable was pulled and replugged); a pseudo-terminal cannot be disconnected, so it refuses it.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import threading
from dataclasses import replace

from shoe_controller.cards import Card, new_shoe
from shoe_controller.errors import ConfigError
from shoe_controller.transports.base import ReconnectingTransport, Transport, TransportEvent
from shoe_controller.transports.tcp import TcpServerTransport
from simulators.dealer import VirtualDealer
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport
from simulators.pty import open_pty_pair
from simulators.shoe import SimulatedShoe, run_shoe, simulator_identity
from simulators.shoe_model import ShoeModel

log = logging.getLogger("shoe.sim")


def build_shoe(args: argparse.Namespace, cards: list[Card], dealer: VirtualDealer) -> SimulatedShoe:
    def next_shoe(reload: int) -> list[Card]:
        if args.cards or args.seed is None:
            return cards if args.cards else new_shoe(args.decks)
        return new_shoe(args.decks, args.seed + reload)

    model = ShoeModel(cards, cut_card=args.cut_card or None, misread_rate=args.misread_rate,
                      seed=args.seed)
    return SimulatedShoe(
        model,
        dealer=dealer,
        identity=simulator_identity(args.serial_number),
        next_shoe=next_shoe,
        rng=random.Random(args.seed) if args.seed is not None else None,
        announce_loaded=True,
    )


def _with_faults(device: Transport, faults: FaultConfig) -> Transport:
    if not faults.active:
        return device
    return FaultyTransport(
        device, tx=FaultInjector(faults), rx=FaultInjector(replace(faults, seed=faults.seed + 1))
    )


def _log_transport_event(event: TransportEvent) -> None:
    log.info("connection %s: %s", event.kind.value, event.reason)


def serve(
    args: argparse.Namespace, cards: list[Card], dealer: VirtualDealer, stop: threading.Event
) -> int:
    faults = FaultConfig.parse(args.faults)
    shoe = build_shoe(args, cards, dealer)
    if args.pty:
        if faults.disconnect_rate > 0:
            raise ConfigError("a pseudo-terminal cannot be disconnected: use --tcp for "
                              "'disconnect' faults")
        with open_pty_pair() as pair:
            _announce(f"PTY {pair.slave_path}")
            _run(shoe, _with_faults(pair.device_side, faults), stop, args)
        return 0
    host, port = args.tcp
    server = TcpServerTransport(host, port)
    server.open()
    host, port = server.address
    device: Transport = server
    if faults.disconnect_rate > 0:
        # The injector closes the server to drop the host; re-listen on the same port.
        server.close()
        faulty = _with_faults(TcpServerTransport(host, port), faults)
        device = ReconnectingTransport(lambda: faulty, _log_transport_event)
        device.open()
    else:
        device = _with_faults(server, faults)
    try:
        _announce(f"TCP {host}:{port}")
        _run(shoe, device, stop, args)
    finally:
        device.close()
        server.close()
    return 0


def _announce(line: str) -> None:
    print(line, flush=True)  # the first line on stdout: where to connect


def _run(shoe: SimulatedShoe, device: Transport, stop: threading.Event,
         args: argparse.Namespace) -> None:
    model = shoe.model
    log.info("software shoe: %d cards, cut card %s, dealer pace %gs", len(model.cards),
             model.cut_card, args.pace)
    until = shoe.all_cards_acknowledged if args.exit_when_empty else None
    run_shoe(shoe, device, stop, until=until)
    log.info("software shoe stopped after %d cards", model.counter)
    sys.stdout.flush()
