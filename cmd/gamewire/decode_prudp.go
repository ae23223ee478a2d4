package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// decodePRUDP decodes the PRUDP packets in --hex.
func decodePRUDP(cmd *cobra.Command) error {
	return errors.New("decode: PRUDP decoding is being built (issue: foundation)")
}
