#!/usr/bin/env python3
"""Call a NEX server's DataStore methods beyond the core object API with
NintendoClients' own generated DataStoreClient (nintendo/nex/datastore.py).

Written for gamewire's interop harness (not part of NintendoClients). It logs
in as nc_client.py does, then calls: get_notification_url (and fetches the
URL with urllib), get_new_arrived_notifications(_v1), post_meta_binary,
rate_objects, rate_object, get_rating_with_log, get_ratings, reset_rating,
reset_ratings, touch_object, perpetuate_object, get_persistence_infos,
unperpetuate_object, prepare_get_object_or_meta_binary, get_password_infos,
change_metas, change_metas_v1, post_meta_binary_with_data_id,
post_meta_binaries_with_data_id, rate_object_with_posting,
rate_objects_with_posting and get_object_infos. Every step prints one
"STEP ..." line; the exit status is 0 only when all succeeded.
"""

import argparse
import os
import sys
import urllib.request

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, common, datastore, settings  # noqa: E402
from nc_common import run_guarded, step  # noqa: E402


def results(rs):
	return ",".join(r.name() for r in rs)


def post_param(name, slots=()):
	p = datastore.DataStorePreparePostParam()
	p.size, p.name, p.data_type, p.meta_binary = 0, name, 5, b"meta-" + name.encode()
	p.flag, p.period, p.tags, p.extra_data = 0, 30, [], []
	p.permission.permission = 0
	for slot, flag, lock in slots:
		r = datastore.DataStoreRatingInitParamWithSlot()
		r.slot = slot
		r.param.flag, r.param.internal_flag, r.param.lock_type = flag, 0, lock
		r.param.initial_value, r.param.range_min, r.param.range_max = 10, 0, 0
		r.param.period_hour, r.param.period_duration = 0, 0
		p.rating_init_param.append(r)
	return p


def target(data_id, slot):
	t = datastore.DataStoreRatingTarget()
	t.data_id, t.slot = data_id, slot
	return t


def rate(value):
	r = datastore.DataStoreRateObjectParam()
	r.rating_value, r.access_password = value, 0
	return r


def rename(data_id, name, v1=False):
	c = datastore.DataStoreChangeMetaParamV1() if v1 else datastore.DataStoreChangeMetaParam()
	c.data_id, c.modifies_flag, c.name, c.period, c.meta_binary, c.tags, c.update_password = data_id, 1, name, 0, b"", [], 0
	if not v1:
		c.referred_count, c.data_type, c.status = 0, 0, 0
		cp = c.compare_param
		cp.comparison_flag, cp.name, cp.period, cp.meta_binary, cp.tags = 0, "", 0, b"", []
		cp.referred_count, cp.data_type, cp.status = 0, 0, 0
	return c


