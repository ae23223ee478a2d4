#!/usr/bin/env python3
"""Issue 16's done-when flow with two NintendoClients clients in one process.

Written for gamewire's interop harness (not part of NintendoClients); it only
imports NintendoClients (NINTENDOCLIENTS_DIR, see docs/interop.md) and drives
its own classes as its examples do: backend.connect + login, the generated
MatchmakeExtensionClient, MatchMakingClientExt, RankingClient,
DataStoreClient and NATTraversalClient, and a NotificationServer subclass registered on each client.

Two accounts, a and b (--user-a/--password-a, --user-b/--password-b):

  1. a and b log in; a asks for the relay server (NAT Traversal's
     GetRelaySignatureKey).
  2. a auto-matchmakes (AutoMatchmake_Postpone) and gets a new session; b
     auto-matchmakes with the same settings and joins it. a hears b's join
     (3001).
  3. a ends its participation; b hears a's leave (3008) and becomes the owner
     (4000). a auto-matchmakes again and rejoins the session, now b's; b hears
     a's join (3001). b ends its participation; a hears b's leave (3008).
  4. Both upload a score to one category (Ranking.UploadScore); b reads the
     global ranking (GetRanking) and a reads its own entry.
  5. a posts a DataStore object (PreparePostObject, the body POSTed over HTTP
     with the form fields handed out, CompletePostObject); a and b each read it
     back (PrepareGetObject, the body fetched from its URL).

Every step prints one "STEP <client>-<name> k=v ..." line; the exit status is 0
only when all succeeded. NintendoClients moves no DataStore bodies itself (a
console does that over HTTP): the POST and GET use Python's urllib.
"""

import argparse
import contextlib
import hashlib
import logging
import os
import sys
import urllib.request

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, datastore, matchmaking, nattraversal, notification, ranking, settings  # noqa: E402
from nc_common import EventLog, post_form, run_guarded, step  # noqa: E402

# Notification types (nintendo-wiki, Notification Events).
JOINED = 3001
ENDED_PARTICIPATION = 3008
OWNERSHIP_CHANGED = 4000

CATEGORY = 16


class Notifications(notification.NotificationServer, EventLog):
	"""Keeps every notification event a client receives and lets the flow wait for one."""

	def __init__(self, who):
		super().__init__()
		self.init_log(who)

	async def process_notification_event(self, client, event):
		step("%s-notification" % self.who, type=event.type, source=event.pid, param1=event.param1,
			param2=event.param2, param3=event.param3, text=repr(event.text))
		self.record(event)


def session_param(args):
	session = matchmaking.MatchmakeSession()
	session.min_participants = 1
	session.max_participants = 4
	session.flags = 0x10  # the server picks a new owner when the owner leaves
	session.game_mode = args.game_mode
	session.attribs = [0, 0, 0, 0, 0, 0]
	session.open_participation = True
	session.matchmake_system = matchmaking.MatchmakeSystem.GLOBAL
	return session


def fetch(url):
	with urllib.request.urlopen(url, timeout=10) as resp:
		return resp.read()


async def automatchmake(who, client, args, message):
	joined = await matchmaking.MatchmakeExtensionClient(client).auto_matchmake_postpone(session_param(args), message)
	step("%s-automatchmake" % who, type=type(joined).__name__, gid=joined.id, owner=joined.owner,
		participants=joined.num_participants)
	return joined


async def leave(who, client, gid):
	ok = await matchmaking.MatchMakingClientExt(client).end_participation(gid, "bye from %s" % who)
	step("%s-left" % who, gid=gid, result=ok)


async def expect(who, events, type, source, gid, seconds):
	e = await events.wait(type, source, seconds)
	step("%s-saw" % who, type=e.type, source=e.pid, param1=e.param1, param2=e.param2, text=repr(e.text))
	if type != OWNERSHIP_CHANGED and e.param1 != gid:
		raise ValueError("%s: notification %d names gathering %d, not %d" % (who, type, e.param1, gid))
	return e


