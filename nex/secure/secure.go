// Package secure implements the Secure Connection protocol (protocol 11,
// nintendo-wiki "Secure Connection (11)"), the first thing a client calls on a
// secure server: Register (and RegisterEx) record the client's station urls and
// hand back a Rendez-Vous connection id and the client's public url as the server
// sees it; RequestConnectionData and RequestUrls let clients find each other;
// UpdateURLs and ReplaceURL keep the urls current; TestConnectivity and SendReport
// complete the eight methods.
//
// The server keeps one Station per connection (keyed by the connection's
// *rmc.Peer), so the transport must call Forget when a connection ends.
package secure

import (
	"context"
	"log/slog"
	"sync"

	secgen "github.com/gamewire/gamewire/nex/protocols/secure"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Method ids of the Secure Connection protocol.
const (
	MethodRegister              = secgen.SecureConnectionMethodRegister
	MethodRequestConnectionData = secgen.SecureConnectionMethodRequestConnectionData
	MethodRequestUrls           = secgen.SecureConnectionMethodRequestUrls
	MethodRegisterEx            = secgen.SecureConnectionMethodRegisterEx
	MethodTestConnectivity      = secgen.SecureConnectionMethodTestConnectivity
	MethodUpdateURLs            = secgen.SecureConnectionMethodUpdateURLs
	MethodReplaceURL            = secgen.SecureConnectionMethodReplaceURL
	MethodSendReport            = secgen.SecureConnectionMethodSendReport
)

// NAT type flags of a station url's "type" parameter ("NAT Type Flags" in types.md).
const (
	NATBehind = 1
	NATPublic = 2
)

// Station is what the server records for one registered connection.
type Station struct {
	PID          types.PID
	ConnectionID uint32             // the Rendez-Vous connection id Register handed out
	URLs         []types.StationURL // the client's own urls (vecMyURLs), updated by UpdateURLs / ReplaceURL
	Public       types.StationURL   // the public url the server answered with
	LoginData    types.AnyDataHolder
	// NATMapping and NATFiltering are what the client reported with NAT
	// Traversal's ReportNATProperties (0 until then); they are written into the
	// natm and natf parameters of the urls others receive.
	NATMapping, NATFiltering uint32
}

// Report is one SendReport call.
type Report struct {
	PID  types.PID
	ID   uint32
	Data []byte
}

// Server answers the Secure Connection protocol. Register it with
// mux.HandleProtocol(rmc.ProtocolSecureConnection, srv). The zero value works.
type Server struct {
	// OnReport receives SendReport calls (the data is a copy); nil logs them at
	// debug level.
	OnReport func(ctx context.Context, r Report)
	// Logger receives registrations and reports.
	Logger *slog.Logger
	// Changed, when set, is called (without locks held, on the handler of
	// the call) after a PID's station urls changed: a registration, an
	// update, NAT properties. Forget does not call it: it runs on the
	// transport's goroutine, whose caller acts on it itself. Secure nodes
	// sharing a store publish the urls there.
	Changed func(pid types.PID)
	// CheckLogin, when set, decides each Register and RegisterEx by the
	// token of the login data (hCustomData, ParseLoginData) for the
	// connection's PID before anything is recorded: login is what RegisterEx
	// sent (with an empty Token when it is no class ParseLoginData reads), nil
	// for Register.
	// A non-nil error refuses the call with the types.Result it wraps
	// (Authentication::ValidationFailed when none) in %retval%, with a zero
	// connection id and an empty url, as Pretendo's servers check RegisterEx
	// (nex-protocols-common-go secure-connection/register_ex.go, facts only).
	CheckLogin func(ctx context.Context, pid types.PID, login *LoginData) error

	mu       sync.Mutex
	byPeer   map[*rmc.Peer]*Station
	byConnID map[uint32]*Station
	nextCID  uint32
}

// Stations returns a copy of every registered station.
func (s *Server) Stations() []Station {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Station, 0, len(s.byPeer))
	for _, st := range s.byPeer {
		out = append(out, copyStation(st))
	}
	return out
}

// Lookup returns the station with connection id cid.
func (s *Server) Lookup(cid uint32) (Station, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byConnID[cid]
	if !ok {
		return Station{}, false
	}
	return copyStation(st), true
}

// Forget drops what was recorded for a connection; the transport calls it when the
// connection ends.
func (s *Server) Forget(p *rmc.Peer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.byPeer[p]; ok {
		delete(s.byConnID, st.ConnectionID)
		delete(s.byPeer, p)
	}
}

func copyStation(st *Station) Station {
	c := *st
	c.URLs = append([]types.StationURL(nil), st.URLs...)
	return c
}

// ServeRMC implements rmc.Handler: the generated dispatcher
// (nex/protocols/secure) decodes the call at the connection's settings and
// runs the Server's method (handler.go).
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return secgen.ServeSecureConnection(handler{s}, ctx, c, out)
}

