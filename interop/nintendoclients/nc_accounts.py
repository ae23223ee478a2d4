#!/usr/bin/env python3
"""Log in the way consoles do, through gamewire's account services, with
NintendoClients' own clients.

Written for gamewire's interop harness (not part of NintendoClients). It needs
a local copy of NintendoClients and anynet on sys.path (NINTENDOCLIENTS_DIR,
docs/interop.md) with nintendo/nnas.py, nintendo/nasc.py and their
certificates. Modes:

  nnas    NNASClient (set_url to gamewire, no TLS) logs in with the NNID's
          password hash, reads the profile, maps NNID and PID both ways, reads
          the Miis, gets a nex_token for --game-server-id; then the backend
          logs in to the NEX server it names with the PID, NEX password and
          token (LoginEx with AuthenticationInfo, as examples/wiiu does).
  nasc    NASCClient LOGIN (set_url to gamewire, no TLS) for --pid gives a
          locator and token; the backend logs in there with --password and
          the token (AuthenticationInfo token type 0).
  switch  the switch profile logs in over ws:// with --id-token (token type 2)
          and no password: ValidateAndRequestTicketWithCustomData below NEX
          4.4, ValidateAndRequestTicketWithParam from 4.4 (--nex-version).

Every --refuse NAME=TOKEN is then tried in place of the good token (with the
same user and password) and must be refused: "STEP refused name=NAME
code=0x..." gives NintendoClients' error. Every step is one STEP line; the
exit status is 0 only when everything went as described.
"""

import argparse
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nc_common import run_guarded, step  # noqa: E402

from nintendo import nasc, nnas  # noqa: E402
from nintendo.nex import authentication, backend, common, settings  # noqa: E402


async def nex_login(s, host, port, user, password, token, token_type, ngs):
	info = authentication.AuthenticationInfo()
	info.token = token
	info.token_type = token_type
	info.ngs_version = ngs
	async with backend.connect(s, host, port) as be:
		async with be.login(user, password, auth_info=info) as client:
			return client.pid()


async def refusals(args, s, host, port, user, password, token_type, ngs):
	for item in args.refuse:
		name, token = item.split("=", 1)
		try:
			pid = await nex_login(s, host, port, user, password, token, token_type, ngs)
		except common.RMCError as e:
			step("refused", name=name, code="0x%08X" % e.code(), error=e.name())
			continue
		raise AssertionError("token %s was accepted (logged in as %d)" % (name, pid))


async def run_nnas(args):
	client = nnas.NNASClient()
	client.set_url(args.url)
	client.set_context(None)
	client.set_device(args.device_id, args.serial, 0x260)
	client.set_title(args.title_id, 0x40)
	oauth = await client.login(args.nnid, nnas.calc_password_hash(args.pid, args.password), "hash")
	step("access-token", length=len(oauth.token), refresh=len(oauth.refresh_token), expires=oauth.expires_in)
	profile = await client.get_profile(oauth.token)
	step("profile", nnid=profile.nnid, pid=profile.pid, country=profile.country, mii=repr(profile.mii.name))
	pid = await client.get_pid(args.nnid)
	nnid = await client.get_nnid(args.pid)
	step("mapped", pid=pid, nnid=nnid)
	miis = await client.get_miis([args.pid])
	step("miis", count=len(miis), name=repr(miis[0].name))
	tok = await client.get_nex_token(oauth.token, args.game_server_id)
	step("nex-token", host=tok.host, port=tok.port, pid=tok.pid, password_length=len(tok.password), token_length=len(tok.token))
	if args.token_out:
		with open(args.token_out, "w") as f:
			f.write(tok.token)
	try:
		await client.get_nex_token(oauth.token, 0x00003200)
		raise AssertionError("nex_token for an unknown game server id was handed out")
	except nnas.NNASError as e:
		step("nnas-error", status=e.status_code, code=e.errors["error"]["code"].text)

	s = settings.default()
	s.configure(args.access_key, args.nex_version)
	got = await nex_login(s, tok.host, tok.port, str(tok.pid), tok.password, tok.token, 1, 3)
	step("nex-login", pid=got)
	await refusals(args, s, tok.host, tok.port, str(tok.pid), tok.password, 1, 3)


async def run_nasc(args):
	client = nasc.NASCClient()
	client.set_url(args.url)
	client.set_context(None)
	client.set_title(args.title_id, 0x10)
	client.set_device(args.serial, "40f407000001", b"\x01" * 272)
	client.set_user(args.pid, "0123abcd")
	resp = await client.login(args.game_server_id)
	step("nasc-login", host=resp.host, port=resp.port, token_length=len(resp.token))
	s = settings.default()
	s.configure(args.access_key, args.nex_version)
	got = await nex_login(s, resp.host, resp.port, str(args.pid), args.password, resp.token, 0, 2)
	step("nex-login", pid=got)
	await refusals(args, s, resp.host, resp.port, str(args.pid), args.password, 0, 2)


async def run_switch(args):
	# No TLS context: ws:// (as nc_client.py --no-tls explains).
	backend.tls = type("NoTLS", (), {"TLSContext": staticmethod(lambda: None)})
	s = settings.load("switch")
	s.configure(args.access_key, args.nex_version, args.client_version)
	host, port = args.url.split(":")
	got = await nex_login(s, host, int(port), str(args.pid), None, args.id_token, 2, 4)
	step("nex-login", pid=got)
	await refusals(args, s, host, int(port), str(args.pid), None, 2, 4)


async def run(args):
	await {"nnas": run_nnas, "nasc": run_nasc, "switch": run_switch}[args.mode](args)


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("mode", choices=["nnas", "nasc", "switch"])
	parser.add_argument("--url", required=True, help="gamewire's account services (host:port), or for switch its Lite listener")
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=0)
	parser.add_argument("--client-version", type=int, default=60, help="the game's client version (NEX 4.4+; SMM2's is 60)")
	parser.add_argument("--game-server-id", type=lambda v: int(v, 16), default=0)
	parser.add_argument("--title-id", type=lambda v: int(v, 16), default=0x000500001010EC00)
	parser.add_argument("--nnid", default="")
	parser.add_argument("--pid", type=int, required=True)
	parser.add_argument("--password", default="")
	parser.add_argument("--id-token", default="")
	parser.add_argument("--device-id", type=int, default=1234567890)
	parser.add_argument("--serial", default="FW123456789")
	parser.add_argument("--token-out", default="", help="write the nex_token's token to this file")
	parser.add_argument("--refuse", action="append", default=[], metavar="NAME=TOKEN")
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	run_guarded(run, args)


if __name__ == "__main__":
	main()
