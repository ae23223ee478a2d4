package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gamewire/gamewire/interop/nexgo"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// quazalAgainstNexgo is the gamewire configuration that matches nex-go v2.3.1 in its
// Quazal mode (PRUDPV0Settings.IsQuazalMode): 1-byte type and flags, the 1- or 4-byte
// checksum (UseEnhancedChecksum), RC4 as one stream per direction (nex-go's
// encryption.RC4 keeps its state across packets; per-packet needs a plugged-in algorithm), DATA
// and DISCONNECT signed in the V0 games mode (nex-go's default DataSignatureCalculator
// for every access key but the friends server's), and stream type OldRVSec (3): nex-go
// adds sum(access key) to every checksum, the Quazal dialect only on that stream type.
func quazalAgainstNexgo(checksum int, key string) prudp.Config {
	return prudp.Config{Dialect: prudp.Quazal, AccessKey: key, ChecksumSize: checksum,
		RC4Mode: prudp.RC4Stream, QuazalSignatures: prudp.QuazalSigSession, StreamType: prudp.StreamOldRVSec}
}

// TestGamewireQuazalClientAgainstNexgo connects gamewire's Quazal client to nex-go's
// server in its Quazal mode with each checksum size, with nex-go's RC4 stream and with
// a per-packet RC4 algorithm plugged into nex-go's stream settings (perPacketRC4 in
// interop/nexgo), sends RMC requests of several sizes (two larger than a fragment)
// and checks every echo, then disconnects
// gracefully (which needs the HAS_SIZE on empty DISCONNECTs: nex-go refuses Quazal
// datagrams shorter than 12 bytes). nex-go has no PRUDP client, so the other
// direction (a nex-go client against gamewire's server) cannot be tested; both ends'
// packet codecs are exercised here in both directions.
func TestGamewireQuazalClientAgainstNexgo(t *testing.T) {
	const key = "8dtRv2oj" // Ghost Recon Online's
	for _, tc := range []struct {
		checksum  int
		perPacket bool
		zlib      bool
	}{{1, false, false}, {4, false, false}, {1, true, false}, {4, true, false}, {4, true, true}} {
		name := fmt.Sprintf("checksum%d/rc4-stream", tc.checksum)
		if tc.perPacket {
			name = fmt.Sprintf("checksum%d/rc4-per-packet", tc.checksum)
		}
		if tc.zlib {
			name += "/compression"
		}
		checksum := tc.checksum
		t.Run(name, func(t *testing.T) {
			srv, err := nexgo.Start(nexgo.Config{Version: 0, Quazal: true, EnhancedChecksum: checksum == 4,
				PerPacketRC4: tc.perPacket, Compression: tc.zlib, AccessKey: key, FixedRTO: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := quazalAgainstNexgo(checksum, key)
			if tc.perPacket {
				cfg.RC4Mode = prudp.RC4PerPacket
			}
			cfg.Compression = tc.zlib
			conn, err := prudp.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port), &cfg)
			if err != nil {
				t.Fatalf("dial nex-go (quazal, checksum %d): %v", checksum, err)
			}
			sizes := []int{13, 64, 1024, 3000, 963, 1}
			echoRMC(t, ctx, conn, 0x66, 7, sizes)
			if got := srv.Received(); got != len(sizes) {
				t.Errorf("nex-go echoed %d messages, want %d", got, len(sizes))
			}
			if d := conn.Stats().Drops; d["signature"] != 0 {
				t.Errorf("signature drops: %v", d)
			}
			t.Logf("quazal checksum %d: %d messages echoed by nex-go; client stats %+v", checksum, len(sizes), conn.Stats())
		})
	}
}

// TestGamewireQuazalSecureClientAgainstNexgo opens a secure Quazal connection to nex-go's
// secure endpoint with a ticket in Quazal's Kerberos settings (4-byte PIDs, 16-byte session
// keys, keys derived with MD5 iterated 65000 + pid%1024 times): nex-go opens the ticket and
// answers check+1, and the echoes prove both ends key RC4 (per packet, with the session
// key) and the signatures alike.
func TestGamewireQuazalSecureClientAgainstNexgo(t *testing.T) {
	const (
		key        = "8dtRv2oj"
		serverPass = "securepassword"
		userPID    = 1000
		userPass   = "quazaluserpassword"
	)
	srv, err := nexgo.Start(nexgo.Config{Version: 0, Quazal: true, EnhancedChecksum: true, PerPacketRC4: true, AccessKey: key,
		Secure: true, ServerPassword: serverPass, SessionKeyLength: 16, FixedRTO: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	settings := kerberos.Quazal
	settings.Internal = kerberos.InternalOld // nex-go's KerberosTicketVersion 0
	userKey := kerberos.DeriveKey(userPass, userPID)
	serverKey := kerberos.DeriveKey(serverPass, 2)
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{SourcePID: userPID, TargetPID: 2,
		SourceKey: userKey[:], TargetKey: serverKey[:], Issued: time.Now()}, settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	ticket, err := kerberos.OpenTicket(sealed, userKey[:], settings)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := quazalAgainstNexgo(4, key)
	cfg.RC4Mode = prudp.RC4PerPacket // keyed with the session key, re-keyed per packet
	cfg.Ticket, cfg.PID = &ticket, userPID
	conn, err := prudp.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port), &cfg)
	if err != nil {
		t.Fatalf("secure quazal dial: %v", err)
	}
	echoRMC(t, ctx, conn, 0x0b, 4, []int{64, 2000, 13})
}