// register records (or re-records) the caller's urls and returns its station.
// A connection keeps its connection id across repeated Register calls.
func (s *Server) register(p *rmc.Peer, urls []types.StationURL, login types.AnyDataHolder) Station {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPeer == nil {
		s.byPeer = make(map[*rmc.Peer]*Station)
		s.byConnID = make(map[uint32]*Station)
	}
	st, ok := s.byPeer[p]
	if !ok {
		st = &Station{PID: p.PID, ConnectionID: s.newConnID()}
		s.byPeer[p] = st
		s.byConnID[st.ConnectionID] = st
	}
	st.URLs = urls
	st.LoginData = types.AnyDataHolder{TypeName: login.TypeName, Data: append([]byte(nil), login.Data...)}
	st.Public = publicURL(p, urls, st.ConnectionID)
	st.Public.SetUint("natm", uint64(st.NATMapping))
	st.Public.SetUint("natf", uint64(st.NATFiltering))
	return copyStation(st)
}

// StationURLs returns the urls others use to reach pid's connections: for each
// registered connection of pid, the public url (the address the server saw)
// and then the urls the client registered (the addresses it knows itself,
// private behind a NAT), each with the PID, the Rendez-Vous connection id
// (RVCID) and the NAT mapping and filtering the client reported.
func (s *Server) StationURLs(pid types.PID) []types.StationURL {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []types.StationURL
	for _, st := range s.byPeer {
		if st.PID != pid {
			continue
		}
		seen := map[string]bool{}
		for _, u := range append([]types.StationURL{st.Public}, st.URLs...) {
			// On a network without NAT the public url and the client's own
			// may be the same: given once.
			if u = stationURL(st, u); !u.IsZero() && !seen[u.String()] {
				seen[u.String()] = true
				out = append(out, u)
			}
		}
	}
	return out
}

// stationURL is u as others get it: with the station's PID, its Rendez-Vous
// connection id (RVCID) and the NAT mapping and filtering it reported.
func stationURL(st *Station, u types.StationURL) types.StationURL {
	u.SetUint("PID", uint64(st.PID))
	u.SetUint("RVCID", uint64(st.ConnectionID))
	u.SetUint("natm", uint64(st.NATMapping))
	u.SetUint("natf", uint64(st.NATFiltering))
	return u
}

// PublicURL returns the public url of a connection's station.
func (s *Server) PublicURL(p *rmc.Peer) (types.StationURL, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byPeer[p]
	if !ok {
		return types.StationURL{}, false
	}
	return st.Public, true
}

// SetNATProperties records the NAT mapping and filtering a connection reported
// (NAT Traversal's ReportNATProperties); false when it has not registered.
func (s *Server) SetNATProperties(p *rmc.Peer, mapping, filtering uint32) bool {
	s.mu.Lock()
	st, ok := s.byPeer[p]
	if !ok {
		s.mu.Unlock()
		return false
	}
	st.NATMapping, st.NATFiltering = mapping, filtering
	st.Public.SetUint("natm", uint64(mapping))
	st.Public.SetUint("natf", uint64(filtering))
	s.mu.Unlock()
	s.changed(p.PID)
	return true
}

// newConnID returns an unused non-zero connection id. Called with s.mu held.
func (s *Server) newConnID() uint32 {
	for {
		s.nextCID++
		if s.nextCID == 0 {
			continue
		}
		if _, used := s.byConnID[s.nextCID]; !used {
			return s.nextCID
		}
	}
}

func (s *Server) update(p *rmc.Peer, f func(st *Station) error) bool {
	s.mu.Lock()
	st, ok := s.byPeer[p]
	if ok {
		_ = f(st)
	}
	s.mu.Unlock()
	if ok {
		s.changed(p.PID)
	}
	return ok
}

func (s *Server) changed(pid types.PID) {
	if s.Changed != nil {
		s.Changed(pid)
	}
}

// replaceURL replaces target in st.URLs: an exact match first, else the url with
// the same address and port.
func replaceURL(st *Station, target, url types.StationURL) bool {
	ts := target.String()
	for i, u := range st.URLs {
		if u.String() == ts {
			st.URLs[i] = url
			return true
		}
	}
	for i, u := range st.URLs {
		if u.Address() == target.Address() && u.Port() == target.Port() {
			st.URLs[i] = url
			return true
		}
	}
	return false
}

// publicURL builds the url the server sees the client at: the client's first url
// (its scheme and parameters) with the observed address and port, the PID and the
// connection id, and NAT flags saying whether the client is behind a NAT (its own
// idea of its address differs from the observed one).
func publicURL(p *rmc.Peer, urls []types.StationURL, cid uint32) types.StationURL {
	var u types.StationURL
	if len(urls) > 0 {
		u = urls[0]
	} else {
		scheme := p.Scheme
		if scheme == "" {
			scheme = "prudp"
		}
		u = types.NewStationURL(scheme)
	}
	local := u.Address()
	addr := p.Addr.Addr().Unmap().String()
	u.Set("address", addr)
	u.SetUint("port", uint64(p.Addr.Port()))
	u.Set("natf", "0")
	u.Set("natm", "0")
	nat := uint64(NATPublic)
	if local != "" && local != addr {
		nat |= NATBehind
	}
	u.SetUint("type", nat)
	u.SetUint("PID", uint64(p.PID))
	u.SetUint("RVCID", uint64(cid))
	return u
}
