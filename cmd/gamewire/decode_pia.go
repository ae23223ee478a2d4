package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// piaRequested reports whether the decode flags ask for a Pia packet.
func piaRequested(cmd *cobra.Command) bool { return false }

// decodePia decodes the Pia packet in --hex.
func decodePia(cmd *cobra.Command) error {
	return errors.New("decode: Pia decoding is being built (issue: Pia)")
}
