package nexgo

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestMain(m *testing.M) {
	if err := RemoveLogFiles("."); err != nil {
		fmt.Fprintln(os.Stderr, "nex-go's log files:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestNoLogDirectoryLeft: this test binary links nex-go, whose logger
// creates ./log at initialization; once TestMain ran, its working directory
// (this package's) has no log directory.
func TestNoLogDirectoryLeft(t *testing.T) {
	if _, err := os.Stat("log"); !os.IsNotExist(err) {
		entries, _ := os.ReadDir("log")
		t.Errorf("log directory left in the package directory: %v %v", err, entries)
	}
}

// TestRemoveLogFiles: the six log files go whatever they hold, other files stay,
// and the directory goes only when empty.
func TestRemoveLogFiles(t *testing.T) {
	for _, other := range []bool{false, true} {
		dir := t.TempDir()
		logDir := filepath.Join(dir, "log")
		if err := os.Mkdir(logDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, name := range logFiles {
			if err := os.WriteFile(filepath.Join(logDir, name), []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if other {
			if err := os.WriteFile(filepath.Join(logDir, "mine.txt"), []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := RemoveLogFiles(dir); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(logDir)
		switch {
		case !other && !os.IsNotExist(err):
			t.Errorf("log directory kept: %v %v", entries, err)
		case other && (err != nil || len(entries) != 1 || entries[0].Name() != "mine.txt"):
			t.Errorf("with another file: %v %v; want only mine.txt", entries, err)
		}
	}
	if err := RemoveLogFiles(t.TempDir()); err != nil {
		t.Errorf("no log directory: %v", err)
	}
}
