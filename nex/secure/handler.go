package secure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gamewire/gamewire/nex/auth"
	secgen "github.com/gamewire/gamewire/nex/protocols/secure"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// handler is the Server as the generated secgen.SecureConnectionHandler: the
// eight methods with their parameters decoded and results encoded by
// nex/protocols/secure. Parameters that do not decode are
// Core::InvalidArgument (the generated default).
type handler struct{ s *Server }

var _ secgen.SecureConnectionHandler = handler{}

func (h handler) Register(ctx context.Context, c *rmc.Call, urls []types.StationURL) (types.Result, uint32, types.StationURL, error) {
	return h.s.registerCall(ctx, c, urls, nil)
}

// RegisterEx is Register with the login data (hCustomData) kept with the
// station and given to CheckLogin.
func (h handler) RegisterEx(ctx context.Context, c *rmc.Call, urls []types.StationURL, login types.AnyData) (types.Result, uint32, types.StationURL, error) {
	raw := auth.RawHolder(login, c.Peer.Settings)
	return h.s.registerCall(ctx, c, urls, &raw)
}

// registerCall answers Register (login nil) and RegisterEx: an unauthenticated
// caller is RendezVous::NotAuthenticated; CheckLogin's refusal is answered in
// %retval% with a zero connection id and an empty url.
func (s *Server) registerCall(ctx context.Context, c *rmc.Call, urls []types.StationURL, login *types.AnyDataHolder) (types.Result, uint32, types.StationURL, error) {
	if c.Peer.PID == 0 {
		return 0, 0, types.StationURL{}, types.RendezVousNotAuthenticated
	}
	var raw types.AnyDataHolder
	if login != nil {
		raw = *login
	}
	if s.CheckLogin != nil {
		var sent *LoginData
		if login != nil {
			d, err := ParseLoginData(raw, c.Peer.Settings)
			if err != nil {
				d = LoginData{Class: raw.TypeName}
			}
			sent = &d
		}
		if err := s.CheckLogin(ctx, c.Peer.PID, sent); err != nil {
			res := types.AuthenticationValidationFailed
			if r := (types.Result(0)); errors.As(err, &r) && r.IsError() {
				res = r
			}
			if s.Logger != nil {
				s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex secure register refused", slog.Uint64("pid", uint64(c.Peer.PID)),
					slog.String("result", res.String()), slog.String("error", err.Error()))
			}
			return res, 0, types.StationURL{}, nil
		}
	}
	st := s.register(c.Peer, urls, raw)
	s.changed(st.PID)
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex secure register", slog.Uint64("pid", uint64(st.PID)),
			slog.Uint64("cid", uint64(st.ConnectionID)), slog.String("public", st.Public.String()))
	}
	return types.ResultSuccess, st.ConnectionID, st.Public, nil
}

// stationURLs is what RequestConnectionData and RequestUrls answer for the
// station with connection id cid when it is pid's: the client's own urls
// (private), then the one the server saw (public), each naming the station
// (PID, RVCID) and the NAT properties it reported.
func (s *Server) stationURLs(cid uint32, pid types.PID) (Station, []types.StationURL, bool) {
	st, ok := s.Lookup(cid)
	if !ok || st.PID != pid {
		return st, nil, false
	}
	var urls []types.StationURL
	for _, u := range append(append([]types.StationURL(nil), st.URLs...), st.Public) {
		if !u.IsZero() {
			urls = append(urls, stationURL(&st, u))
		}
	}
	return st, urls, true
}

func (h handler) RequestConnectionData(ctx context.Context, c *rmc.Call, cid uint32, pid types.PID) (bool, []secgen.ConnectionData, error) {
	st, urls, ok := h.s.stationURLs(cid, pid)
	if !ok {
		return false, nil, nil
	}
	cd := make([]secgen.ConnectionData, len(urls))
	for i, u := range urls {
		cd[i] = secgen.ConnectionData{Station: u, ConnectionID: st.ConnectionID}
	}
	return true, cd, nil
}

func (h handler) RequestUrls(ctx context.Context, c *rmc.Call, cid uint32, pid types.PID) (bool, []types.StationURL, error) {
	_, urls, ok := h.s.stationURLs(cid, pid)
	return ok, urls, nil
}

func (h handler) TestConnectivity(ctx context.Context, c *rmc.Call) error { return nil }

func (h handler) UpdateURLs(ctx context.Context, c *rmc.Call, urls []types.StationURL) error {
	if !h.s.update(c.Peer, func(st *Station) error { st.URLs = urls; return nil }) {
		return types.RendezVousNotAuthenticated
	}
	return nil
}

// ReplaceURL replaces the registered url target with url.
func (h handler) ReplaceURL(ctx context.Context, c *rmc.Call, target types.StationURL, url types.StationURL) error {
	var replaced bool
	if !h.s.update(c.Peer, func(st *Station) error {
		replaced = replaceURL(st, target, url)
		return nil
	}) {
		return types.RendezVousNotAuthenticated
	}
	if !replaced {
		return fmt.Errorf("%w: ReplaceURL target %q is not a registered url", types.CoreInvalidArgument, target)
	}
	return nil
}

// SendReport hands the report to OnReport, or logs it.
func (h handler) SendReport(ctx context.Context, c *rmc.Call, id uint32, data []byte) error {
	rep := Report{PID: c.Peer.PID, ID: id, Data: data}
	if h.s.OnReport != nil {
		h.s.OnReport(ctx, rep)
	} else if h.s.Logger != nil {
		h.s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex secure report", slog.Uint64("pid", uint64(rep.PID)),
			slog.Uint64("id", uint64(id)), slog.Int("bytes", len(data)))
	}
	return nil
}
