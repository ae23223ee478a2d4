package nexgo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// logFiles are the files nex-go's package logger (PretendoNetwork/plogger-go,
// created when nex-go is initialized, before main or TestMain runs) opens in
// ./log under the process's working directory. The logger cannot be replaced
// or pointed elsewhere; it also prints every line to stdout.
var logFiles = []string{"all.log", "critical.log", "error.log", "warning.log", "success.log", "info.log"}

// RemoveLogFiles removes the log directory nex-go's logger made in dir (the
// working directory of a test binary: its package's directory): the six log
// files, whatever they hold, and dir/log itself when nothing else is in it.
// Call it first thing in TestMain. The logger keeps its files open, so what it
// writes afterwards goes to unlinked files that vanish with the process, and a
// test run leaves nothing behind, however it ends.
func RemoveLogFiles(dir string) error {
	logDir := filepath.Join(dir, "log")
	var errs []error
	for _, name := range logFiles {
		if err := os.Remove(filepath.Join(logDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	entries, err := os.ReadDir(logDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		errs = append(errs, err)
	case len(entries) == 0:
		if err := os.Remove(logDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
