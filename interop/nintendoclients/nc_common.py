"""Helpers the NintendoClients drivers share: the STEP lines the Go tests
read, a multipart POST of a DataStore body (as a console uploads it), and
running a driver's coroutine under a deadline that reports any failure."""

import sys
import urllib.request
import uuid

import anyio


def step(name, /, **fields):
	text = " ".join("%s=%s" % (k, v) for k, v in fields.items())
	print("STEP %s %s" % (name, text), flush=True)


def post_form(url, fields, body):
	boundary = uuid.uuid4().hex
	parts = []
	for f in fields:
		parts.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, f.key, f.value)).encode())
	parts.append(("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"body\"\r\n"
		"Content-Type: application/octet-stream\r\n\r\n" % boundary).encode() + body + b"\r\n")
	parts.append(("--%s--\r\n" % boundary).encode())
	req = urllib.request.Request(url, data=b"".join(parts), method="POST",
		headers={"Content-Type": "multipart/form-data; boundary=%s" % boundary})
	with urllib.request.urlopen(req, timeout=10) as resp:
		return resp.status


def run_guarded(run, args):
	"""Runs run(args) within args.timeout seconds; any failure is a STEP error and exit status 1."""
	try:
		async def guarded():
			with anyio.fail_after(args.timeout):
				await run(args)
		anyio.run(guarded)
	except BaseException as e:  # report, never hide, what went wrong
		step("error", type=type(e).__name__, message=repr(str(e)))
		sys.exit(1)


class EventLog:
	"""Keeps the events a client's notification server receives (record) and
	lets a flow wait for one of a type from a source (wait). Mixed into the
	drivers' NotificationServer and NintendoNotificationServer subclasses."""

	def init_log(self, who):
		self.who = who
		self.events = []
		self.changed = anyio.Event()

	def record(self, event):
		self.events.append(event)
		self.changed.set()
		self.changed = anyio.Event()

	async def wait(self, type, source, seconds):
		with anyio.fail_after(seconds):
			while True:
				for e in self.events:
					if e.type == type and e.pid == source:
						self.events.remove(e)
						return e
				await self.changed.wait()
