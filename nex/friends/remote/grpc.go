package remote

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// The gRPC method a Pretendo friends server answers friend lists with
// (PretendoNetwork/grpc-protobufs friends/friends_service.proto: package
// friends, service Friends) and the metadata its interceptor reads the API key
// from (PretendoNetwork/friends grpc/api_key_interceptor.go; gRPC metadata
// names are lower case on the wire).
const (
	MethodGetUserFriendPIDs = "/friends.Friends/GetUserFriendPIDs"
	APIKeyMetadata          = "x-api-key"
)

// grpcSource asks a friends server's gRPC API.
type grpcSource struct {
	src    *Source
	base   string // http://HOST:PORT or https://HOST:PORT
	client *http.Client
}

func (g *grpcSource) fetch(ctx context.Context, pid types.PID) ([]types.PID, error) {
	s := g.src
	if pid > math.MaxUint32 {
		return nil, s.fail(ErrSource, pid, "the gRPC API takes 32-bit PIDs")
	}
	body := AppendFrame(nil, AppendFriendPIDsRequest(nil, uint32(pid)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+MethodGetUserFriendPIDs, bytes.NewReader(body))
	if err != nil {
		return nil, s.fail(ErrSource, pid, "%v", err)
	}
	// gRPC over HTTP/2 (PROTOCOL-HTTP2.md "Requests").
	req.Header.Set("Content-Type", "application/grpc+proto")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", "gamewire-friends-source")
	if d, ok := ctx.Deadline(); ok {
		if ms := max(time.Until(d).Milliseconds(), 1); ms < 1e8 { // grpc-timeout takes at most 8 digits
			req.Header.Set("grpc-timeout", strconv.FormatInt(ms, 10)+"m")
		}
	}
	if s.o.Key != "" {
		req.Header.Set(APIKeyMetadata, s.o.Key)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, s.fail(ErrSource, pid, "GetUserFriendPIDs: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, s.fail(ErrSource, pid, "GetUserFriendPIDs: HTTP status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
		return nil, s.fail(ErrMalformed, pid, "GetUserFriendPIDs: content type %q is not gRPC's", ct)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.o.MaxResponse)+1))
	if err != nil {
		return nil, s.fail(ErrSource, pid, "GetUserFriendPIDs: reading the answer: %v", err)
	}
	if len(data) > s.o.MaxResponse {
		return nil, s.fail(ErrTooLarge, pid, "GetUserFriendPIDs: an answer beyond %d bytes", s.o.MaxResponse)
	}
	// The status is in the trailers, or in the headers of a Trailers-Only
	// answer (an error without a message).
	status, msg := resp.Trailer.Get("grpc-status"), resp.Trailer.Get("grpc-message")
	if status == "" {
		status, msg = resp.Header.Get("grpc-status"), resp.Header.Get("grpc-message")
	}
	if status == "" {
		return nil, s.fail(ErrMalformed, pid, "GetUserFriendPIDs: no grpc-status")
	}
	if status != "0" {
		if m, err := url.PathUnescape(msg); err == nil {
			msg = m
		}
		return nil, s.fail(ErrSource, pid, "GetUserFriendPIDs: gRPC status %s (%s): %q", status, codeName(status), msg)
	}
	m, n, err := ParseFrame(data)
	if err != nil {
		return nil, s.fail(ErrMalformed, pid, "GetUserFriendPIDs: %v", err)
	}
	if n != len(data) {
		return nil, s.fail(ErrMalformed, pid, "GetUserFriendPIDs: %d bytes after the answer", len(data)-n)
	}
	pids, err := ParseFriendPIDsResponse(m, MaxFriends)
	if err != nil {
		return nil, s.fail(ErrMalformed, pid, "GetUserFriendPIDs: %v", err)
	}
	out := make([]types.PID, len(pids))
	for i, p := range pids {
		out[i] = types.PID(p)
	}
	return out, nil
}

// codeName names the gRPC status codes (grpc/grpc doc/statuscodes.md).
func codeName(code string) string {
	names := []string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
		"PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented", "Internal",
		"Unavailable", "DataLoss", "Unauthenticated"}
	if n, err := strconv.Atoi(code); err == nil && n >= 0 && n < len(names) {
		return names[n]
	}
	return "unknown code"
}
