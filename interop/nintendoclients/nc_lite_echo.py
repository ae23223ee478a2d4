#!/usr/bin/env python3
"""Talk PRUDP Lite over a raw TCP stream with NintendoClients' own client.

Written for gamewire's interop harness (not part of NintendoClients). It
loads NintendoClients' "switch" settings with prudp.transport set to TCP (the
Switch servers also accept raw TCP/TLS, FIELD-NOTES.md; the WebSocket
transport is not part of the local rebuild), connects with prudp.connect to
virtual port --vport, and expects every reliable message it sends on
substream 0 to come back unchanged (gamewire serve --dialect nex-lite --echo).
It sends a few sizes (one above the fragment size), holds the connection for
--hold seconds (NintendoClients PINGs every 5 s), sends again and disconnects.
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
		self.pings = self.acks = self.warnings = 0

	def emit(self, record):
		msg = record.getMessage()
		if "Sending packet" in msg and "type=TYPE_PING" in msg and "NEED_ACK" in msg:
			self.pings += 1
		if "Received packet" in msg and "type=TYPE_PING flags=ACK " in msg:
			self.acks += 1
		if record.levelno >= logging.WARNING:
			self.warnings += 1
			step("warning", message=repr(msg))


async def echo(client, size, tag):
	data = bytes((tag + i) & 0xFF for i in range(size))
	await client.send(data)
	with anyio.fail_after(10):
		back = await client.recv()
	if back != data:
		raise ValueError("echo of %i bytes came back as %i different bytes" % (size, len(back)))
	step("echo", size=size)


async def main(args, counter):
	s = settings.load("switch")
	s.configure(args.access_key, 40000)
	s["prudp.transport"] = s.TRANSPORT_TCP
	async with prudp.connect(s, args.host, args.port, args.vport, 10, None) as client:
		step("connected", minor_version=client.minor_version())
		for i, size in enumerate([5, 1000, s["prudp.fragment_size"] * 2 + 17]):
			await echo(client, size, i)
		if args.hold:
			await anyio.sleep(args.hold)
			await echo(client, 64, 99)
	step("disconnected")


if __name__ == "__main__":
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, required=True)
	parser.add_argument("--vport", type=int, default=1)
	parser.add_argument("--access-key", required=True)
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
	step("counters", pings_sent=counter.pings, ping_acks=counter.acks, warnings=counter.warnings)
	sys.exit(0 if ok and counter.warnings == 0 else 1)
