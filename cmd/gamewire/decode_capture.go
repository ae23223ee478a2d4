package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/gamewire/gamewire/dissect"
	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/dyn"
	"github.com/gamewire/gamewire/nex/games"
)

// captureOptions are the decode flags that only apply to capture files.
type captureOptions struct {
	keys           string
	stats          bool
	verbose        bool
	quiet          bool
	writeDecrypted string
	noProgress     bool
	wiresharkLua   string
	variant        string
	nexVersion     string
	nexGates       string
	descs          nexDescOptions // --proto-dir (nex.go)
}

// register adds the capture flags to decode's flag set f.
func (c *captureOptions) register(f *pflag.FlagSet) {
	f.StringVar(&c.keys, "keys", "", "keys file for captures (access keys, Kerberos keys, session keys, Pia keys; see docs/dissector.md)")
	f.BoolVar(&c.stats, "stats", false, "after the records, print per-flow statistics (dialect, packets, messages, retransmissions, bytes, handshake, RTT)")
	f.BoolVarP(&c.verbose, "verbose", "v", false, "text output: print each record's field tree")
	// -V was this flag's shorthand before -v meant --verbose everywhere.
	f.BoolVarP(&c.verbose, "verbose-tree", "V", false, "text output: print each record's field tree")
	f.Lookup("verbose-tree").Hidden = true // documented as deprecated (docs/cli.md)
	f.BoolVarP(&c.quiet, "quiet", "q", false, "do not print records (with --stats: statistics only)")
	f.StringVar(&c.writeDecrypted, "write-decrypted", "", "write the capture to this pcapng file with decrypted payloads")
	f.BoolVar(&c.noProgress, "no-progress", false, "never draw a progress bar")
	f.StringVar(&c.variant, "variant", "", variantUsage(""))
	f.StringVar(&c.nexVersion, "nex-version", "", "NEX version the NEX calls' structures are decoded for (3.4, 3.5.1 or 30400), over --game's and the flow's game's (default: the flow's settings: 4.0 with 8-byte PIDs, 3.5 with structure headers, else 3.4)")
	registerNEXGates(f, &c.nexGates, "each flow starts in the consoles' reading (NintendoClients' with structure headers below NEX 3.5) and switches when a message decodes only in the other one, as serve does per connection")
	c.descs.register(f)
	f.StringVar(&c.wiresharkLua, "wireshark-plugin", "", "also write the Wireshark Lua dissector of the NEX descriptions to this file (as gamewire wireshark-plugin does), for the --write-decrypted pcapng")
}

// variantUsage is --variant's help, with the variant names known when help is shown.
func variantUsage(known string) string {
	if known == "" {
		known = "the suffix of a variant protocol's name, e.g. mk8 or eagle"
	}
	return "the protocols' variant to decode NEX calls with (" + known + "; comma-separated for several), over --game's"
}

// hookVariantHelp fills --variant's help with the variants of the built-in
// descriptions (dyn.Variants) when help is shown: derived from the descriptions,
// it cannot omit one, and parsing them costs the other commands nothing.
func hookVariantHelp(cmd *cobra.Command) {
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if set, err := desc.Builtin(); err == nil {
			if f := c.Flags().Lookup("variant"); f != nil {
				f.Usage = variantUsage(strings.Join(dyn.Variants(set), ", "))
			}
		}
		help(c, args)
	})
}

// captureOnlyFlags apply to capture files only: with --hex they would do nothing.
var captureOnlyFlags = []string{"keys", "stats", "verbose", "verbose-tree", "quiet", "write-decrypted", "no-progress", "wireshark-plugin", "variant", "nex-version", "nex-gates", "proto-dir"}

// checkInputFlags refuses flags that do not apply to the input given: a capture file
// with --hex or with --hex's own flags, --hex with a capture's flags.
func checkInputFlags(cmd *cobra.Command, args []string) error {
	changed := func(names []string) string {
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				return n
			}
		}
		return ""
	}
	if len(args) == 1 {
		if cmd.Flags().Changed("hex") {
			return errors.New("decode: give --hex or a capture file, not both")
		}
		if n := changed(prudpHexOnlyFlags); n != "" {
			return fmt.Errorf("decode: --%s applies to --hex, not to a capture file (captures take their keys from --access-key and --keys)", n)
		}
		if n := changed(piaSessionFlagNames); n != "" {
			return fmt.Errorf("decode: --%s applies to --hex, not to a capture file (a capture's Pia keys go in the --keys file: pia-key, pia-version, pia-network, ...; docs/dissector.md)", n)
		}
		return nil
	}
	if n := changed(captureOnlyFlags); n != "" {
		return fmt.Errorf("decode: --%s applies to a capture file, not to --hex", n)
	}
	return nil
}