async def run(args):
	s = settings.load("default")
	s.configure(args.access_key, args.nex_version)
	async with backend.connect(s, args.host, args.port) as be:
		async with be.login(args.user, args.password) as client:
			pid = client.pid()
			step("secure-connected", pid=pid)
			dc = datastore.DataStoreClient(client)

			up = datastore.DataStoreGetNotificationUrlParam()
			up.previous_url = ""
			info = await dc.get_notification_url(up)
			with urllib.request.urlopen(info.url + info.key + info.query, timeout=10) as resp:
				body = resp.read().decode()
			step("notification-url", body=body)
			np = datastore.DataStoreGetNewArrivedNotificationsParam()
			np.last_notification_id, np.limit = 0, 10
			got = await dc.get_new_arrived_notifications(np)
			step("notifications", count=len(got.result), data_ids=",".join(str(n.data_id) for n in got.result),
				has_next=got.has_next, first_id=got.result[0].notification_id if got.result else 0)
			got = await dc.get_new_arrived_notifications_v1(np)
			step("notifications-v1", count=len(got.result), data_ids=",".join(str(n.data_id) for n in got.result))

			# Slot 0 locks permanently, slot 1 is modifiable.
			data_id = await dc.post_meta_binary(post_param("rated", [(0, 0, 3), (1, 4, 0)]))
			step("post-meta-binary", data_id=data_id)
			rr = await dc.rate_objects([target(data_id, 0), target(data_id, 1)], [rate(3), rate(4)], True, True)
			step("rate-objects", totals=",".join(str(r.total_value) for r in rr.infos), results=results(rr.results))
			try:
				await dc.rate_object(target(data_id, 0), rate(1), True)
				step("rate-locked", error="none")
			except common.RMCError as e:
				step("rate-locked", error=e.name())
			r = await dc.rate_object(target(data_id, 1), rate(1), True)
			step("rate-modifiable", total=r.total_value, count=r.count)
			wl = await dc.get_rating_with_log(target(data_id, 0), 0)
			step("rating-with-log", total=wl.rating.total_value, is_rated=wl.log.is_rated, pid=wl.log.pid, value=wl.log.rating_value)
			gr = await dc.get_ratings([data_id, 987654], 0)
			step("get-ratings", slots=",".join(str(len(x)) for x in gr.ratings), results=results(gr.results))
			await dc.reset_rating(target(data_id, 0), 0)
			rs = await dc.reset_ratings([data_id], True)
			r = await dc.get_rating(target(data_id, 1), 0)
			step("reset", results=results(rs), total=r.total_value, count=r.count)

			tp = datastore.DataStoreTouchObjectParam()
			tp.data_id, tp.lock_id, tp.access_password = data_id, 0, 0
			await dc.touch_object(tp)
			await dc.perpetuate_object(2, data_id, False)
			pi = await dc.get_persistence_infos(pid, [2, 3])
			step("persistence-infos", data_ids=",".join(str(p.data_id) for p in pi.infos), results=results(pi.results))
			await dc.unperpetuate_object(2, False)
			step("unperpetuated")

			gp = datastore.DataStorePrepareGetParam()
			gp.data_id = data_id
			om = await dc.prepare_get_object_or_meta_binary(gp)
			step("get-or-meta-binary", url=repr(om.get_info.url), owner=om.additional_meta.owner_id,
				meta=om.additional_meta.meta_binary.decode())
			try:
				await dc.prepare_get_object_or_meta_binary(datastore.DataStorePrepareGetParam())
				step("get-or-meta-binary-missing", error="none")
			except common.RMCError as e:
				step("get-or-meta-binary-missing", error=e.name())

			mine = await dc.post_meta_binary(post_param("mine"))
			pw = await dc.get_password_infos([mine, args.body_id])
			step("password-infos", nonzero=pw.infos[0].access_password != 0, results=results(pw.results))
			rs = await dc.change_metas([mine, args.body_id], [rename(mine, "renamed"), rename(args.body_id, "x")], False)
			step("change-metas", results=results(rs))
			rs = await dc.change_metas_v1([mine], [rename(mine, "renamed-v1", True)], True)
			mp = datastore.DataStoreGetMetaParam()
			mp.data_id = mine
			meta = await dc.get_meta(mp)
			step("change-metas-v1", results=results(rs), name=meta.name)

			await dc.post_meta_binary_with_data_id(5000, post_param("chosen"))
			rs = await dc.post_meta_binaries_with_data_id([5001, 5000], [post_param("a"), post_param("b")], False)
			step("post-with-data-id", results=results(rs))
			r = await dc.rate_object_with_posting(target(6000, 0), rate(5), post_param("posted", [(0, 0, 0)]), True)
			mp.data_id = 6000
			meta = await dc.get_meta(mp)
			step("rate-with-posting", total=r.total_value, name=meta.name)
			rr = await dc.rate_objects_with_posting([target(6000, 0), target(6001, 0)], [rate(1), rate(2)],
				[post_param("unused", [(0, 0, 0)]), post_param("posted2", [(0, 0, 0)])], True, True)
			step("rates-with-posting", totals=",".join(str(r.total_value) for r in rr.ratings), results=results(rr.results))

			oi = await dc.get_object_infos([args.body_id, mine])
			with urllib.request.urlopen(oi.infos[0].url, timeout=10) as resp:
				body = resp.read()
			step("object-infos", size=oi.infos[0].size, downloaded=len(body), results=results(oi.results))
	step("disconnected")


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=30500)
	parser.add_argument("--user", default="guest")
	parser.add_argument("--password", default="MMQea3n!fsik")
	parser.add_argument("--body-id", type=int, required=True)
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	run_guarded(run, args)


if __name__ == "__main__":
	main()
