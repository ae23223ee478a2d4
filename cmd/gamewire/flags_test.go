package main

import "github.com/spf13/pflag"

// resetFlags puts every changed flag of the sets back to its default (a
// slice flag back to empty: Set would append its default to it), so that a
// later test's run of the same subcommand starts from pristine flags: cobra
// keeps flag values between Execute calls.
func resetFlags(sets ...*pflag.FlagSet) {
	for _, fs := range sets {
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Changed {
				return
			}
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				sv.Replace(nil)
			} else {
				f.Value.Set(f.DefValue)
			}
			f.Changed = false
		})
	}
}
