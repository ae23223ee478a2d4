#!/usr/bin/env python3
"""MessageDelivery and Utility with NintendoClients' own clients.

Written for gamewire's interop harness (not part of NintendoClients). Two
players log in as nc_client.py does (backend.connect + login). The recipient
registers NintendoClients' MessageDeliveryServer (nintendo/nex/messaging.py)
on its connection; the sender calls MessageDeliveryClient.deliver_message with
a TextMessage to the recipient, and the server hands it over by calling
DeliverMessage on the recipient's connection. The sender then drives
UtilityClient (nintendo/nex/utility.py): a unique id acquired with its
password, associated with the player and read back. Every step prints one
"STEP ..." line; the exit status is 0 only when all succeeded.
"""

import argparse
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, messaging, settings, utility  # noqa: E402
from nc_common import run_guarded, step  # noqa: E402


class Inbox(messaging.MessageDeliveryServer):
	def __init__(self):
		super().__init__()
		self.event = anyio.Event()

	async def deliver_message(self, client, message):
		m = message
		step("message-received", cls=type(m).__name__, id=m.id, sender=m.sender, subject=repr(m.subject),
			body=repr(m.body), recipient=m.recipient.pid)
		self.event.set()


async def run(args):
	s = settings.load("default")
	s.configure(args.access_key, args.nex_version)
	async with backend.connect(s, args.host, args.port) as be_b:
		async with be_b.login(args.recipient, args.password) as b:
			inbox = Inbox()
			b.register_server(inbox)
			# The server knows a connection's player from its first call (a
			# console's Secure Connection Register; NintendoClients' NEX 4 login
			# makes none).
			await utility.UtilityClient(b).acquire_nex_unique_id()
			step("recipient-connected", pid=b.pid())
			async with backend.connect(s, args.host, args.port) as be_a:
				async with be_a.login(args.sender, args.password) as a:
					step("sender-connected", pid=a.pid())
					m = messaging.TextMessage()
					m.id, m.parent_id, m.sender, m.reception_time = 0, 0, 0, common_now()
					m.life_time, m.flags, m.subject, m.sender_name = 0, 0, "hello", "nc"
					m.recipient = messaging.MessageRecipient()
					m.recipient.type, m.recipient.pid, m.recipient.gid = messaging.RecipientType.PRINCIPAL, b.pid(), 0
					m.body = "from NintendoClients"
					await messaging.MessageDeliveryClient(a).deliver_message(m)
					step("message-sent", to=b.pid())
					await inbox.event.wait()

					uc = utility.UtilityClient(a)
					info = await uc.acquire_nex_unique_id_with_password()
					step("unique-id-acquired", nonzero=(info.unique_id != 0 and info.password != 0))
					await uc.associate_nex_unique_id_with_my_principal_id(info)
					got = await uc.get_associated_nex_unique_id_with_my_principal_id()
					step("unique-id-read-back", same=(got.unique_id == info.unique_id and got.password == info.password))
	step("disconnected")


def common_now():
	from nintendo.nex import common
	return common.DateTime.now()


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=40000)
	parser.add_argument("--sender", required=True)
	parser.add_argument("--recipient", required=True)
	parser.add_argument("--password", required=True)
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	run_guarded(run, args)


if __name__ == "__main__":
	main()
