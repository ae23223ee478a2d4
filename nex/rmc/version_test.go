package rmc

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// TestVersionErrorLoggedAsWarning: a call that fails because a structure came
// from a client of another NEX version is answered with its Result code and
// logged as a warning naming the structure and the versions (other bad
// parameters stay at debug level).
func TestVersionErrorLoggedAsWarning(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	verr := &types.Error{Field: "param", Err: &types.VersionError{Struct: "DataStoreSearchParam", Revision: 3, Max: 0,
		Version: types.Version4, Err: types.ErrVersion}}
	for _, c := range []struct {
		err    error
		logged bool
	}{
		{fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, verr), true},
		{fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, &types.Error{Field: "param", Err: types.ErrTruncated}), false},
	} {
		buf.Reset()
		h := HandlerFunc(func(ctx context.Context, call *Call, out []byte) ([]byte, error) { return out, c.err })
		msg, _ := (&Request{Protocol: 115, CallID: 1, Method: 12}).Append(nil)
		out, err := Dispatch(context.Background(), h, &Peer{}, msg, nil, log)
		if err != nil {
			t.Fatal(err)
		}
		resp, _, err := ParseResponse(out)
		if err != nil || resp.Result != types.DataStoreInvalidArgument {
			t.Fatalf("response %+v %v", resp, err)
		}
		got := buf.String()
		if c.logged != (strings.Contains(got, "level=WARN") && strings.Contains(got, "structure DataStoreSearchParam revision 3 (NEX 4.0.0 allows up to 0)")) {
			t.Errorf("%v: log %q", c.err, got)
		}
	}
}
