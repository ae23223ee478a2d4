// Package codecbench measures the generated Ranking codecs
// (nex/protocols/ranking) against the hand-written ones they replaced
// (handwritten_test.go), on the same bytes, and checks that both read and write
// those bytes alike. docs/performance.md "Generated protocol codecs" has the
// figures.
package codecbench

import (
	"bytes"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// settings is a NEX 3.6 connection: structure headers, RankingRankData
// revision 1 (updateTime).
var settings = types.Settings{StructureHeader: true, Version: 30600}

func sampleResult() Result {
	res := Result{TotalCount: 250, SinceTime: 1 << 40}
	for i := range 10 {
		res.Data = append(res.Data, RankData{PID: types.PID(1000 + i), UniqueID: uint64(i), Order: uint32(i + 1), Category: 7,
			Score: uint32(9000 - i), Groups: []byte{1, 2}, Param: 42, CommonData: bytes.Repeat([]byte{byte(i)}, 32), UpdateTime: 1 << 41})
	}
	return res
}

func sampleScore() ScoreData {
	return ScoreData{Category: 7, Score: 9000, OrderBy: 0, UpdateMode: 1, Groups: []byte{1, 2}, Param: 42}
}

func encode(t testing.TB, f func(w *types.Writer)) []byte {
	w := types.NewWriter(nil, settings)
	f(&w)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameBytes: for each benchmarked structure the generated codec reads the
// hand-written one's bytes and writes them again, at NEX 3.4 (no headers), 3.5
// (revision 0) and 3.6 (revision 1, updateTime).
func TestSameBytes(t *testing.T) {
	for _, st := range []types.Settings{{Version: 30400}, {StructureHeader: true, Version: 30500}, settings} {
		withTime := st.Version >= 30600
		res := sampleResult()
		w := types.NewWriter(nil, st)
		res.Append(&w, withTime)
		old, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		var gr rk.RankingResult
		r := types.NewReader(old, st)
		gr.Read(&r, "result")
		if err := r.Done(); err != nil || len(gr.Data) != 10 || gr.Total != 250 || gr.Data[3].Rank != 4 {
			t.Fatalf("%v: RankingResult: %+v %v", st.Version, gr, err)
		}
		if withTime != (gr.Data[0].UpdateTime == 1<<41) {
			t.Errorf("%v: updateTime %v", st.Version, gr.Data[0].UpdateTime)
		}
		w = types.NewWriter(nil, st)
		gr.Append(&w)
		if b, _ := w.Bytes(); !bytes.Equal(b, old) {
			t.Errorf("%v: RankingResult:\n generated %x\n hand      %x", st.Version, b, old)
		}
		sd := sampleScore()
		w = types.NewWriter(nil, st)
		sd.Append(&w)
		old, _ = w.Bytes()
		var gs rk.RankingScoreData
		r = types.NewReader(old, st)
		gs.Read(&r, "score_data")
		if err := r.Done(); err != nil || gs.Score != 9000 || gs.UpdateMode != 1 {
			t.Fatalf("%v: RankingScoreData: %+v %v", st.Version, gs, err)
		}
		w = types.NewWriter(nil, st)
		gs.Append(&w)
		if b, _ := w.Bytes(); !bytes.Equal(b, old) {
			t.Errorf("%v: RankingScoreData:\n generated %x\n hand      %x", st.Version, b, old)
		}
	}
}

func BenchmarkDecodeScoreData(b *testing.B) {
	sd := sampleScore()
	data := encode(b, sd.Append)
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = ReadScoreData(&r, "scoreData")
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var s rk.RankingScoreData
		s.Read(&r, "score_data")
		return r.Done()
	})
}

func BenchmarkDecodeOrderParam(b *testing.B) {
	op := OrderParam{GroupIndex: NoGroup, TimeScope: 2, Length: 10}
	data := encode(b, op.Append)
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = ReadOrderParam(&r, "orderParam")
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var p rk.RankingOrderParam
		p.Read(&r, "order")
		return r.Done()
	})
}

func BenchmarkEncodeResult(b *testing.B) {
	res := sampleResult()
	var gr rk.RankingResult
	r := types.NewReader(encode(b, func(w *types.Writer) { res.Append(w, true) }), settings)
	gr.Read(&r, "result")
	buf := make([]byte, 0, 4096)
	testutil.BenchPair(b, func() error {
		w := types.NewWriter(buf[:0], settings)
		res.Append(&w, true)
		return w.Err()
	}, func() error {
		w := types.NewWriter(buf[:0], settings)
		gr.Append(&w)
		return w.Err()
	})
}

func BenchmarkDecodeResult(b *testing.B) {
	res := sampleResult()
	data := encode(b, func(w *types.Writer) { res.Append(w, true) })
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, settings)
		_ = ReadResult(&r, "pResult", true)
		return r.Done()
	}, func() error {
		r := types.NewReader(data, settings)
		var res rk.RankingResult
		res.Read(&r, "result")
		return r.Done()
	})
}
