#!/usr/bin/env python3
"""Log in to a NEX server with NintendoClients' own client and make RMC calls.

Written for gamewire's interop harness (not part of NintendoClients). It needs
a local copy of NintendoClients and anynet on sys.path (NINTENDOCLIENTS_DIR,
see docs/interop.md); it imports them and drives them exactly as
NintendoClients' examples do:

    async with backend.connect(settings, host, port) as be:
        async with be.login(user, password) as client:
            ...

Then it calls Health.PingDaemon (protocol 18, method 1) on the secure
connection, holds the connection open for --hold seconds (NintendoClients
sends a reliable PING every 5 s meanwhile), calls PingDaemon again and
disconnects gracefully. Every step is printed as one "STEP ..." line and the
exit status is 0 only when all steps succeeded.
"""

import argparse
import logging
import os
import sys
import time

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, settings, streams  # noqa: E402

HEALTH_PROTOCOL = 0x12
HEALTH_PING_DAEMON = 1


class PacketCounter(logging.Handler):
	"""Counts the PRUDP packets NintendoClients logs at DEBUG level."""

	def __init__(self):
		super().__init__(logging.DEBUG)
		self.sent_pings = 0
		self.ping_acks = 0
		self.resends = 0
		self.timeouts = 0
		self.warnings = []
		self.late_warnings = []
		# Cleared when the script starts disconnecting: from then on a peer's
		# last packets may meet a port already unbound, which says nothing
		# about the peer.
		self.active = True

	def emit(self, record):
		msg = record.getMessage()
		if "Sending packet" in msg and "type=TYPE_PING" in msg and "NEED_ACK" in msg:
			self.sent_pings += 1
		if "Received packet" in msg and "type=TYPE_PING flags=ACK " in msg:
			self.ping_acks += 1
		if "Resending packet" in msg:
			self.resends += 1
		if "Packet timed out" in msg:
			self.timeouts += 1
		if record.levelno >= logging.WARNING:
			(self.warnings if self.active else self.late_warnings).append(msg)


def step(name, **fields):
	text = " ".join("%s=%s" % (k, v) for k, v in fields.items())
	print("STEP %s %s" % (name, text), flush=True)


async def ping_daemon(client):
	body = await client.request(HEALTH_PROTOCOL, HEALTH_PING_DAEMON, b"")
	stream = streams.StreamIn(body, client.settings)
	value = stream.bool()
	if not stream.eof():
		raise ValueError("PingDaemon response has %i bytes, expected 1" % stream.size())
	return value


async def run(args, counter):
	if args.no_tls:
		# NintendoClients' backend always hands a fresh tls.TLSContext to
		# rmc.connect, so its TCP and WebSocket transports are TLS (wss://)
		# with certificate checks; without a context the same code opens a raw
		# TCP stream or a ws:// WebSocket (anynet's websocket.py), which the
		# Switch servers also accept (docs/peers.md). Only this driver's view
		# of the name changes; no NintendoClients code is edited.
		backend.tls = type("NoTLS", (), {"TLSContext": staticmethod(lambda: None)})
	s = settings.load(args.profile)
	s.configure(args.access_key, args.nex_version)
	for item in args.set:
		name, value = item.split("=", 1)
		s[name] = value

	start = time.monotonic()
	async with backend.connect(s, args.host, args.port) as be:
		step("auth-connected")
		async with be.login(args.user, args.password) as client:
			step("secure-connected", pid=client.pid(), remote=client.remote_address())

			value = await ping_daemon(client)
			step("rmc", call="Health.PingDaemon", result=value)

			if args.hold > 0:
				await anyio.sleep(args.hold)
				value = await ping_daemon(client)
				step("rmc-after-hold", call="Health.PingDaemon", result=value, held=args.hold)
			counter.active = False
		step("disconnected", seconds="%.1f" % (time.monotonic() - start))


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--profile", default="default", help="NintendoClients settings file: default (V1), friends (V0), ...")
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=0)
	parser.add_argument("--user", default="guest")
	parser.add_argument("--password", default="MMQea3n!fsik")
	parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
		help="override one NintendoClients setting (e.g. prudp.version=0)")
	parser.add_argument("--no-tls", action="store_true",
		help="TCP or WebSocket transport without TLS (see run): --profile switch speaks ws://, with --set prudp.transport=1 raw TCP")
	parser.add_argument("--hold", type=float, default=0, help="seconds to keep the secure connection open")
	parser.add_argument("--timeout", type=float, default=60)
	parser.add_argument("--debug", action="store_true", help="log every PRUDP packet to stderr")
	args = parser.parse_args()

	counter = PacketCounter()
	logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, stream=sys.stderr,
		format="%(asctime)s %(name)s %(levelname)s %(message)s")
	logging.getLogger("nintendo.nex.prudp").setLevel(logging.DEBUG)
	logging.getLogger("nintendo.nex.prudp").addHandler(counter)

	ok = True
	try:
		async def guarded():
			with anyio.fail_after(args.timeout):
				await run(args, counter)
		anyio.run(guarded)
	except BaseException as e:  # report, never hide, what went wrong
		ok = False
		step("error", type=type(e).__name__, message=repr(str(e)))
	step("counters", pings_sent=counter.sent_pings, ping_acks=counter.ping_acks, resends=counter.resends,
		timeouts=counter.timeouts, warnings=len(counter.warnings))
	for w in counter.warnings:
		step("warning", message=repr(w))
	for w in counter.late_warnings:
		step("late-warning", message=repr(w))
	sys.exit(0 if ok and counter.timeouts == 0 else 1)


if __name__ == "__main__":
	main()
