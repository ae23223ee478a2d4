#!/usr/bin/env python3
"""Exchange echoed messages with an echo server using NintendoClients' client.

Written for gamewire's interop harness (not part of NintendoClients). With
--transport ws it loads NintendoClients' "switch" settings, i.e. PRUDP Lite
over a ws:// WebSocket (anynet's websocket.py; no TLS context is given), with
--transport tcp the same with prudp.transport set to TCP, i.e. Lite over a raw
TCP stream (the Switch servers also accept raw TCP/TLS, docs/peers.md); with
--transport udp it uses --profile over UDP. It connects with prudp.connect to virtual port --vport and expects every
reliable message it sends to come back unchanged on the same substream
(gamewire serve --echo); the --count messages take turns on every substream
the connection negotiated. It sends a few sizes (one above the fragment size), --count
more small messages, holds the connection for --hold seconds
(NintendoClients PINGs every 5 s), sends again and disconnects.
"""

import argparse
import logging
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import prudp, settings  # noqa: E402


def step(name, **fields):
	print("STEP %s %s" % (name, " ".join("%s=%s" % kv for kv in fields.items())), flush=True)


class Counter(logging.Handler):
	def __init__(self):
		super().__init__(logging.DEBUG)
		self.pings = self.acks = self.warnings = self.resends = 0
		self.active = True  # cleared when disconnecting (see nc_client.py)

	def emit(self, record):
		msg = record.getMessage()
		if "Sending packet" in msg and "type=TYPE_PING" in msg and "NEED_ACK" in msg:
			self.pings += 1
		if "Received packet" in msg and "type=TYPE_PING flags=ACK " in msg:
			self.acks += 1
		if "Resending packet" in msg:
			self.resends += 1
		if record.levelno >= logging.WARNING:
			if not self.active:
				step("late-warning", message=repr(msg))
				return
			self.warnings += 1
			step("warning", message=repr(msg))


async def echo(client, size, tag, substream=0):
	data = bytes((tag + i) & 0xFF for i in range(size))
	await client.send(data, substream)
	with anyio.fail_after(10):
		back = await client.recv(substream)
	if back != data:
		raise ValueError("echo of %i bytes came back as %i different bytes" % (size, len(back)))
	step("echo", size=size, substream=substream)


async def main(args, counter):
	if args.transport in ("tcp", "ws"):
		s = settings.load("switch")
		s.configure(args.access_key, 40000)
		if args.transport == "tcp":
			s["prudp.transport"] = s.TRANSPORT_TCP
	else:
		s = settings.load(args.profile)
		s.configure(args.access_key, 0)
	for item in args.set:
		name, value = item.split("=", 1)
		s[name] = value
	async with prudp.connect(s, args.host, args.port, args.vport, 10, None) as client:
		step("connected", minor_version=client.minor_version())
		sizes = [5, 1000, s["prudp.fragment_size"] * 2 + 17]
		if args.sizes:
			sizes = [int(n) for n in args.sizes.split(",")]
		for i, size in enumerate(sizes):
			await echo(client, size, 0 if args.sizes else i)
		for i in range(args.count):
			await echo(client, 100 + i % 200, i, i % (client.max_substream_id + 1))
		if args.hold:
			await anyio.sleep(args.hold)
			await echo(client, 64, 99)
		counter.active = False
	step("disconnected")


if __name__ == "__main__":
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, required=True)
	parser.add_argument("--vport", type=int, default=1)
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--transport", choices=["udp", "tcp", "ws"], default="tcp")
	parser.add_argument("--profile", default="default", help="settings for --transport udp")
	parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
	parser.add_argument("--sizes", default="", help="comma-separated sizes of the first messages, all with tag 0 "+
		"(bytes 0, 1, 2, ...) instead of 5, 1000 and two fragments and a bit")
	parser.add_argument("--count", type=int, default=0, help="more small messages after the first three")
	parser.add_argument("--hold", type=float, default=0)
	parser.add_argument("--debug", action="store_true")
	args = parser.parse_args()
	logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, stream=sys.stderr,
		format="%(asctime)s %(name)s %(levelname)s %(message)s")
	counter = Counter()
	logging.getLogger("nintendo.nex.prudp").setLevel(logging.DEBUG)
	logging.getLogger("nintendo.nex.prudp").addHandler(counter)
	ok = True
	try:
		anyio.run(main, args, counter)
	except BaseException as e:
		ok = False
		step("error", type=type(e).__name__, message=repr(str(e)))
	step("counters", pings_sent=counter.pings, ping_acks=counter.acks, resends=counter.resends, warnings=counter.warnings)
	sys.exit(0 if ok and counter.warnings == 0 else 1)
