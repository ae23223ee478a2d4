package harness

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// nexgoLogFiles are the files nex-go's package logger (PretendoNetwork/plogger-go,
// created when nex-go is initialized, before main runs) opens in ./log under
// the process's working directory. The logger cannot be replaced or pointed
// elsewhere, and it also prints every line to stdout.
var nexgoLogFiles = []string{"all.log", "critical.log", "error.log", "warning.log", "success.log", "info.log"}

// RemoveNexgoLogFiles undoes what nex-go's logger did to the working
// directory when the process started: it removes ./log/*.log files of the
// logger's names that are still empty, and ./log when nothing else is in it.
// Call it first thing in main of a command that links nex-go: the logger
// keeps its files open, so what it writes later goes to unlinked files that
// vanish with the process, however it ends (bench servers are killed by
// their parent). A log file that already holds text (another program's log
// in the directory the command was started from) is left alone.
func RemoveNexgoLogFiles() error {
	const logDir = "log"
	var errs []error
	for _, name := range nexgoLogFiles {
		p := filepath.Join(logDir, name)
		st, err := os.Stat(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if st.Mode().IsRegular() && st.Size() == 0 {
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if entries, err := os.ReadDir(logDir); err == nil && len(entries) == 0 {
		if err := os.Remove(logDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
