package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/types"
)

// HTTPAnswer is what an HTTP friends source answers for one player (gamewire's
// own format, docs/nex.md "Friends"):
//
//	GET URL/{pid}   (or URL with {pid} replaced, when it has one)
//	Accept: application/json
//	Authorization: Bearer KEY   (when a key is set)
//
//	200 {"pid": 1234, "friends": [5678, 9012]}
//
// A 404 answers that the player has no friends (a player the source does not
// know); any other status, a redirect, an answer for another PID or one that
// does not decode is an error. "pid" may be left out.
type HTTPAnswer struct {
	PID     *uint64  `json:"pid,omitempty"`
	Friends []uint64 `json:"friends"`
}

// httpSource asks a JSON endpoint.
type httpSource struct {
	src    *Source
	url    *url.URL
	client *http.Client
}

// target is the URL asked for pid.
func (h *httpSource) target(pid types.PID) string {
	id := strconv.FormatUint(uint64(pid), 10)
	s := h.url.String()
	if strings.Contains(s, "%7Bpid%7D") || strings.Contains(s, "{pid}") {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "%7Bpid%7D", id), "{pid}", id)
		return s
	}
	u := *h.url
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + id
	u.RawPath = ""
	return u.String()
}

func (h *httpSource) fetch(ctx context.Context, pid types.PID) ([]types.PID, error) {
	s := h.src
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.target(pid), nil)
	if err != nil {
		return nil, s.fail(ErrSource, pid, "%v", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gamewire-friends-source")
	if s.o.Key != "" {
		req.Header.Set("Authorization", "Bearer "+s.o.Key)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, s.fail(ErrSource, pid, "%w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.o.MaxResponse)+1))
	if err != nil {
		return nil, s.fail(ErrSource, pid, "reading the answer: %v", err)
	}
	if len(data) > s.o.MaxResponse {
		return nil, s.fail(ErrTooLarge, pid, "an answer beyond %d bytes", s.o.MaxResponse)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, s.fail(ErrSource, pid, "HTTP status %s", resp.Status)
	}
	return ParseHTTPAnswer(data, pid, s.name)
}

// ParseHTTPAnswer decodes an HTTPAnswer for pid; source names the endpoint in
// errors.
func ParseHTTPAnswer(data []byte, pid types.PID, source string) ([]types.PID, error) {
	var a HTTPAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%w: friends source %s, PID %d: %v", ErrMalformed, source, pid, err)
	}
	if a.Friends == nil {
		return nil, fmt.Errorf("%w: friends source %s, PID %d: no \"friends\" list", ErrMalformed, source, pid)
	}
	if a.PID != nil && types.PID(*a.PID) != pid {
		return nil, fmt.Errorf("%w: friends source %s: asked for PID %d, answered for PID %d", ErrMalformed, source, pid, *a.PID)
	}
	if len(a.Friends) > MaxFriends {
		return nil, fmt.Errorf("%w: friends source %s: %d friends of PID %d (at most %d)", ErrTooLarge, source, len(a.Friends), pid, MaxFriends)
	}
	out := make([]types.PID, len(a.Friends))
	for i, f := range a.Friends {
		out[i] = types.PID(f)
	}
	return out, nil
}
