package hpp

import (
	"bytes"
	"testing"
)

// FuzzHPPMessages: parseResponse (the client's reading of a response) and
// readFile (the server's reading of a multipart body) never panic, and
// stripProtocol of a packed response parses back.
func FuzzHPPMessages(f *testing.F) {
	// A success response to call 1 method 6 with 2 result bytes, and an error
	// response (DataStore::NotFound), as NintendoClients' HppClient reads them.
	f.Add([]byte{11, 0, 0, 0, 1, 1, 0, 0, 0, 6, 0x80, 0, 0, 0xAA, 0xBB}[0:15])
	f.Add([]byte{9, 0, 0, 0, 0, 4, 0, 0x6C, 0x80, 1, 0, 0, 0})
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nxyz\r\n--b--\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseResponse(b, 1, 6)
		_, _ = readFile(bytes.NewReader(b), "multipart/form-data; boundary=b", DefaultMaxRequestBytes)
		if s, err := stripProtocol(b); err == nil && len(s) < 4 {
			t.Fatalf("stripProtocol gave %d bytes", len(s))
		}
	})
}