async def run(args):
	s = settings.load("default")
	s.configure(args.access_key, args.nex_version)
	async with contextlib.AsyncExitStack() as stack:
		clients, events = {}, {}
		for who, user, password in (("a", args.user_a, args.password_a), ("b", args.user_b, args.password_b)):
			be = await stack.enter_async_context(backend.connect(s, args.host, args.port))
			client = await stack.enter_async_context(be.login(user, password))
			events[who] = Notifications(who)
			client.register_server(events[who])
			clients[who] = client
			step("%s-login" % who, pid=client.pid())
		a, b = clients["a"], clients["b"]
		pid_a, pid_b = a.pid(), b.pid()
		w = args.wait

		# NAT Traversal: the server's relay (none) and time.
		relay = await nattraversal.NATTraversalClient(a).get_relay_signature_key()
		step("a-relay-signature-key", mode=relay.mode, utc=int(relay.time.standard_datetime().timestamp()), address=repr(relay.address),
			port=relay.port, address_type=relay.address_type, game_server_id=relay.game_server_id)

		# Matchmaking: b joins a's session; a leaves and rejoins; b leaves.
		first = await automatchmake("a", a, args, "hello from a")
		gid = first.id
		second = await automatchmake("b", b, args, "hello from b")
		if second.id != gid:
			raise ValueError("b's session %d is not a's %d" % (second.id, gid))
		await expect("a", events["a"], JOINED, pid_b, gid, w)
		await leave("a", a, gid)
		await expect("b", events["b"], ENDED_PARTICIPATION, pid_a, gid, w)
		await expect("b", events["b"], OWNERSHIP_CHANGED, pid_a, gid, w)
		again = await automatchmake("a", a, args, "back from a")
		if again.id != gid:
			raise ValueError("a's second session %d is not %d" % (again.id, gid))
		await expect("b", events["b"], JOINED, pid_a, gid, w)
		await leave("b", b, gid)
		await expect("a", events["a"], ENDED_PARTICIPATION, pid_b, gid, w)

		# Ranking: both upload; b reads the global ranking, a its own entry.
		for who, client, score in (("a", a, args.score_a), ("b", b, args.score_b)):
			data = ranking.RankingScoreData()
			data.category, data.score, data.order, data.update_mode = CATEGORY, score, 0, 0
			data.groups, data.param = [0, 0], 0
			await ranking.RankingClient(client).upload_score(data, 0)
			step("%s-upload-score" % who, category=CATEGORY, score=score)
		order = ranking.RankingOrderParam()
		order.count = 10
		result = await ranking.RankingClient(b).get_ranking(ranking.RankingMode.GLOBAL, CATEGORY, order, 0, pid_b)
		for d in result.data:
			step("b-ranking-entry", rank=d.rank, pid=d.pid, score=d.score, category=d.category)
		step("b-ranking-total", total=result.total)
		mine = await ranking.RankingClient(a).get_ranking(ranking.RankingMode.SELF, CATEGORY, order, 0, pid_a)
		for d in mine.data:
			step("a-ranking-self", rank=d.rank, pid=d.pid, score=d.score)

		# DataStore: a posts an object; a and b read the same bytes back.
		body = bytes(range(256)) * 3 + b"done-when"
		param = datastore.DataStorePreparePostParam()
		param.size, param.name, param.data_type, param.meta_binary = len(body), "done-when", 1, b""
		param.flag, param.period, param.tags, param.extra_data = 0, 30, [], []
		param.permission.permission = 0  # public
		info = await datastore.DataStoreClient(a).prepare_post_object(param)
		step("a-prepare-post", data_id=info.data_id, fields=len(info.form))
		step("a-upload", status=post_form(info.url, info.form, body), size=len(body),
			sha1=hashlib.sha1(body).hexdigest())
		done = datastore.DataStoreCompletePostParam()
		done.data_id, done.success = info.data_id, True
		await datastore.DataStoreClient(a).complete_post_object(done)
		step("a-complete-post", data_id=info.data_id)
		for who, client in (("a", a), ("b", b)):
			gp = datastore.DataStorePrepareGetParam()
			gp.data_id = info.data_id
			get = await datastore.DataStoreClient(client).prepare_get_object(gp)
			got = fetch(get.url)
			step("%s-download" % who, data_id=get.data_id, size=len(got), sha1=hashlib.sha1(got).hexdigest(),
				equal=(got == body))
	step("disconnected")


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--access-key", default="3d37fbdb")
	parser.add_argument("--nex-version", type=int, default=30500)
	parser.add_argument("--user-a", required=True)
	parser.add_argument("--password-a", required=True)
	parser.add_argument("--user-b", required=True)
	parser.add_argument("--password-b", required=True)
	parser.add_argument("--game-mode", type=int, default=2)
	parser.add_argument("--score-a", type=int, default=5000)
	parser.add_argument("--score-b", type=int, default=4000)
	parser.add_argument("--wait", type=float, default=10, help="seconds to wait for each notification")
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
	run_guarded(run, args)


if __name__ == "__main__":
	main()
