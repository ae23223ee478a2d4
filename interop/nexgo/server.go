// Package nexgo runs PretendoNetwork's nex-go (v2.3.1) PRUDP server as a peer that no one
// on the gamewire project wrote, so gamewire's client can be checked against it.
//
// nex-go is AGPL-licensed: it is imported here, in the separate interop module, and never
// by the gamewire module itself; none of its code is copied.
package nexgo

import (
	"crypto/rc4"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	nex "github.com/PretendoNetwork/nex-go/v2"
	"github.com/PretendoNetwork/nex-go/v2/compression"
	"github.com/PretendoNetwork/nex-go/v2/constants"
	"github.com/PretendoNetwork/nex-go/v2/encryption"
	"github.com/PretendoNetwork/nex-go/v2/types"
)

// Config selects the dialect and behaviour of the nex-go server.
type Config struct {
	// Version is the PRUDP version: 0 or 1.
	Version int
	// AccessKey is the game's sandbox access key.
	AccessKey string
	// Secure makes the endpoint a secure server that expects a Kerberos ticket in CONNECT.
	// The ticket must be encrypted with the key derived from ServerPassword for PID 2.
	Secure bool
	// ServerPassword is the password of the server account (PID 2, "Quazal Rendez-Vous").
	ServerPassword string
	// TicketVersion is nex-go's KerberosTicketVersion: 0 reads old-format internal tickets,
	// 1 the new format (random key + ticket info).
	TicketVersion int
	// SessionKeyLength is 16 or 32 (nex-go's default is 32).
	SessionKeyLength int
	// Quazal enables nex-go's Quazal compatibility mode (1-byte type/flags) for Version 0.
	Quazal bool
	// EnhancedChecksum selects the 4-byte Quazal checksum for Version 0.
	EnhancedChecksum bool
	// PerPacketRC4 replaces nex-go's RC4 stream (StreamSettings.EncryptionAlgorithm)
	// with RC4 re-keyed for every payload, as Quazal servers do. nex-go has no such
	// algorithm; its settings take any encryption.Algorithm, and perPacketRC4 is one.
	PerPacketRC4 bool
	// Compression sets nex-go's zlib compression (compression.Zlib: every reliable
	// payload compressed, ratio byte n/c+1 checked on receive), the counterpart of
	// gamewire's prudp.Config.Compression.
	Compression bool
	// NoEncryption sets nex-go's encryption.Dummy (payloads as they are), the
	// counterpart of gamewire's prudp.Config.NoEncryption.
	NoEncryption bool
	// FragmentSize is the payload size per fragment; 0 keeps nex-go's default (1300).
	FragmentSize int
	// StreamID is the server's virtual port; 0 means 1.
	StreamID uint8
	// FixedRTO, when non-zero, replaces nex-go's retransmission timeout computation, which
	// falls to zero on loopback after a PING acknowledgement (see docs/peers.md) and then
	// resends many times at once.
	FixedRTO time.Duration
	// Lite serves PRUDP Lite on nex-go's WebSocket server (ListenWebSocket) instead of
	// UDP; Server.Port is then a TCP port and Version is ignored. nex-go binds every
	// interface for it too.
	Lite bool
	// LiteCertFile and LiteKeyFile, with Lite, serve wss:// (ListenWebSocketSecure).
	LiteCertFile, LiteKeyFile string
}

// Server is a running nex-go server.
type Server struct {
	Port int

	mu       sync.Mutex
	received int
}

