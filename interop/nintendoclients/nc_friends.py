#!/usr/bin/env python3
"""Issue 28's done-when: a 3DS and a Wii U friends client of NintendoClients
against gamewire's friends server (`gamewire serve --game friends`).

Written for gamewire's interop harness (not part of NintendoClients); it only
imports NintendoClients (NINTENDOCLIENTS_DIR, see docs/interop.md) and drives
its own classes as its examples do (examples/3ds/friends.py,
examples/wiiu/friends.py): settings.load("friends"), backend.connect + login,
FriendsClientV1 (the 3DS, --user-a) and FriendsClientV2 (the Wii U,
--user-b), each with a NintendoNotificationServer subclass registered.

--phase main:
  1. both log in; the Wii U sends its login (UpdateAndGetAllInformation), the
     3DS its Mii and presence;
  2. the 3DS adds the Wii U by PID (AddFriendByPrincipalId): a request the Wii U
     hears of (event 27) and accepts (AcceptFriendRequest); the 3DS hears of
     the friendship (event 7) and lists the Wii U as a complete friend;
  3. the 3DS changes its presence and the Wii U hears it (event 24), the Wii U
     changes its own and the 3DS hears it (event 1);
  4. comments and favourite game: each reads the other's;
  5. the Wii U removes the 3DS, then blocks it; the 3DS's new request is refused;
     the Wii U unblocks it and asks, the 3DS adds back: friends again (event 30);
  6. the 3DS disconnects and the Wii U hears it went offline (event 10).
--phase after (after a restart of the server): the Wii U's login shows its
  comment and its friend (the 3DS, offline) as they were.
--phase notify (a second Wii U, --user-c):
  1. the 3DS invites its friend the Wii U (SendInvitation; a Wii U is not told)
     and a stranger (refused with FPD::NotFriend);
  2. the Wii U asks the second Wii U, which hears the request (event 27), and
     withdraws it (CancelFriendRequest), which it hears too (event 26);
  3. with the second Wii U offline, the Wii U asks, withdraws and asks again;
     the second Wii U's next login (UpdateAndGetAllInformation) lists the
     three as persistent notifications, it deletes them
     (DeletePersistentNotification), and its next login lists none.

Every step prints one "STEP <client>-<name> k=v ..." line; the exit status is
0 only when all succeeded.
"""

import argparse
import logging
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, common, friends, nintendonotification, settings  # noqa: E402
from nc_common import EventLog, run_guarded, step  # noqa: E402

TITLE_3DS = 0x0004000000055D00
TITLE_WIIU = 0x000500001010EC00
FAVORITE = 0x0004000000086300


class Events(nintendonotification.NintendoNotificationServer, EventLog):
	"""Keeps every NintendoNotification event a client receives."""

	def __init__(self, who):
		super().__init__()
		self.init_log(who)

	async def got(self, event):
		step("%s-event" % self.who, type=event.type, source=event.pid, data=type(event.data).__name__)
		self.record(event)

	async def process_nintendo_notification_event(self, client, event):
		await self.got(event)

	async def process_nintendo_notification_event_alt(self, client, event):
		await self.got(event)


def nna(pid, nnid, name):
	info = friends.NNAInfo()
	info.principal_info.pid = pid
	info.principal_info.nnid = nnid
	info.principal_info.mii.name = name
	info.principal_info.mii.data = bytes(range(96))
	return info


def presence_v1(title, description):
	p = friends.NintendoPresence()
	p.changed_bit_flag = 0xFF
	p.game_key.title_id = title
	p.game_key.title_version = 1
	p.game_mode_description = description
	p.join_availability_flag = 0
	p.matchmake_system_type = 0
	p.join_game_id = 0
	p.join_game_mode = 0
	p.owner_pid = 0
	p.join_group_id = 0
	p.application_data = b""
	return p


def key(pid):
	k = friends.FriendKey()
	k.unk1 = pid
	k.unk2 = common.DateTime(0)
	return k


