#!/usr/bin/env python3
"""Run NintendoClients' own PRUDP/RMC server classes as a small NEX server.

Written for gamewire's interop harness (not part of NintendoClients). It needs
a local copy of NintendoClients and anynet on sys.path (NINTENDOCLIENTS_DIR,
see docs/interop.md). NintendoClients ships the server machinery (prudp.serve,
rmc.serve_on_transport, the generated AuthenticationServer, kerberos tickets)
but no ready-made game server, so this script fills in what a game server
does, as NintendoClients' own tests do: Login and RequestTicket issue tickets
for the users below, the secure server (with the Quazal Rendez-Vous key, so
NintendoClients itself checks the ticket in the CONNECT) answers
SecureConnection.Register and Health.PingDaemon.

It prints "READY auth=PORT secure=PORT" once both servers listen on
127.0.0.1, one "STEP ..." line per handled call and per PING sent, acknowledged or
received, and "STEP warning ..." for
every warning NintendoClients' PRUDP layer logs (bad packets, timeouts). It
stops when its standard input is closed.
"""

import argparse
import logging
import os
import secrets
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import authentication, common, kerberos, prudp, rmc, settings  # noqa: E402

SECURE_PID = 2
SECURE_PASSWORD = "nc-secure-password"


class WarningPrinter(logging.Handler):
	def __init__(self):
		super().__init__(logging.DEBUG)

	def emit(self, record):
		msg = record.getMessage()
		if record.levelno >= logging.WARNING:
			print("STEP warning logger=%s message=%r" % (record.name, msg), flush=True)
		elif "Received packet" in msg and "type=TYPE_PING" in msg and "NEED_ACK" in msg:
			print("STEP ping-received", flush=True)
		elif "Sending packet" in msg and "type=TYPE_PING" in msg and "NEED_ACK" in msg:
			print("STEP ping-sent", flush=True)
		elif "Received packet" in msg and "type=TYPE_PING flags=ACK " in msg:
			print("STEP ping-acked", flush=True)
		elif "Resending packet" in msg:
			print("STEP resend message=%r" % msg, flush=True)


class AuthServer(authentication.AuthenticationServer):
	def __init__(self, settings, users, secure_key, secure_url):
		super().__init__()
		self.settings = settings
		self.users = users
		self.secure_key = secure_key
		self.secure_url = secure_url
		self.derivation = kerberos.KeyDerivationOld(65000, 1024)

	def ticket(self, pid, target):
		user_key = self.derivation.derive_key(self.users[pid][1].encode(), pid)
		session_key = secrets.token_bytes(self.settings["kerberos.key_size"])

		internal = kerberos.ServerTicket()
		internal.timestamp = common.DateTime.now()
		internal.source = pid
		internal.session_key = session_key

		ticket = kerberos.ClientTicket()
		ticket.session_key = session_key
		ticket.target = target
		ticket.internal = internal.encrypt(self.secure_key, self.settings)
		return ticket.encrypt(user_key, self.settings)

	def find(self, username):
		for pid, (name, password) in self.users.items():
			if username in (name, str(pid)):
				return pid
		return None

	async def login(self, client, username):
		print("STEP login user=%s" % username, flush=True)
		response = rmc.RMCResponse()
		pid = self.find(username)
		if pid is None:
			response.result = common.Result.error("RendezVous::InvalidUsername")
			response.pid = 0
			response.ticket = b""
			response.connection_data = authentication.RVConnectionData()
			response.server_name = ""
			return response
		response.result = common.Result.success()
		response.pid = pid
		response.ticket = self.ticket(pid, SECURE_PID)
		response.connection_data = authentication.RVConnectionData()
		response.connection_data.main_station = common.StationURL.parse(self.secure_url)
		response.server_name = "NintendoClients test server"
		return response

	async def request_ticket(self, client, source, target):
		print("STEP request-ticket source=%i target=%i" % (source, target), flush=True)
		response = rmc.RMCResponse()
		response.result = common.Result.success()
		response.ticket = self.ticket(source, target)
		return response


class AuthServerNX(authentication.AuthenticationServerNX):
	"""The Switch's authentication protocol (NEX 4): ValidateAndRequestTicket
	issues the ticket, keys derived as the Switch does (kerberos.key_derivation = 1)."""

	def __init__(self, settings, users, secure_key, secure_url):
		super().__init__()
		self.auth = AuthServer(settings, users, secure_key, secure_url)
		self.auth.derivation = kerberos.KeyDerivationNew(1, 1)

	async def validate_and_request_ticket(self, client, username):
		print("STEP validate-and-request-ticket user=%s" % username, flush=True)
		return await self.auth.login(client, username)

	async def request_ticket(self, client, source, target):
		return await self.auth.request_ticket(client, source, target)


class SecureServer:
	"""Secure Connection protocol (11): Register and RegisterEx."""
	PROTOCOL_ID = 0xB

	def __init__(self):
		self.next_cid = 1

	async def logout(self, client):
		print("STEP logout pid=%s" % client.pid(), flush=True)

	async def handle(self, client, method_id, input, output):
		if method_id not in (1, 4):
			raise common.RMCError("Core::NotImplemented")
		urls = input.list(input.stationurl)
		host, port = client.remote_address()
		public = common.StationURL("prudp", address=host, port=port, type=3)
		cid = self.next_cid
		self.next_cid += 1
		print("STEP register pid=%s urls=%i cid=%i" % (client.pid(), len(urls), cid), flush=True)
		output.result(common.Result.success())
		output.u32(cid)
		output.stationurl(public)