// Received is how many RMC messages the server has echoed.
func (s *Server) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Start runs a nex-go server whose endpoint echoes every RMC request back as a successful
// response with the same protocol, method, call id and parameters. nex-go offers no way to
// stop a server or to choose its bind address (it binds every interface); tests only send
// to it over loopback, and it ends with the test process.
func Start(cfg Config) (*Server, error) {
	if cfg.Version != 0 && cfg.Version != 1 && !cfg.Lite {
		return nil, fmt.Errorf("nexgo: version %d: want 0 or 1", cfg.Version)
	}
	port, err := freeUDPPort()
	if cfg.Lite {
		port, err = freeTCPPort()
	}
	if err != nil {
		return nil, err
	}
	streamID := cfg.StreamID
	if streamID == 0 {
		streamID = 1
	}
	password := cfg.ServerPassword
	if password == "" {
		password = "securepassword"
	}
	serverAccount := nex.NewAccount(types.NewPID(2), "Quazal Rendez-Vous", password, false)
	lookupPID := func(pid types.PID) (*nex.Account, *nex.Error) {
		if pid.Equals(serverAccount.PID) {
			return serverAccount, nil
		}
		return nil, nex.NewError(nex.ResultCodes.RendezVous.InvalidPID, "invalid PID")
	}
	lookupName := func(name string) (*nex.Account, *nex.Error) {
		if name == serverAccount.Username {
			return serverAccount, nil
		}
		return nil, nex.NewError(nex.ResultCodes.RendezVous.InvalidUsername, "invalid username")
	}

	srv := nex.NewPRUDPServer()
	ep := nex.NewPRUDPEndPoint(streamID)
	ep.ServerAccount = serverAccount
	ep.AccountDetailsByPID = lookupPID
	ep.AccountDetailsByUsername = lookupName
	ep.IsSecureEndPoint = cfg.Secure
	if cfg.PerPacketRC4 {
		ep.DefaultStreamSettings.EncryptionAlgorithm = &perPacketRC4{key: []byte("CD&ML")}
	}
	if cfg.NoEncryption {
		ep.DefaultStreamSettings.EncryptionAlgorithm = encryption.NewDummyEncryption()
	}
	if cfg.Compression {
		ep.DefaultStreamSettings.CompressionAlgorithm = compression.NewZlibCompression()
	}
	if cfg.FixedRTO > 0 {
		rto := cfg.FixedRTO
		ep.CalcRetransmissionTimeoutCallback = func(float64, uint32) time.Duration { return rto }
	}
	s := &Server{Port: port}
	ep.OnData(func(p nex.PacketInterface) {
		packet, ok := p.(nex.PRUDPPacketInterface)
		if !ok {
			return
		}
		req := packet.RMCMessage()
		if req == nil || !req.IsRequest {
			return
		}
		resp := nex.NewRMCSuccess(ep, req.Parameters)
		resp.ProtocolID = req.ProtocolID
		resp.MethodID = req.MethodID
		resp.CallID = req.CallID
		var out nex.PRUDPPacketInterface
		conn := packet.Sender().(*nex.PRUDPConnection)
		if cfg.Lite {
			out, _ = nex.NewPRUDPPacketLite(srv, conn, nil)
		} else if cfg.Version == 1 {
			out, _ = nex.NewPRUDPPacketV1(srv, conn, nil)
		} else {
			out, _ = nex.NewPRUDPPacketV0(srv, conn, nil)
		}
		out.SetType(constants.DataPacket)
		out.AddFlag(constants.PacketFlagHasSize)
		out.AddFlag(constants.PacketFlagReliable)
		out.AddFlag(constants.PacketFlagNeedsAck)
		out.SetSourceVirtualPortStreamType(packet.DestinationVirtualPortStreamType())
		out.SetSourceVirtualPortStreamID(packet.DestinationVirtualPortStreamID())
		out.SetDestinationVirtualPortStreamType(packet.SourceVirtualPortStreamType())
		out.SetDestinationVirtualPortStreamID(packet.SourceVirtualPortStreamID())
		out.SetSubstreamID(packet.SubstreamID())
		out.SetPayload(resp.Bytes())
		s.mu.Lock()
		s.received++
		s.mu.Unlock()
		srv.Send(out)
	})

	srv.AccessKey = cfg.AccessKey
	srv.KerberosTicketVersion = cfg.TicketVersion
	if cfg.SessionKeyLength != 0 {
		srv.SessionKeyLength = cfg.SessionKeyLength
	}
	if cfg.FragmentSize != 0 {
		srv.SetFragmentSize(cfg.FragmentSize)
	}
	srv.LibraryVersions.SetDefault(nex.NewLibraryVersion(3, 5, 0))
	if cfg.Version == 0 {
		srv.PRUDPV0Settings.IsQuazalMode = cfg.Quazal
		srv.PRUDPV0Settings.UseEnhancedChecksum = cfg.EnhancedChecksum
	}
	srv.BindPRUDPEndPoint(ep)
	if cfg.Lite {
		if cfg.LiteCertFile != "" {
			go srv.ListenWebSocketSecure(port, cfg.LiteCertFile, cfg.LiteKeyFile)
		} else {
			go srv.ListenWebSocket(port)
		}
		if err := waitListeningTCP(port); err != nil {
			return nil, err
		}
		return s, nil
	}
	go srv.ListenUDP(port)
	if err := waitListening(port); err != nil {
		return nil, err
	}
	return s, nil
}

// freeUDPPort asks the kernel for a free loopback UDP port.
func freeUDPPort() (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, fmt.Errorf("nexgo: finding a free port: %w", err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	return port, nil
}

// waitListening waits until a socket is bound to the UDP port, as the kernel lists them in
// /proc/net/udp and /proc/net/udp6 (binding the port to test it could race nex-go's own bind,
// which panics on failure).
func waitListening(port int) error {
	needle := fmt.Sprintf(":%04X ", port)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), needle) {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("nexgo: server did not start listening within 5s")
}

// freeTCPPort asks the kernel for a free loopback TCP port.
func freeTCPPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("nexgo: finding a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port, nil
}

// waitListeningTCP waits until the TCP port accepts connections on loopback.
func waitListeningTCP(port int) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("nexgo: WebSocket server did not start listening within 5s")
}

// perPacketRC4 is an encryption.Algorithm that starts every payload from the freshly
// keyed RC4 state (the Quazal "CD&ML" behaviour in docs/peers.md), for nex-go's
// pluggable StreamSettings.EncryptionAlgorithm.
type perPacketRC4 struct{ key []byte }

func (r *perPacketRC4) Key() []byte { return r.key }

func (r *perPacketRC4) SetKey(key []byte) error {
	if _, err := rc4.NewCipher(key); err != nil {
		return err
	}
	r.key = append([]byte(nil), key...)
	return nil
}

func (r *perPacketRC4) Encrypt(payload []byte) ([]byte, error) {
	c, err := rc4.NewCipher(r.key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(payload))
	c.XORKeyStream(out, payload)
	return out, nil
}

func (r *perPacketRC4) Decrypt(payload []byte) ([]byte, error) { return r.Encrypt(payload) }

func (r *perPacketRC4) Copy() encryption.Algorithm {
	return &perPacketRC4{key: append([]byte(nil), r.key...)}
}