async def main_phase(args, s):
	w = args.wait
	async with backend.connect(s, args.host, args.port) as be_b:
		async with be_b.login(args.user_b, args.password_b) as b:
			events_b = Events("b")
			b.register_server(events_b)
			pid_b = b.pid()
			step("b-login", pid=pid_b)
			wiiu = friends.FriendsClientV2(b)
			info = await wiiu.update_and_get_all_information(nna(pid_b, "wiiu-%d" % pid_b, "WiiU"), friends.NintendoPresenceV2(),
				common.DateTime.make(2000, 1, 2))
			step("b-all-information", friends=len(info.friends), sent=len(info.sent_requests), received=len(info.received_requests),
				blacklist=len(info.blacklist))

			async with backend.connect(s, args.host, args.port) as be_a:
				async with be_a.login(args.user_a, args.password_a) as a:
					events_a = Events("a")
					a.register_server(events_a)
					pid_a = a.pid()
					step("a-login", pid=pid_a)
					ds = friends.FriendsClientV1(a)
					mii = friends.Mii()
					mii.name, mii.unk1, mii.unk2, mii.mii_data = "3DS", False, 0, bytes(96)
					await ds.update_mii(mii)
					await ds.update_presence(presence_v1(TITLE_3DS, "menu"), False)

					# The 3DS adds the Wii U: a request, accepted.
					rel = await ds.add_friend_by_principal_id(0, pid_b)
					step("a-add", pid=rel.pid, friend_code=rel.friend_code, complete=rel.is_complete)
					ev = await events_b.wait(27, pid_a, w)
					request = ev.data
					step("b-request", id=request.message.friend_request_id, sender=request.principal_info.pid,
						name=repr(request.principal_info.mii.name))
					accepted = await wiiu.accept_friend_request(request.message.friend_request_id)
					step("b-accept", pid=accepted.nna_info.principal_info.pid, online=accepted.presence.is_online,
						title=accepted.presence.game_key.title_id)
					await events_a.wait(7, pid_b, w)
					step("a-friended", source=pid_b)
					for r in await ds.get_all_friends():
						step("a-friend", pid=r.pid, complete=r.is_complete)

					# Presence both ways.
					await ds.update_presence(presence_v1(TITLE_3DS + 0x100, "racing"), False)
					ev = await events_b.wait(24, pid_a, w)
					step("b-presence", source=pid_a, online=ev.data.is_online, title=ev.data.game_key.title_id, message=repr(ev.data.message))
					p2 = friends.NintendoPresenceV2()
					p2.is_online = True
					p2.game_key.title_id = TITLE_WIIU
					p2.gathering_id = 77
					await wiiu.update_presence(p2)
					ev = await events_a.wait(1, pid_b, w)
					step("a-presence", source=pid_b, title=ev.data.game_key.title_id, group=ev.data.join_group_id)

					# Comments and favourite game.
					comment = friends.Comment()
					comment.unk, comment.text, comment.changed = 0, "hello from the Wii U", common.DateTime(0)
					await wiiu.update_comment(comment)
					await ds.update_comment("hello from the 3DS")
					gk = friends.GameKey()
					gk.title_id, gk.title_version = FAVORITE, 2
					await ds.update_favorite_game_key(gk)
					for c in await ds.get_friend_comment([key(pid_b)]):
						step("a-friend-comment", pid=c.pid, text=repr(c.comment))
					info = await wiiu.update_and_get_all_information(nna(pid_b, "wiiu-%d" % pid_b, "WiiU"), p2, common.DateTime.make(2000, 1, 2))
					for f in info.friends:
						step("b-friend", pid=f.nna_info.principal_info.pid, comment=repr(f.comment.text), name=repr(f.nna_info.principal_info.mii.name))
					for pi in await friends.FriendsClientV1(b).get_friend_persistent_info([pid_a]):
						step("b-persistent-info", pid=pi.pid, favorite=pi.game_key.title_id, version=pi.game_key.title_version, message=repr(pi.message))

					# Remove, block, refused.
					await wiiu.remove_friend(pid_a)
					step("b-removed", pid=pid_a, a_friends=len(await ds.get_all_friends()))
					bl = friends.BlacklistedPrincipal()
					bl.principal_info.pid = pid_a
					bl.principal_info.nnid = ""
					bl.principal_info.mii.name = ""
					bl.principal_info.mii.data = b""
					bl.since = common.DateTime(0)
					out = await wiiu.add_black_list(bl)
					step("b-blocked", pid=out.principal_info.pid)
					try:
						await ds.add_friend_by_principal_id(0, pid_b)
						step("a-add-blocked", error="none")
					except common.RMCError as e:
						step("a-add-blocked", error=e.name())

					# Unblocked and friends again (the Wii U asks, the 3DS adds back).
					await wiiu.remove_black_list(pid_a)
					await wiiu.add_friend(pid_a)
					rel = await ds.add_friend_by_principal_id(0, pid_b)
					step("a-add-again", pid=rel.pid, complete=rel.is_complete)
					await events_b.wait(30, pid_a, w)
					step("b-friended", source=pid_a)
			ev = await events_b.wait(10, pid_a, w)
			step("b-offline", source=pid_a)
	step("disconnected")


