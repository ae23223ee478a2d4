package kerberos_test

import (
	"fmt"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
)

// An authentication server issues a ticket, the client opens it with its
// password and connects to the secure server, which accepts the CONNECT.
func Example() {
	s := kerberos.NEX3DS
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clientKey := kerberos.DeriveKey("client password", 1750087940)
	serverKey := kerberos.DeriveKey("secure server password", 2)

	// Authentication server (ticket-granting service).
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{
		SourcePID: 1750087940, TargetPID: 2,
		SourceKey: clientKey[:], TargetKey: serverKey[:],
		Issued: now,
	}, s, nil)
	if err != nil {
		panic(err)
	}

	// Client.
	ticket, err := kerberos.OpenTicket(sealed, clientKey[:], s)
	if err != nil {
		panic(err)
	}
	req := kerberos.RequestData{PID: 1750087940, ConnectionID: 1, Check: 41}
	payload, err := kerberos.AppendConnect(nil, &ticket, req, s)
	if err != nil {
		panic(err)
	}

	// Secure server, 30 seconds later.
	acc, err := kerberos.AcceptConnect(payload, serverKey[:], s, now.Add(30*time.Second), 0)
	if err != nil {
		panic(err)
	}
	resp := kerberos.AppendConnectResponse(nil, acc.Request.Check)

	// Client again.
	fmt.Println(kerberos.CheckConnectResponse(resp, req.Check))
	fmt.Println(acc.Info.SourcePID, acc.Info.Issued)
	// Output:
	// <nil>
	// 1750087940 2025-01-01 12:00:00
}
