package nex

import (
	"testing"

	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestNEXVersionInEverySettings: Server.NEXVersion goes into the settings of
// every connection, whatever else decides them (the per-connection PRUDP minor
// version, or Settings), so every service reads one version; 0 leaves it to
// types.Settings.NEXVersion.
func TestNEXVersionInEverySettings(t *testing.T) {
	for _, c := range []struct {
		version  types.Version
		settings *types.Settings
		want     types.Version
	}{
		{30400, nil, 30400},
		{30400, &types.Settings{StructureHeader: true}, 30400},
		{0, &types.Settings{StructureHeader: true, Version: 30600}, 30600},
		{0, nil, 0},
	} {
		srv := &Server{Accounts: testAccounts(), NEXVersion: c.version, Settings: c.settings}
		if err := srv.init(); err != nil {
			t.Fatal(err)
		}
		for _, scheme := range []string{"prudp", "prudps"} {
			p := srv.peer(new(prudp.Conn), scheme)
			if p.Settings.Version != c.want {
				t.Errorf("NEXVersion %v, Settings %+v, %s: peer version %v, want %v", c.version, c.settings, scheme, p.Settings.Version, c.want)
			}
		}
	}
}