async def after_phase(args, s):
	async with backend.connect(s, args.host, args.port) as be_b:
		async with be_b.login(args.user_b, args.password_b) as b:
			pid_b = b.pid()
			info = await friends.FriendsClientV2(b).update_and_get_all_information(nna(pid_b, "wiiu-%d" % pid_b, "WiiU"),
				friends.NintendoPresenceV2(), common.DateTime.make(2000, 1, 2))
			step("b-after", comment=repr(info.comment.text), blacklist=len(info.blacklist))
			for f in info.friends:
				step("b-after-friend", pid=f.nna_info.principal_info.pid, online=f.presence.is_online, comment=repr(f.comment.text))
	step("disconnected")


async def wiiu_login(client, pid, name):
	return await friends.FriendsClientV2(client).update_and_get_all_information(nna(pid, "wiiu-%d" % pid, name),
		friends.NintendoPresenceV2(), common.DateTime.make(2000, 1, 2))


async def notify_phase(args, s):
	w = args.wait
	async with backend.connect(s, args.host, args.port) as be_b:
		async with be_b.login(args.user_b, args.password_b) as b:
			b.register_server(Events("b"))
			pid_b = b.pid()
			wiiu = friends.FriendsClientV2(b)
			await wiiu_login(b, pid_b, "WiiU")
			pid_c = int(args.user_c)

			async with backend.connect(s, args.host, args.port) as be_a:
				async with be_a.login(args.user_a, args.password_a) as a:
					a.register_server(Events("a"))
					ds = friends.FriendsClientV1(a)
					await ds.update_presence(presence_v1(TITLE_3DS, "menu"), False)
					await ds.send_invitation([pid_b])
					step("a-invited", pid=pid_b)
					try:
						await ds.send_invitation([pid_c])
						step("a-invite-stranger", error="none")
					except common.RMCError as e:
						step("a-invite-stranger", error=e.name())

			async with backend.connect(s, args.host, args.port) as be_c:
				async with be_c.login(args.user_c, args.password_c) as c:
					events_c = Events("c")
					c.register_server(events_c)
					info = await wiiu_login(c, pid_c, "WiiU2")
					step("c-login", pid=c.pid(), notifications=len(info.notifications))
					request = (await wiiu.add_friend(pid_c)).request
					ev = await events_c.wait(27, pid_b, w)
					step("c-request", sender=ev.data.principal_info.pid, id=ev.data.message.friend_request_id)
					await wiiu.cancel_friend_request(request.message.friend_request_id)
					ev = await events_c.wait(26, pid_b, w)
					step("c-cancelled", source=ev.pid)

			# The second Wii U is offline now (its connection closed).
			request = (await wiiu.add_friend(pid_c)).request
			await wiiu.cancel_friend_request(request.message.friend_request_id)
			await wiiu.add_friend(pid_c)
			step("b-asked-offline", pid=pid_c)

	async with backend.connect(s, args.host, args.port) as be_c:
		async with be_c.login(args.user_c, args.password_c) as c:
			c.register_server(Events("c"))
			info = await wiiu_login(c, pid_c, "WiiU2")
			step("c-relogin", received=len(info.received_requests), notifications=len(info.notifications))
			for n in info.notifications:
				step("c-notification", id=n.unk1, type=n.unk2, source=n.unk3, at=n.unk4)
			await friends.FriendsClientV2(c).delete_persistent_notification(info.notifications)
			info = await wiiu_login(c, pid_c, "WiiU2")
			step("c-after-delete", notifications=len(info.notifications))
	step("disconnected")


async def run(args):
	s = settings.load("friends")
	s.configure(args.access_key, args.nex_version)
	if args.phase == "main":
		await main_phase(args, s)
	elif args.phase == "notify":
		await notify_phase(args, s)
	else:
		await after_phase(args, s)


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--access-key", default="ridfebb9")
	parser.add_argument("--nex-version", type=int, default=20000)
	parser.add_argument("--user-a", required=True)
	parser.add_argument("--password-a", required=True)
	parser.add_argument("--user-b", required=True)
	parser.add_argument("--password-b", required=True)
	parser.add_argument("--user-c", help="a second Wii U (--phase notify)")
	parser.add_argument("--password-c")
	parser.add_argument("--phase", choices=("main", "after", "notify"), default="main")
	parser.add_argument("--wait", type=float, default=10, help="seconds to wait for each notification")
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
	run_guarded(run, args)


if __name__ == "__main__":
	main()
