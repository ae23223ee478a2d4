#!/usr/bin/env python3
"""Use a NEX server's Ranking and DataStore with NintendoClients' own clients.

Written for gamewire's interop harness (not part of NintendoClients). It logs
in as nc_client.py does (backend.connect + login), then drives the generated
RankingClient and DataStoreClient (nintendo/nex/ranking.py, datastore.py):

  Ranking: upload_score, get_ranking (global), upload_common_data,
  get_common_data, get_ranking for a category nobody uploaded to (an error);
  DataStore: prepare_post_object, the body POSTed to the URL and form fields
  the server handed out, complete_post_object, get_meta, prepare_get_object,
  the body fetched from its URL, get_meta of an object that does not exist
  (an error).

NintendoClients moves no DataStore bodies itself (a console does that over
HTTP): the POST and GET here use Python's urllib. Every step prints one
"STEP ..." line; the exit status is 0 only when all succeeded.
"""

import argparse
import os
import sys
import urllib.request

sys.path.insert(0, os.environ.get("NINTENDOCLIENTS_DIR", "/tmp/nintendoclients"))

import anyio  # noqa: E402

from nintendo.nex import backend, common, datastore, ranking, settings  # noqa: E402
from nc_common import post_form, run_guarded, step  # noqa: E402


async def run(args):
	s = settings.load("default")
	s.configure(args.access_key, args.nex_version)
	async with backend.connect(s, args.host, args.port) as be:
		async with be.login(args.user, args.password) as client:
			step("secure-connected", pid=client.pid())

			rc = ranking.RankingClient(client)
			score = ranking.RankingScoreData()
			score.category, score.score, score.order, score.update_mode = 7, 4321, 0, 0
			score.groups, score.param = [1, 2], 99
			await rc.upload_score(score, 0)
			step("ranking-upload", category=7, score=4321)
			order = ranking.RankingOrderParam()
			order.count = 10
			result = await rc.get_ranking(ranking.RankingMode.GLOBAL, 7, order, 0, client.pid())
			for d in result.data:
				step("ranking-entry", rank=d.rank, pid=d.pid, score=d.score, param=d.param,
					groups=",".join(str(g) for g in d.groups), category=d.category)
			step("ranking-total", total=result.total)
			await rc.upload_common_data(b"mii-data", 0)
			data = await rc.get_common_data(0)
			step("ranking-common-data", data=data.decode())
			try:
				await rc.get_ranking(ranking.RankingMode.GLOBAL, 999, order, 0, client.pid())
				step("ranking-unknown-category", error="none")
			except common.RMCError as e:
				step("ranking-unknown-category", error=e.name())

			dc = datastore.DataStoreClient(client)
			body = b"a DataStore body from NintendoClients" * 3
			param = datastore.DataStorePreparePostParam()
			param.size, param.name, param.data_type, param.meta_binary = len(body), "nc-object", 5, b"meta"
			param.flag, param.period, param.tags, param.extra_data = 0, 30, ["nc"], []
			param.permission.permission = 0
			info = await dc.prepare_post_object(param)
			step("datastore-prepare-post", data_id=info.data_id, fields=len(info.form))
			status = post_form(info.url, info.form, body)
			step("datastore-upload", status=status)
			done = datastore.DataStoreCompletePostParam()
			done.data_id, done.success = info.data_id, True
			await dc.complete_post_object(done)
			step("datastore-complete-post", data_id=info.data_id)
			mp = datastore.DataStoreGetMetaParam()
			mp.data_id, mp.result_option = info.data_id, 7
			meta = await dc.get_meta(mp)
			step("datastore-meta", data_id=meta.data_id, owner=meta.owner_id, size=meta.size, name=meta.name,
				data_type=meta.data_type, tags=",".join(meta.tags), meta_binary=meta.meta_binary.decode())
			gp = datastore.DataStorePrepareGetParam()
			gp.data_id = info.data_id
			get = await dc.prepare_get_object(gp)
			with urllib.request.urlopen(get.url, timeout=10) as resp:
				got = resp.read()
			step("datastore-download", size=get.size, data_id=get.data_id, equal=(got == body))
			try:
				mp.data_id = 987654
				await dc.get_meta(mp)
				step("datastore-missing", error="none")
			except common.RMCError as e:
				step("datastore-missing", error=e.name())
	step("disconnected")


def main():
	parser = argparse.ArgumentParser()
	parser.add_argument("--host", default="127.0.0.1")
	parser.add_argument("--port", type=int, default=60000)
	parser.add_argument("--access-key", required=True)
	parser.add_argument("--nex-version", type=int, default=30500)
	parser.add_argument("--user", default="guest")
	parser.add_argument("--password", default="MMQea3n!fsik")
	parser.add_argument("--timeout", type=float, default=60)
	args = parser.parse_args()
	run_guarded(run, args)


if __name__ == "__main__":
	main()
