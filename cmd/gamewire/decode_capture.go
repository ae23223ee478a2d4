package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// decodeCapture decodes a pcap or pcapng capture file ("-" for standard input).
func decodeCapture(cmd *cobra.Command, path string) error {
	return errors.New("decode: capture decoding is being built (issue: dissector)")
}
