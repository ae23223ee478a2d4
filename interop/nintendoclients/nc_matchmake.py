#!/usr/bin/env python3
"""Auto-matchmake with NintendoClients' own matchmaking and notification classes.

Written for gamewire's interop harness (not part of NintendoClients); it only
imports NintendoClients (NINTENDOCLIENTS_DIR, see docs/interop.md) and drives
its generated client classes as its examples do:

    async with backend.connect(settings, host, port) as be:
        async with be.login(user, password) as client:
            client.register_server(<a NotificationServer>)
            matchmaking.MatchmakeExtensionClient(client).auto_matchmake_postpone(...)

It auto-matchmakes into a session (MatchmakeExtension.AutoMatchmake_Postpone),
waits for --notifications notifications (printed as they come), lists the
participants (MatchMakingExt.GetParticipants) and their urls
(MatchMaking.GetParticipantsURLs), leaves (MatchMakingExt.EndParticipation) and
disconnects; with --create it creates a session
(MatchmakeExtension.CreateMatchmakeSession) and with --join GID joins one
(MatchmakeExtension.JoinMatchmakeSession) instead of auto-matchmaking, then looks
it up (FindMatchmakeSessionByGatheringIdDetail). With --criteria it auto-matchmakes with one search criterion
naming the game mode (MatchmakeExtension.AutoMatchmakeWithSearchCriteria_Postpone,
NintendoClients' default MatchmakeSessionSearchCriteria otherwise, which carries
no password exclusion before NEX 4); with --find GID it also looks session GID
up (FindMatchmakeSessionByGatheringIdDetail) and prints its owner and the size
of the session key it got; with --browse it lists the sessions of its game
mode (MatchmakeExtension.BrowseMatchmakeSession, default criteria naming the
game mode, the first ten). With --with-param, --create, --join and --criteria
call the methods NEX 4 games use instead: CreateMatchmakeSessionWithParam,
JoinMatchmakeSessionWithParam and AutoMatchmakeWithParam_Postpone (with the
same one criterion). With --nat M,F it first registers a station
(SecureConnection.Register, as a game does before anything else; the copy of
NintendoClients has no typed SecureConnection client, so the request is
written with its streams) and reports NAT mapping M and filtering F
(NATTraversalClient.report_nat_properties). Every step is one "STEP ..."
line; the exit status is 0 only when all succeeded.
"""

import argparse
import logging
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, common, matchmaking, nattraversal, notification, settings, streams  # noqa: E402


def step(name, **fields):
	text = " ".join("%s=%s" % (k, v) for k, v in fields.items())
	print("STEP %s %s" % (name, text), flush=True)


class Notifications(notification.NotificationServer):
	def __init__(self):
		super().__init__()
		self.received = 0
		self.event = anyio.Event()
		self.want = 0

	async def process_notification_event(self, client, event):
		step("notification", type=event.type, source=event.pid, param1=event.param1, param2=event.param2,
			param3=event.param3, text=repr(event.text))
		self.received += 1
		if self.received >= self.want:
			self.event.set()


async def extra(client, ext, gid, nex_version):
	"""The session owner's further calls: progress score, attributes and
	application buffer updated, then read back through the playing-session,
	single-gathering and detailed-participant methods; from NEX 4 also
	UpdateMatchmakeSessionPart and FindMatchmakeSessionByParticipant."""
	pid = client.pid()
	await ext.update_progress_score(gid, 50)
	await ext.modify_current_game_attribute(gid, 0, 9)
	await ext.update_application_buffer(gid, b"app-data")
	single = await ext.find_matchmake_session_by_single_gathering_id(gid)
	step("single", gid=single.id, progress=single.progress_score, attribs=",".join(str(a) for a in single.attribs),
		app=single.application_data.decode())
	playing = await ext.get_playing_session([pid])
	step("playing", pids=",".join(str(p.pid) for p in playing), gids=",".join(str(p.gathering.id) for p in playing),
		types=",".join(type(p.gathering).__name__ for p in playing))
	simple = await ext.get_simple_playing_session([pid], True)
	step("simple", sessions=";".join("%d,%d,%d,%d" % (s.pid, s.gid, s.game_mode, s.attribute) for s in simple))
	details = await matchmaking.MatchMakingClientExt(client).get_detailed_participants(gid, True)
	step("details", participants=";".join("%d,%s,%d" % (d.pid, d.message.replace(" ", "_"), d.participants) for d in details))
	if nex_version >= 40000:
		param = matchmaking.UpdateMatchmakeSessionParam()
		param.gid, param.modification_flags = gid, 0x4  # only the application buffer
		param.attributes, param.open_participation, param.application_buffer = [0, 0, 0, 0, 0, 0], True, b"part"
		param.progress_score, param.started_time, param.user_password = 0, common.DateTime(0), ""
		param.game_mode, param.description, param.min_participants, param.max_participants = 0, "", 0, 0
		param.matchmake_system, param.participation_policy, param.policy_argument, param.codeword = 0, 0, 0, ""
		await ext.update_matchmake_session_part(param)
		by = matchmaking.FindMatchmakeSessionByParticipantParam()
		by.pids, by.options = [pid], 0
		found = await ext.find_matchmake_session_by_participant(by)
		step("by-participant", pids=",".join(str(f.pid) for f in found), gids=",".join(str(f.session.id) for f in found),
			app=",".join(f.session.application_data.decode() for f in found))