// decodeCapture decodes a pcap or pcapng capture file ("-" for standard input).
func (o *decodeOptions) decodeCapture(cmd *cobra.Command, path string) (err error) {
	descs, err := o.capture.descs.set()
	if err != nil {
		return fmt.Errorf("decode: --proto-dir: %w", err)
	}
	if p := o.capture.wiresharkLua; p != "" {
		if err := writeWiresharkPlugin(cmd, p, descs); err != nil {
			return fmt.Errorf("decode: --wireshark-plugin: %w", err)
		}
	}
	keys, err := o.captureKeys()
	if err != nil {
		return err
	}
	overrides, err := dissect.ParseDialectOverrides(o.dialect)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	nexVersion, nexGates, err := parseNEXFlags(o.capture.nexVersion, o.capture.nexGates)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if err := dyn.CheckVariant(descs, o.capture.variant); err != nil {
		// A name no description has would quietly decode with the base protocols.
		return fmt.Errorf("decode: --variant %q: %w", o.capture.variant, err)
	}
	in, size, closeIn, err := openCaptureInput(cmd, path)
	if err != nil {
		return err
	}
	defer closeIn()

	cfg := dissect.Config{Keys: keys, Dialects: overrides, Variant: o.capture.variant, NEXVersion: nexVersion, NEXGates: nexGates, Descriptions: descs}
	if o.game != "" {
		// The game's variant of the NEX protocols and its NEX version decode its
		// RMC calls (docs/dissector.md "NEX methods").
		g, err := games.Find(o.game)
		if err != nil {
			return fmt.Errorf("decode: --game: %w", err)
		}
		cfg.Game = &g
	}
	bar := o.capture.progressBar(size)
	if bar != nil {
		cfg.Progress = func(n int64) { _ = bar.Set64(n) }
	}
	dw, closeOut, err := o.capture.decryptedOutput()
	if err != nil {
		return err
	}
	defer func() { // the last bytes reach the disk here: a failure is an error
		if cerr := closeOut(); cerr != nil && err == nil {
			err = fmt.Errorf("decode: --write-decrypted: %w", cerr)
		}
	}()
	if dw != nil {
		cfg.Decrypted = dw
	}

	w := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	defer w.Flush()
	d := dissect.New(cfg)
	emit := o.recordWriter(w, d)
	if size < 0 {
		// A stream (standard input, a pipe from tcpdump -w -): each record is
		// shown when it is decoded, not when 64 KiB of them have come.
		each := emit
		emit = func(r *dissect.Record) error {
			if err := each(r); err != nil {
				return err
			}
			return w.Flush()
		}
	}
	decErr := d.Decode(in, emit)
	if errors.Is(decErr, errInterrupted) || decErr != nil && cmd.Context().Err() != nil {
		// Stopped (Ctrl-C, SIGTERM) while reading a stream: what came is
		// decoded, and its statistics printed.
		fmt.Fprintf(cmd.ErrOrStderr(), "decode: stopped after %d frames\n", d.Summary().Frames)
		decErr = nil
	}
	if bar != nil {
		_ = bar.Finish() // clears the bar before the statistics are printed
	}
	if dw != nil {
		if err := dw.Flush(); err != nil && decErr == nil {
			decErr = err
		}
	}
	if errors.Is(decErr, dissect.ErrNotCapture) {
		return fmt.Errorf("decode: %w", decErr) // no statistics of a file that is no capture
	}
	if o.capture.stats {
		o.writeFlowStats(w, d.Flows())
	}
	if err := w.Flush(); err != nil && decErr == nil {
		decErr = err
	}
	if decErr != nil {
		if errors.Is(decErr, dissect.ErrTruncatedCapture) || errors.Is(decErr, dissect.ErrCorruptCapture) {
			return fmt.Errorf("decode: %w (%d frames decoded before it)", decErr, d.Summary().Frames)
		}
		return fmt.Errorf("decode: %w", decErr)
	}
	if hint := unrecognisedHint(d.Flows(), keys); hint != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), hint)
	}
	return nil
}

