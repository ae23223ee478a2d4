package auth

import (
	"bytes"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// TestConnectionDataRevision: RVConnectionData's revision 1 (the server time)
// goes to connections of NEX 3.5 and later; a NEX 3.4 connection with
// structure headers (serve --nex-version 30400) gets revision 0, which its
// clients read without a warning. The bytes are the hand-written codec's
// (types.RVConnectionData), which the generated one replaced.
func TestConnectionDataRevision(t *testing.T) {
	srv := &Server{Now: func() time.Time { return testNow }}
	url := types.NewStationURL("prudps")
	for _, c := range []struct {
		st   types.Settings
		want uint8
	}{
		{types.Settings{StructureHeader: true}, 1},
		{types.Settings{StructureHeader: true, Version: types.Version3_5}, 1},
		{types.Settings{StructureHeader: true, Version: types.Version3_4}, 0},
		{types.Settings{}, 0},
	} {
		d := srv.connectionData(url, c.st)
		got := encode(t, c.st, &d)
		want, err := types.RVConnectionData{RegularURL: url, Version: c.want, CurrentUTCTime: types.DateTimeFromTime(testNow)}.Append(nil, c.st)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || (c.st.StructureHeader && got[0] != c.want) {
			t.Errorf("%+v: % x, want revision %d: % x", c.st, got, c.want, want)
		}
	}
}
