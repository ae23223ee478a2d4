package types

import "testing"

func TestGates(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want bool
	}{
		{Settings{Version: Version3_4}, false},
		{Settings{Version: Version3_4, StructureHeader: true}, true}, // no console has headers below 3.5
		{Settings{Version: Version3_5, StructureHeader: true}, false},
		{Settings{Version: Version3_4, StructureHeader: true, Gates: GatesConsole}, false},
		{Settings{Version: Version3_4, Gates: GatesNintendoClients}, true},
		{Settings{Version: Version3_4, Gates: GatesNintendoClients, Learned: new(GateReading)}, false},
	} {
		if got := tc.s.NintendoClientsGates(); got != tc.want {
			t.Errorf("%+v: NintendoClientsGates %v, want %v", tc.s, got, tc.want)
		}
	}
	st := Settings{Version: Version3_4, Learned: new(GateReading)}
	if _, ok := (Settings{Version: Version3_4}).OtherGates(Version3_4, Version3_5); ok {
		t.Fatal("a connection that does not learn has another reading")
	}
	if _, ok := (Settings{Version: Version3_5, Learned: st.Learned}).OtherGates(Version3_4, Version3_5); ok {
		t.Fatal("another reading outside the disputed versions")
	}
	other, ok := st.OtherGates(Version3_4, Version3_5)
	if !ok || !other.NintendoClientsGates() || other.Learned != nil || other.GateMin(30400, 30500) != 30500 {
		t.Fatalf("OtherGates: %+v %v", other, ok)
	}
	st.Learn(other)
	if !st.NintendoClientsGates() || st.GateMin(30400, 30500) != 30500 {
		t.Fatal("Learn did not keep NintendoClients' reading")
	}
	back, _ := st.OtherGates(Version3_4, Version3_5)
	st.Learn(back)
	if st.NintendoClientsGates() {
		t.Fatal("Learn did not go back to the consoles' reading")
	}
	for _, name := range []string{"auto", "console", "nintendoclients"} {
		if g, err := ParseGates(name); err != nil || g.String() != name {
			t.Errorf("ParseGates(%q) = %v, %v", name, g, err)
		}
	}
	if _, err := ParseGates("wiki"); err == nil {
		t.Error("ParseGates accepted wiki")
	}
}