async def run(args):
	s = settings.load(args.profile)
	s.configure(args.access_key, args.nex_version, args.client_version)
	if args.minor_version is not None:
		s["prudp.minor_version"] = args.minor_version  # below 3: no structure headers
	if args.pid_size is not None:
		s["nex.pid_size"] = args.pid_size  # 8: Switch PIDs, in the default profile's transport
	async with backend.connect(s, args.host, args.port) as be:
		async with be.login(args.user, args.password) as client:
			step("secure-connected", pid=client.pid())
			events = Notifications()
			events.want = args.notifications
			client.register_server(events)

			if args.nat:
				natm, natf = (int(v) for v in args.nat.split(","))
				stream = streams.StreamOut(client.settings)
				url = common.StationURL("prudp", address="127.0.0.1", port=1, sid=15, stream=10, type=2)
				stream.list([url], stream.stationurl)
				await client.request(11, 1, stream.get())  # SecureConnection.Register
				await nattraversal.NATTraversalClient(client).report_nat_properties(natm, natf, 25)
				step("nat", natm=natm, natf=natf)

			ext = matchmaking.MatchmakeExtensionClient(client)
			session = matchmaking.MatchmakeSession()
			session.min_participants = 1
			session.max_participants = args.max_participants
			session.flags = 0x10  # the server picks a new owner when the owner leaves
			session.game_mode = args.game_mode
			session.attribs = [0, 0, 0, 0, 0, 0]
			session.open_participation = True
			session.matchmake_system = matchmaking.MatchmakeSystem.GLOBAL
			if args.create and args.with_param:
				param = matchmaking.CreateMatchmakeSessionParam()
				param.session = session
				param.additional_participants, param.gid_for_participation_check, param.options = [], 0, 0
				param.join_message, param.num_participants = args.message, 1
				res = await ext.create_matchmake_session_with_param(param)
				step("created", gid=res.id, key_bytes=len(res.session_key))
				joined = await ext.find_matchmake_session_by_gathering_id_detail(res.id)
			elif args.create:
				res = await ext.create_matchmake_session(session, args.message, 1)
				step("created", gid=res.gid, key_bytes=len(res.session_key))
				joined = await ext.find_matchmake_session_by_gathering_id_detail(res.gid)
			elif args.join and args.with_param:
				param = matchmaking.JoinMatchmakeSessionParam()
				param.gid, param.participants, param.gid_for_participation_check, param.options = args.join, [], 0, 0
				param.behavior, param.user_password, param.system_password = 0, "", ""
				param.join_message, param.num_participants, param.extra_participants = args.message, 1, 0
				res = await ext.join_matchmake_session_with_param(param)
				step("joined", gid=res.id, key_bytes=len(res.session_key))
				joined = await ext.find_matchmake_session_by_gathering_id_detail(args.join)
			elif args.join:
				key = await ext.join_matchmake_session(args.join, args.message)
				step("joined", gid=args.join, key_bytes=len(key))
				joined = await ext.find_matchmake_session_by_gathering_id_detail(args.join)
			elif args.criteria and args.with_param:
				crit = matchmaking.MatchmakeSessionSearchCriteria()
				crit.game_mode = str(args.game_mode)
				param = matchmaking.AutoMatchmakeParam()
				param.session = session
				param.participants, param.gid_for_participation_check, param.options = [], 0, 0
				param.join_message, param.num_participants = args.message, 1
				param.search_criteria, param.target_gids = [crit], []
				joined = await ext.auto_matchmake_with_param_postpone(param)
			elif args.criteria:
				crit = matchmaking.MatchmakeSessionSearchCriteria()
				crit.game_mode = str(args.game_mode)
				joined = await ext.auto_matchmake_with_search_criteria_postpone([crit], session, args.message)
			else:
				joined = await ext.auto_matchmake_postpone(session, args.message)
			step("automatchmake", type=type(joined).__name__, gid=joined.id, owner=joined.owner, host=joined.host,
				participants=joined.num_participants, max=joined.max_participants, game_mode=joined.game_mode,
				key_bytes=len(joined.session_key))

			if args.browse:
				crit = matchmaking.MatchmakeSessionSearchCriteria()
				crit.game_mode = str(args.game_mode)
				rr = common.ResultRange()
				rr.offset, rr.size = 0, 10
				found = await ext.browse_matchmake_session(crit, rr)
				step("browse", gids=",".join(str(g.id) for g in found),
					owners=",".join(str(g.owner) for g in found),
					participants=",".join(str(g.num_participants) for g in found))

			if args.extra:
				await extra(client, ext, joined.id, args.nex_version)

			if args.find:
				found = await ext.find_matchmake_session_by_gathering_id_detail(args.find)
				step("found", gid=found.id, owner=found.owner, key_bytes=len(found.session_key))

			if args.notifications > 0:
				with anyio.fail_after(args.wait):
					await events.event.wait()

			mmext = matchmaking.MatchMakingClientExt(client)
			pids = await mmext.get_participants(joined.id, True)
			step("participants", pids=",".join(str(p) for p in pids))
			urls = await matchmaking.MatchMakingClient(client).get_participants_urls(joined.id)
			step("urls", count=len(urls))
			for url in urls:
				step("url", url=url)
			ok = await mmext.end_participation(joined.id, "bye")
			step("left", result=ok)
		step("disconnected")


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--profile", default="default")
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=30500)
	parser.add_argument("--client-version", type=int, default=None, help="the game's client version (NEX 4.4 and later log in with ValidateAndRequestTicketWithParam, which carries it)")
	parser.add_argument("--user", default="guest")
	parser.add_argument("--password", default="MMQea3n!fsik")
	parser.add_argument("--game-mode", type=int, default=3)
	parser.add_argument("--max-participants", type=int, default=4)
	parser.add_argument("--message", default="from NintendoClients")
	parser.add_argument("--criteria", action="store_true", help="auto-matchmake with search criteria naming the game mode")
	parser.add_argument("--extra", action="store_true", help="the owner's further calls after creating (see extra())")
	parser.add_argument("--browse", action="store_true", help="also browse the sessions of the game mode (BrowseMatchmakeSession)")
	parser.add_argument("--find", type=int, default=0, help="also look this gathering up")
	parser.add_argument("--create", action="store_true", help="create a session (CreateMatchmakeSession) instead of auto-matchmaking")
	parser.add_argument("--join", type=int, default=0, help="join this session (JoinMatchmakeSession) instead of auto-matchmaking")
	parser.add_argument("--with-param", action="store_true", help="--create, --join and --criteria through the *WithParam methods (CreateMatchmakeSessionWithParam, JoinMatchmakeSessionWithParam, AutoMatchmakeWithParam_Postpone), as NEX 4 games call them")
	parser.add_argument("--minor-version", type=int, default=None, help="PRUDP minor version to offer (below 3: no structure headers)")
	parser.add_argument("--pid-size", type=int, default=None, help="PID size in bytes (8 as NEX 4 Switch titles; default: the profile's)")
	parser.add_argument("--nat", default="", help="register and report NAT mapping,filtering (e.g. 2,1) first")
	parser.add_argument("--notifications", type=int, default=0, help="wait for this many notifications before leaving")
	parser.add_argument("--wait", type=float, default=20, help="seconds to wait for them")
	parser.add_argument("--timeout", type=float, default=60)
	parser.add_argument("--debug", action="store_true")
	args = parser.parse_args()
	logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING, stream=sys.stderr,
		format="%(asctime)s %(name)s %(levelname)s %(message)s")
	ok = True
	try:
		async def guarded():
			with anyio.fail_after(args.timeout):
				await run(args)
		anyio.run(guarded)
	except BaseException as e:
		ok = False
		step("error", type=type(e).__name__, message=repr(str(e)))
	sys.exit(0 if ok else 1)


if __name__ == "__main__":
	main()