// captureKeys loads --keys and puts --access-key first among its access keys.
func (o *decodeOptions) captureKeys() (*dissect.Keys, error) {
	keys := &dissect.Keys{}
	if o.capture.keys != "" {
		k, err := dissect.LoadKeys(o.capture.keys)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		keys = k
	}
	if o.accessKey != "" {
		keys.AccessKeys = append([]string{o.accessKey}, keys.AccessKeys...)
	}
	return keys, nil
}

// openCaptureInput opens the capture ("-": standard input) and returns its size when
// it is a regular file (-1 otherwise) and a function that closes it.
func openCaptureInput(cmd *cobra.Command, path string) (io.Reader, int64, func(), error) {
	if path == "-" {
		// A read of standard input blocks until data comes: Ctrl-C and
		// SIGTERM (the command's context) end it, as the end of input does.
		return interruptible(cmd.Context(), cmd.InOrStdin()), -1, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("decode: %w", err)
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// decryptedOutput creates the file of --write-decrypted and its writer (nil without
// the flag) and returns the function that closes the file.
func (c *captureOptions) decryptedOutput() (*dissect.DecryptedWriter, func() error, error) {
	if c.writeDecrypted == "" {
		return nil, func() error { return nil }, nil
	}
	out, err := os.Create(c.writeDecrypted)
	if err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	return dissect.NewDecryptedWriter(out), out.Close, nil
}

// progressBar returns a progress bar on standard error for a capture of more than
// 4 MiB when standard error is a terminal and --no-progress is not given, else nil.
func (c *captureOptions) progressBar(size int64) *progressbar.ProgressBar {
	if c.noProgress || size <= 4<<20 || !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription("decoding"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))
}

// recordWriter returns the dissector's emit function: each record as one line of
// text (with -V its field tree) or JSON, or nothing with --quiet.
func (o *decodeOptions) recordWriter(w io.Writer, d *dissect.Dissector) func(*dissect.Record) error {
	var buf []byte
	return func(r *dissect.Record) error {
		if o.capture.quiet {
			return nil
		}
		buf = buf[:0]
		if o.format == "json" {
			buf = r.AppendJSON(buf)
		} else {
			buf = r.AppendText(buf, d.Summary().FirstFrame)
			if o.capture.verbose {
				buf = append(buf, '\n')
				buf = r.AppendTree(buf)
			}
		}
		buf = append(buf, '\n')
		_, err := w.Write(buf)
		return err
	}
}

// writeFlowStats prints --stats: one JSON object per flow, or a table after a blank line.
func (o *decodeOptions) writeFlowStats(w io.Writer, flows []dissect.FlowStats) {
	if o.format != "json" {
		fmt.Fprintln(w)
		dissect.WriteStatsTable(w, flows)
		return
	}
	var buf []byte
	for i := range flows {
		buf = flows[i].AppendJSON(buf[:0])
		buf = append(buf, '\n')
		w.Write(buf)
	}
}

// unrecognisedHint says what to try when a capture has flows and the dissector
// recognised none of them: the PRUDP dialects without a magic number are recognised
// by a checksum that verifies under an access key (docs/dissector.md).
func unrecognisedHint(flows []dissect.FlowStats, keys *dissect.Keys) string {
	if len(flows) == 0 {
		return ""
	}
	for _, f := range flows {
		if f.Protocol != "unknown" {
			return ""
		}
	}
	what := "give the game's access key with --access-key KEY or a keys file with --keys FILE"
	if len(keys.AccessKeys) > 0 {
		what = "no given access key verifies their checksums: check --access-key and --keys"
	}
	return fmt.Sprintf("decode: none of the %d flow(s) was recognised (every record is \"unknown\"); "+
		"%s, or name a flow's dialect with --dialect PORT=NAME (docs/dissector.md)", len(flows), what)
}

// errInterrupted is what an interruptible reader returns once its context
// ends.
var errInterrupted = errors.New("interrupted")

// interruptible returns a reader of r whose Read returns errInterrupted as
// soon as ctx ends, even while a Read of r is blocked (standard input with
// nothing to read). The goroutine copying r may outlive that until r's
// blocked Read returns; the process is ending then.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err) // nil: io.EOF for the reader
		close(copied)
	}()
	go func() {
		select {
		case <-ctx.Done():
			pw.CloseWithError(errInterrupted)
		case <-copied:
		}
	}()
	return pr
}
