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

// TestGamewireSecureClientAgainstNexgo opens a secure connection from gamewire's client to
// nex-go's secure endpoint with a Kerberos ticket that gamewire's kerberos package issued
// for nex-go's server account (PID 2), in both internal ticket formats. nex-go opens the
// ticket, checks the PID and the age, answers check+1, and then both ends key RC4 and the
// signatures with the session key: the echoed messages prove they agree.
func TestGamewireSecureClientAgainstNexgo(t *testing.T) {
	const (
		accessKey  = "6f599f81"
		serverPass = "securepassword"
		userPID    = 1800000000
		userPass   = "nexuserpassword"
	)
	for _, tc := range []struct {
		name     string
		version  int
		internal kerberos.InternalFormat
	}{
		{"old-internal-ticket", 0, kerberos.InternalOld},
		{"new-internal-ticket", 1, kerberos.InternalNew},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := nexgo.Start(nexgo.Config{Version: 1, AccessKey: accessKey, Secure: true,
				ServerPassword: serverPass, TicketVersion: tc.version, FixedRTO: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			settings := kerberos.Settings{PIDSize: 4, SessionKeySize: 32, Internal: tc.internal}
			userKey := kerberos.DeriveKey(userPass, userPID)
			serverKey := kerberos.DeriveKey(serverPass, 2)
			sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{
				SourcePID: userPID, TargetPID: 2,
				SourceKey: userKey[:], TargetKey: serverKey[:],
				Issued: time.Now(),
			}, settings, nil)
			if err != nil {
				t.Fatal(err)
			}
			ticket, err := kerberos.OpenTicket(sealed, userKey[:], settings)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := prudp.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port), &prudp.Config{
				Dialect: prudp.NEXV1, AccessKey: accessKey, Ticket: &ticket, PID: userPID, Kerberos: settings,
			})
			if err != nil {
				t.Fatalf("secure dial: %v", err)
			}
			echoRMC(t, ctx, conn, 0x0b, 4, []int{64, 2000, 13})
		})
	}
}
