package interop

import (
	"fmt"
	"os"
	"testing"

	"github.com/gamewire/gamewire/interop/nexgo"
)

func TestMain(m *testing.M) {
	// nex-go's logger made ./log (this directory) when the binary started.
	if err := nexgo.RemoveLogFiles("."); err != nil {
		fmt.Fprintln(os.Stderr, "nex-go's log files:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestNoLogDirectoryLeft: nothing of nex-go's logger is left in this
// package's directory (the module root: it used to leave interop/log).
func TestNoLogDirectoryLeft(t *testing.T) {
	if _, err := os.Stat("log"); !os.IsNotExist(err) {
		entries, _ := os.ReadDir("log")
		t.Errorf("log directory left in %s: %v %v", must(os.Getwd()), err, entries)
	}
}

func must(s string, _ error) string { return s }
