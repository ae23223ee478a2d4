#!/usr/bin/env python3
"""Drive Super Mario Maker's DataStore (DataStore_SMM) on a NEX server with
NintendoClients' own DataStoreClientSMM (nintendo/nex/datastore_smm.py).

Written for gamewire's interop harness (not part of NintendoClients). Two
users log in as nc_client.py does. The maker posts a course with the client's
inherited post_meta_binary and reads the application configuration with its
get_application_config(_string). NintendoClients' SMM client describes only
methods 61 and 74, so the course record (71 UploadCourseRecord, 72
GetCourseRecord) and custom ranking (48 RateCustomRanking, 50
GetCustomRankingByDataId) calls go through the same client's RMC connection
(DataStoreClientSMM.client.request) with their parameters written and their
results read by NintendoClients' streams and common.Structure (the
structures below, from the nintendo-wiki's Super Mario Maker page). Every
step prints one "STEP ..." line; the exit status is 0 only when all
succeeded.
"""

import argparse
import os
import sys

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

from nintendo.nex import backend, common, datastore_smm, settings, streams  # noqa: E402
from nc_common import run_guarded, step  # noqa: E402


class DataStoreRateCustomRankingParam(common.Structure):
	def __init__(self, data_id, application_id, score, period):
		super().__init__()
		self.data_id, self.application_id, self.score, self.period = data_id, application_id, score, period

	def save(self, stream, version):
		stream.u64(self.data_id)
		stream.u32(self.application_id)
		stream.u32(self.score)
		stream.u16(self.period)


class DataStoreGetCustomRankingByDataIdParam(common.Structure):
	def __init__(self, application_id, data_ids, result_option):
		super().__init__()
		self.application_id, self.data_ids, self.result_option = application_id, data_ids, result_option

	def save(self, stream, version):
		stream.u32(self.application_id)
		stream.list(self.data_ids, stream.u64)
		stream.u8(self.result_option)


class DataStoreCustomRankingResult(common.Structure):
	def load(self, stream, version):
		self.order = stream.u32()
		self.score = stream.u32()
		self.meta_info = stream.extract(datastore_smm.DataStoreMetaInfo)


class DataStoreUploadCourseRecordParam(common.Structure):
	def __init__(self, data_id, slot, score):
		super().__init__()
		self.data_id, self.slot, self.score = data_id, slot, score

	def save(self, stream, version):
		stream.u64(self.data_id)
		stream.u8(self.slot)
		stream.s32(self.score)


class DataStoreGetCourseRecordParam(common.Structure):
	def __init__(self, data_id, slot):
		super().__init__()
		self.data_id, self.slot = data_id, slot

	def save(self, stream, version):
		stream.u64(self.data_id)
		stream.u8(self.slot)


class DataStoreGetCourseRecordResult(common.Structure):
	def load(self, stream, version):
		self.data_id = stream.u64()
		self.slot = stream.u8()
		self.first_pid = stream.u32()
		self.best_pid = stream.u32()
		self.best_score = stream.s32()
		self.created_time = stream.datetime()
		self.updated_time = stream.datetime()


async def call(dc, method, write, read=None):
	"""Calls DataStore_SMM method on dc's RMC connection; read(stream) reads the results to their end."""
	out = streams.StreamOut(dc.settings)
	write(out)
	data = await dc.client.request(dc.PROTOCOL_ID, method, out.get())
	stream = streams.StreamIn(data, dc.settings)
	result = read(stream) if read else None
	if not stream.eof():
		raise ValueError("method %d: %d bytes left after the results" % (method, stream.available()))
	return result


def course(name):
	p = datastore_smm.DataStorePreparePostParam()
	p.size, p.name, p.data_type, p.meta_binary = 0, name, 7, b"course-" + name.encode()
	p.flag, p.period, p.tags, p.extra_data = 0, 90, [], []
	p.permission.permission = 0
	p.delete_permission.permission = 3
	p.persistence_init_param.persistence_slot_id = 65535
	return p


async def run(args):
	s = settings.load("default")
	s.configure(args.access_key, args.nex_version)
	async with backend.connect(s, args.host, args.port) as be:
		async with be.login(args.user_a, args.password_a) as ca, be.login(args.user_b, args.password_b) as cb:
			maker, player = datastore_smm.DataStoreClientSMM(ca), datastore_smm.DataStoreClientSMM(cb)
			step("logged-in", a=ca.pid(), b=cb.pid())
			a = await maker.post_meta_binary(course("castle"))
			b = await maker.post_meta_binary(course("airship"))
			step("courses", a=a, b=b)

			cfg = await maker.get_application_config(0)
			step("application-config-0", count=len(cfg), uploads=cfg[10] if len(cfg) > 10 else -1)
			cfg = await maker.get_application_config(1)
			step("application-config-1", values=",".join(str(v) for v in cfg))
			cfgs = await maker.get_application_config_string(0)
			step("application-config-string-0", count=len(cfgs))

			# Course records: the player clears first in 5000, then the maker in 4200, then the player in 4800.
			for who, score in ((player, 5000), (maker, 4200), (player, 4800)):
				await call(who, 71, lambda out, score=score: out.add(DataStoreUploadCourseRecordParam(a, 0, score)))
			rec = await call(player, 72, lambda out: out.add(DataStoreGetCourseRecordParam(a, 0)),
				lambda st: st.extract(DataStoreGetCourseRecordResult))
			step("course-record", data_id=rec.data_id, first_pid=rec.first_pid, best_pid=rec.best_pid, best_score=rec.best_score,
				created=rec.created_time.val != 0)
			try:
				await call(player, 72, lambda out: out.add(DataStoreGetCourseRecordParam(b, 0)),
					lambda st: st.extract(DataStoreGetCourseRecordResult))
				step("course-record-none", error="none")
			except common.RMCError as e:
				step("course-record-none", error=e.name())

			# Custom ranking (stars): the player stars both courses, b twice.
			await call(player, 48, lambda out: out.list([DataStoreRateCustomRankingParam(a, 0, 1, 0),
				DataStoreRateCustomRankingParam(b, 0, 2, 0)], out.add))

			def read_ranking(st):
				return st.list(lambda: st.extract(DataStoreCustomRankingResult)), st.list(st.result)
			ranking, results = await call(maker, 50, lambda out: out.add(DataStoreGetCustomRankingByDataIdParam(0, [a, b, 999999], 4)),
				read_ranking)
			step("custom-ranking", entries=";".join("%d:%d:%d:%s" % (r.meta_info.data_id, r.order, r.score, r.meta_info.meta_binary.decode())
				for r in ranking), results=",".join(r.name() for r in results))

			meta = datastore_smm.DataStoreGetMetaParam()
			meta.data_id, meta.result_option = a, 4
			meta.persistence_target.owner_id, meta.persistence_target.persistence_id = 0, 65535
			info = await player.get_meta(meta)
			step("get-meta", name=info.name, owner=info.owner_id, meta=info.meta_binary.decode())
	step("disconnected")


def main():
	p = argparse.ArgumentParser()
	p.add_argument("--host", default="127.0.0.1")
	p.add_argument("--port", type=int, required=True)
	p.add_argument("--access-key", required=True)
	p.add_argument("--nex-version", type=int, required=True)
	p.add_argument("--user-a", required=True)
	p.add_argument("--password-a", required=True)
	p.add_argument("--user-b", required=True)
	p.add_argument("--password-b", required=True)
	p.add_argument("--timeout", type=float, default=60)
	run_guarded(run, p.parse_args())


if __name__ == "__main__":
	main()
