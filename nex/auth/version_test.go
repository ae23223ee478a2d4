package auth

import (
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// TestConnectionDataRevision: RVConnectionData's revision 1 (the server time)
// goes to connections of NEX 3.5 and later; a NEX 3.4 connection with
// structure headers (serve --nex-version 30400) gets revision 0, which its
// clients read without a warning.
func TestConnectionDataRevision(t *testing.T) {
	srv := &Server{}
	for _, c := range []struct {
		st   types.Settings
		want uint8
	}{
		{types.Settings{StructureHeader: true}, 1},
		{types.Settings{StructureHeader: true, Version: types.Version3_5}, 1},
		{types.Settings{StructureHeader: true, Version: types.Version3_4}, 0},
		{types.Settings{}, 0},
	} {
		d := srv.connectionData(types.NewStationURL("prudps"), c.st)
		if d.Version != c.want || (c.want == 0) != (d.CurrentUTCTime == 0) {
			t.Errorf("%+v: revision %d time %v, want revision %d", c.st, d.Version, d.CurrentUTCTime, c.want)
		}
	}
}
