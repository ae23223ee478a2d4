package record

import (
	"fmt"

	"github.com/gamewire/gamewire/prudp/wire"
)

// Names lists the dialect names Resolve accepts.
var Names = []string{"auto", wire.NameV0, wire.NameV0Friends, wire.NameV1, wire.NameLite, wire.NameQuazal, "quazal-2006", wire.NameHyperscape}

// Resolve returns the dialect to decode b with. name is "auto" (or empty), a dialect name
// (wire.NameV0, ...), or "quazal-2006" (Quazal with the 2006 packet types). checksum pins
// the Quazal checksum size (1 or 4; 0 = decide by which verifies, 1 when none does).
func Resolve(name string, b []byte, accessKey string, checksum int) (wire.Dialect, error) {
	if checksum != 0 && checksum != 1 && checksum != 4 {
		return nil, fmt.Errorf("--checksum must be 1 or 4, not %d", checksum)
	}
	if checksum != 0 && name != "" && name != "auto" && name != wire.NameQuazal && name != "quazal-2006" {
		return nil, fmt.Errorf("--checksum applies to quazal only (%s has a fixed checksum)", name)
	}
	switch name {
	case "", "auto":
		return wire.Detect(b, wire.DetectOptions{AccessKey: accessKey, QuazalChecksum: checksum})
	case wire.NameQuazal, "quazal-2006":
		opts := wire.QuazalOptions{ChecksumSize: checksum, Types2006: name == "quazal-2006"}
		if checksum == 0 {
			d, err := wire.Detect(b, wire.DetectOptions{AccessKey: accessKey, QuazalTypes2006: opts.Types2006,
				Candidates: []string{wire.NameQuazal}})
			if err == nil {
				return d, nil
			}
			opts.ChecksumSize = 1 // neither verifies: decode and report checksum_ok=false
		}
		return wire.NewQuazal(accessKey, opts), nil
	}
	if pr := ProfileOf(name); pr != nil {
		return pr.NewDialect(accessKey, wire.QuazalOptions{}), nil
	}
	return nil, fmt.Errorf("unknown dialect %q (want one of %v)", name, Names)
}
