package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveNexgoLogFiles: in the working directory, the logger's empty files
// go and the directory with them; a log file holding text and other files stay,
// and so does the directory then.
func TestRemoveNexgoLogFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra map[string]string // more files in log/
		keep  []string          // what must remain in log/ (nil: no log/ at all)
	}{
		{"fresh", nil, nil},
		{"text-kept", map[string]string{"all.log": "[2026-11-24] INFO ...\n"}, []string{"all.log"}},
		{"other-file-kept", map[string]string{"mine.txt": "x"}, []string{"mine.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			if err := os.Mkdir("log", 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range nexgoLogFiles {
				if err := os.WriteFile(filepath.Join("log", name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range c.extra {
				if err := os.WriteFile(filepath.Join("log", name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := RemoveNexgoLogFiles(); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir("log")
			if c.keep == nil {
				if !os.IsNotExist(err) {
					t.Fatalf("log/ left: %v %v", entries, err)
				}
				return
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if err != nil || len(names) != len(c.keep) || names[0] != c.keep[0] {
				t.Errorf("log/ holds %v (%v), want %v", names, err, c.keep)
			}
		})
	}
	t.Chdir(t.TempDir())
	if err := RemoveNexgoLogFiles(); err != nil {
		t.Errorf("no log/: %v", err)
	}
}