class HealthServer:
	"""Health protocol (18): PingDaemon answers true."""
	PROTOCOL_ID = 0x12

	async def logout(self, client):
		pass

	async def handle(self, client, method_id, input, output):
		if method_id != 1:
			raise common.RMCError("Core::NotImplemented")
		print("STEP ping-daemon pid=%s" % client.pid(), flush=True)
		output.bool(True)


def tolerate_syn_session_id():
	"""Diagnostic switch (--tolerate-syn-session-id): NintendoClients' server
	refuses a SYN whose session id is not 0. With this switch a SYN that is
	otherwise valid (its signature checked as sent) has its session id cleared
	before NintendoClients sees it, so the rest of the flow can be exercised.
	Every use prints "STEP tolerated ..."; the interop test never sets it."""
	original = prudp.PRUDPServerStream.process_syn

	async def process_syn(self, packet, addr):
		if packet.session_id != 0 and \
		   packet.signature == self.packet_encoder.calc_packet_signature(packet, b"", b""):
			print("STEP tolerated syn-session-id=%i" % packet.session_id, flush=True)
			packet.session_id = 0
			packet.signature = self.packet_encoder.calc_packet_signature(packet, b"", b"")
		await original(self, packet, addr)
	prudp.PRUDPServerStream.process_syn = process_syn


async def main(args):
	s = settings.load(args.profile)
	s.configure(args.access_key, args.nex_version)
	for item in args.set:
		name, value = item.split("=", 1)
		s[name] = value

	users = {100: ("guest", "MMQea3n!fsik"), args.pid: (str(args.pid), args.password)}
	secure_key = kerberos.KeyDerivationOld(65000, 1024).derive_key(SECURE_PASSWORD.encode(), SECURE_PID)

	if s["prudp.transport"] != s.TRANSPORT_UDP:
		await serve_lite(args, s, users)
		return

	async with prudp.serve_transport(s, "127.0.0.1", 0) as auth_transport:
		async with prudp.serve_transport(s, "127.0.0.1", 0) as secure_transport:
			secure_port = secure_transport.local_address()[1]
			url_port = args.advertise_secure_port or secure_port
			secure_url = "prudps:/address=127.0.0.1;port=%i;CID=1;PID=%i;sid=1;stream=10;type=2" % (url_port, SECURE_PID)
			auth = AuthServer(s, users, secure_key, secure_url)
			async with rmc.serve_on_transport(s, [auth], auth_transport, 1):
				async with rmc.serve_on_transport(s, [SecureServer(), HealthServer()], secure_transport, 1, key=secure_key):
					print("READY auth=%i secure=%i" % (auth_transport.local_address()[1], secure_port), flush=True)
					# Serve until the harness closes our standard input.
					await anyio.to_thread.run_sync(sys.stdin.read)
					# Packets still in flight (a peer's late ACK) may meet unbound
					# ports from here on; the harness ignores warnings after this.
					print("STEP stopping", flush=True)
	print("STEP stopped", flush=True)


async def serve_lite(args, s, users):
	"""PRUDP Lite (--profile switch): one listener on --port, WebSocket
	(prudp.transport = 2, ws:// as no TLS context is given) or raw TCP (1); the
	authentication server on virtual port 1 and the secure server on virtual
	port 2 of it, announced at 0.0.0.1 ("the authentication server's address")
	as the Switch servers do."""
	secure_key = kerberos.KeyDerivationNew(1, 1).derive_key(SECURE_PASSWORD.encode(), SECURE_PID)
	secure_url = "prudps:/address=0.0.0.1;port=%i;CID=1;PID=%i;sid=2;stream=10;type=2" % (args.port, SECURE_PID)
	auth = AuthServerNX(s, users, secure_key, secure_url)
	async with prudp.serve_transport(s, "127.0.0.1", args.port, None) as transport:
		async with rmc.serve_on_transport(s, [auth], transport, 1):
			async with rmc.serve_on_transport(s, [SecureServer(), HealthServer()], transport, 2, key=secure_key):
				print("READY auth=%i secure=%i" % (args.port, args.port), flush=True)
				await anyio.to_thread.run_sync(sys.stdin.read)
				print("STEP stopping", flush=True)
	print("STEP stopped", flush=True)


if __name__ == "__main__":
	parser = argparse.ArgumentParser()
	parser.add_argument("--profile", default="default")
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=0)
	parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
	parser.add_argument("--pid", type=int, default=1800000000, help="a normal account, named by its PID")
	parser.add_argument("--password", default="nc-user-password")
	parser.add_argument("--port", type=int, default=0,
		help="PRUDP Lite (--profile switch): the TCP port of the one listener (a socket transport cannot report the port it got)")
	parser.add_argument("--advertise-secure-port", type=int, default=0,
		help="port written in the secure station url (a proxy in front of the secure server); default its own")
	parser.add_argument("--debug", action="store_true")
	parser.add_argument("--tolerate-syn-session-id", action="store_true", help="diagnostics only, see tolerate_syn_session_id")
	args = parser.parse_args()
	if args.tolerate_syn_session_id:
		tolerate_syn_session_id()

	logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, stream=sys.stderr,
		format="%(asctime)s %(name)s %(levelname)s %(message)s")
	for name in ("nintendo.nex.prudp", "nintendo.nex.rmc"):
		logging.getLogger(name).setLevel(logging.DEBUG)
		logging.getLogger(name).addHandler(WarningPrinter())
	anyio.run(main, args)
