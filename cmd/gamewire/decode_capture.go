package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gamewire/gamewire/dissect"
)

// captureFlags are the decode flags that only apply to capture files.
var captureFlags struct {
	keys           string
	stats          bool
	verbose        bool
	quiet          bool
	writeDecrypted string
	noProgress     bool
}

func init() {
	f := decodeCmd.Flags()
	f.StringVar(&captureFlags.keys, "keys", "", "keys file for captures (access keys, Kerberos keys, session keys, Pia keys; see docs/dissector.md)")
	f.BoolVar(&captureFlags.stats, "stats", false, "after the records, print per-flow statistics (dialect, packets, messages, retransmissions, bytes, handshake, RTT)")
	f.BoolVarP(&captureFlags.verbose, "verbose", "V", false, "text output: print each record's field tree")
	f.BoolVarP(&captureFlags.quiet, "quiet", "q", false, "do not print records (with --stats: statistics only)")
	f.StringVar(&captureFlags.writeDecrypted, "write-decrypted", "", "write the capture to this pcapng file with decrypted payloads")
	f.BoolVar(&captureFlags.noProgress, "no-progress", false, "never draw a progress bar")
}

// decodeCapture decodes a pcap or pcapng capture file ("-" for standard input).
func decodeCapture(cmd *cobra.Command, path string) (err error) {
	keys := &dissect.Keys{}
	if captureFlags.keys != "" {
		k, err := dissect.LoadKeys(captureFlags.keys)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		keys = k
	}
	if decodeFlags.accessKey != "" {
		keys.AccessKeys = append([]string{decodeFlags.accessKey}, keys.AccessKeys...)
	}
	overrides, err := dissect.ParseDialectOverrides(decodeFlags.dialect)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}

	var in io.Reader = cmd.InOrStdin()
	var size int64 = -1
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		in = f
	}

	cfg := dissect.Config{Keys: keys, Dialects: overrides}
	var bar *progressbar.ProgressBar
	if !captureFlags.noProgress && size > 4<<20 && term.IsTerminal(int(os.Stderr.Fd())) {
		bar = progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("decoding"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
		cfg.Progress = func(n int64) { _ = bar.Set64(n) }
	}
	var dw *dissect.DecryptedWriter
	if captureFlags.writeDecrypted != "" {
		out, err := os.Create(captureFlags.writeDecrypted)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		defer func() { // the last bytes reach the disk here: a failure is an error
			if cerr := out.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("decode: --write-decrypted: %w", cerr)
			}
		}()
		dw = dissect.NewDecryptedWriter(out)
		cfg.Decrypted = dw
	}

	w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	defer w.Flush()
	d := dissect.New(cfg)
	var buf []byte
	emit := func(r *dissect.Record) error {
		if captureFlags.quiet {
			return nil
		}
		buf = buf[:0]
		if decodeFlags.format == "json" {
			buf = r.AppendJSON(buf)
		} else {
			buf = r.AppendText(buf, d.Summary().FirstFrame)
			if captureFlags.verbose {
				buf = append(buf, '\n')
				buf = r.AppendTree(buf)
			}
		}
		buf = append(buf, '\n')
		_, err := w.Write(buf)
		return err
	}
	decErr := d.Decode(in, emit)
	if bar != nil {
		_ = bar.Finish() // clears the bar before the statistics are printed
	}
	if dw != nil {
		if err := dw.Flush(); err != nil && decErr == nil {
			decErr = err
		}
	}
	if captureFlags.stats {
		flows := d.Flows()
		if decodeFlags.format == "json" {
			for i := range flows {
				buf = flows[i].AppendJSON(buf[:0])
				buf = append(buf, '\n')
				w.Write(buf)
			}
		} else {
			fmt.Fprintln(w)
			dissect.WriteStatsTable(w, flows)
		}
	}
	if err := w.Flush(); err != nil && decErr == nil {
		decErr = err
	}
	if decErr != nil {
		if errors.Is(decErr, dissect.ErrTruncatedCapture) || errors.Is(decErr, dissect.ErrCorruptCapture) {
			s := d.Summary()
			return fmt.Errorf("decode: %w (%d frames decoded before it)", decErr, s.Frames)
		}
		return fmt.Errorf("decode: %w", decErr)
	}
	return nil
}
