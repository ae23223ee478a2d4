package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// newNEXMatchmakeCmd is `gamewire nex matchmake`: log in, auto-matchmake, print the
// session and its participants, then the notifications until the time is up.
func newNEXMatchmakeCmd() *cobra.Command {
	f := &nexMatchmakeOptions{}
	cmd := &cobra.Command{
		Use:   "matchmake [--server ADDR]",
		Short: "Log in, auto-matchmake into a session, print it and its participants, then print notifications",
		Long: `matchmake logs in as gamewire login does (same flags), calls Matchmake
Extension's AutoMatchmake_Postpone with a session of the given game mode, size and
attributes (joining an open one like it, or creating it), prints the session and
its participants with their station urls, and stays connected printing every
notification the server sends (participants joining and leaving, ownership
changes, ...) until --for elapses or it is interrupted; it then leaves the
session (EndParticipation) and disconnects.

With --nat M,F it first reports NAT mapping M and filtering F (NAT Traversal's
ReportNATProperties; the values of the station url's natm and natf: mapping 1
endpoint-independent, 2 endpoint-dependent; filtering 1 port-independent, 2
port-dependent; 0 unknown), which a server doing NAT-aware matchmaking (gamewire
serve --nat-matchmaking) weighs when it picks the session.

  gamewire nex matchmake --server ADDR --user U --password P [--game-mode N] [--max-participants N] [--attributes 1,2,0,0,0,0] [--nat 1,1] [--for 1m]`,
		Args: cobra.MaximumNArgs(1),
		RunE: withServer("nex matchmake", &f.server, f.run),
	}
	f.register(cmd)
	addServerFlag(cmd, &f.server, nex.DefaultAddr, "the NEX authentication server, HOST:PORT (a URL with --dialect nex-lite)")
	addFormatFlag(cmd, &f.format)
	fl := cmd.Flags()
	fl.StringVar(&f.user, "user", "", "user name (NEX names normal accounts by their PID)")
	fl.StringVar(&f.password, "password", "", "password (only derives the key that opens the ticket; never sent)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up logging in and matchmaking after this long")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "nex-lite over wss:// or tls://: accept any server certificate")
	fl.DurationVar(&f.stay, "for", 0, "stay in the session printing notifications this long (0: until interrupted)")
	fl.Uint32Var(&f.gameMode, "game-mode", 0, "the session's game mode (m_GameMode)")
	fl.Uint16Var(&f.minP, "min-participants", 1, "the session's minimum participants")
	fl.Uint16Var(&f.maxP, "max-participants", 8, "the session's maximum participants")
	fl.StringVar(&f.attributes, "attributes", "0,0,0,0,0,0", "the session's attributes (m_Attribs), comma-separated, at most 6")
	fl.StringVar(&f.message, "message", "", "join message")
	fl.StringVar(&f.nexVersion, "nex-version", "", "NEX library version the client speaks (3.4, 3.5.1 or 30400; default: 4.0 with 8-byte PIDs, 3.5 with structure headers, else 3.4)")
	registerNEXGates(fl, &f.nexGates, "NintendoClients' with structure headers below NEX 3.5 (as serve reads such a connection), else the consoles'")
	fl.BoolVar(&f.migrateOwnerOff, "no-owner-migration", false, "create sessions without flag 0x10 (the session ends when its owner leaves)")
	fl.StringVar(&f.nat, "nat", "", "report NAT mapping,filtering first (ReportNATProperties; natm,natf values: 1,1 endpoint-independent mapping and port-independent filtering, 2,2 endpoint-dependent and port-dependent, 0 unknown)")
	_ = cmd.MarkFlagRequired("user")
	return cmd
}

// nexMatchmakeOptions are the flags of nex matchmake.
type nexMatchmakeOptions struct {
	prudpFlags
	user, password  string
	timeout, stay   time.Duration
	insecure        bool
	gameMode        uint32
	minP, maxP      uint16
	attributes      string
	message         string
	nexVersion      string
	nexGates        string
	migrateOwnerOff bool
	nat             string
	server          string
	format          formatFlag
}

// parseNAT reads --nat: "M,F", each 0, 1 or 2 (the station url's natm and
// natf values).
func parseNAT(s string) (nattraversal.Properties, error) {
	m, f, ok := strings.Cut(s, ",")
	mv, merr := strconv.ParseUint(strings.TrimSpace(m), 10, 32)
	fv, ferr := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
	if !ok || merr != nil || ferr != nil || mv > 2 || fv > 2 {
		return nattraversal.Properties{}, fmt.Errorf("--nat %q: want MAPPING,FILTERING, each 0 (unknown), 1 or 2 (e.g. 2,1: endpoint-dependent mapping, port-independent filtering)", s)
	}
	return nattraversal.Properties{Mapping: uint32(mv), Filtering: uint32(fv)}, nil
}

func parseAttributes(s string) ([]uint32, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > matchmaking.MaxAttributes {
		return nil, fmt.Errorf("--attributes: %d values, at most %d", len(parts), matchmaking.MaxAttributes)
	}
	out := make([]uint32, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--attributes: %q is not a number", p)
		}
		out[i] = uint32(n)
	}
	return out, nil
}

// eventName names a notification type (notifications.md).
func eventName(t uint32) string {
	switch t {
	case notifications.TypeNewParticipant:
		return "participant joined"
	case notifications.TypeParticipationCancelled:
		return "participation cancelled"
	case notifications.TypeParticipantDisconnected:
		return "participant disconnected"
	case notifications.TypeParticipationEnded:
		return "participant left"
	case notifications.TypeOwnershipChanged:
		return "ownership changed"
	case notifications.TypeGatheringUnregistered:
		return "gathering unregistered"
	case notifications.TypeHostChanged:
		return "host changed"
	}
	return "event"
}

func (f *nexMatchmakeOptions) run(cmd *cobra.Command, addr string) error {
	cfg, err := f.config()
	if err != nil {
		return fmt.Errorf("nex matchmake: %w", err)
	}
	attrs, err := parseAttributes(f.attributes)
	if err != nil {
		return fmt.Errorf("nex matchmake: %w", err)
	}
	if cfg.Dialect == prudp.Hyperscape {
		return errors.New("nex matchmake: --dialect hyperscape has no Kerberos login (see gamewire login)")
	}
	var nat nattraversal.Properties
	if f.nat != "" {
		if nat, err = parseNAT(f.nat); err != nil {
			return fmt.Errorf("nex matchmake: %w", err)
		}
	}
	out := cmd.OutOrStdout()
	events := make(chan notifications.Event, 64)
	mux := rmc.NewMux()
	version, gates, err := parseNEXFlags(f.nexVersion, f.nexGates)
	if err != nil {
		return fmt.Errorf("nex matchmake: %w", err)
	}
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{Version: version, F: func(_ context.Context, ev notifications.Event) {
		select {
		case events <- ev:
		default: // the printer fell behind; the event is dropped from the display only
		}
	}})
	lc := nex.LoginConfig{User: f.user, Password: f.password, Config: cfg, Logger: cfg.Logger, Handler: mux, NEXVersion: version, Gates: gates}
	isURL := strings.Contains(addr, "://")
	switch {
	case cfg.Dialect == prudp.NEXLite && !isURL:
		return fmt.Errorf("nex matchmake: --dialect nex-lite logs in at a URL (ws://, wss://, tcp://, tls://), not %q", addr)
	case cfg.Dialect != prudp.NEXLite && isURL:
		return fmt.Errorf("nex matchmake: %s is a URL: NEX over WebSocket or TCP needs --dialect nex-lite", addr)
	case cfg.Dialect == prudp.NEXLite:
		lc.Config.Kerberos = kerberos.Switch
		lc.Config.Port = 1
		lc.Derivation = auth.DeriveSwitch
		lcfg := &lite.Config{Logger: cfg.Logger}
		if f.insecure {
			lcfg.TLS = &tls.Config{InsecureSkipVerify: true}
		}
		lc.Dial = func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
			return lite.Dial(ctx, url, c, lcfg)
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	lc.Dial = withProgress(cmd.ErrOrStderr(), progressEvery(f.timeout), f.timeout, lc.Dial)
	sess, err := nex.Login(ctx, addr, lc)
	if err != nil {
		return fmt.Errorf("nex matchmake: %w", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer ccancel()
		_ = sess.Close(cctx)
	}()
	if version == 0 {
		version = notifications.DefaultVersion(sess.RMC.Settings())
	}
	emit := func(record map[string]any, format string, a ...any) {
		if f.format.json() {
			_ = writeJSON(out, record)
			return
		}
		fmt.Fprintf(out, format, a...)
	}
	emit(map[string]any{"record": "login", "pid": sess.PID, "public": sess.PublicURL.String()}, "pid %d, public %s\n", sess.PID, sess.PublicURL)
	if f.nat != "" {
		if err := (&nattraversal.Client{RMC: sess.RMC}).ReportNATProperties(ctx, nat); err != nil {
			return fmt.Errorf("nex matchmake: ReportNATProperties: %w", err)
		}
		emit(map[string]any{"record": "nat", "natm": nat.Mapping, "natf": nat.Filtering}, "reported NAT %s (natm %d, natf %d)\n", nat, nat.Mapping, nat.Filtering)
	}
	c := &matchmaking.Client{RMC: sess.RMC, Version: version}
	flags := uint32(matchmaking.FlagMigrateOwner)
	if f.migrateOwnerOff {
		flags = 0
	}
	ms, err := c.AutoMatchmake(ctx, matchmaking.MatchmakeSession{
		Gathering: matchmaking.Gathering{MinParticipants: f.minP, MaxParticipants: f.maxP, Flags: flags},
		GameMode:  f.gameMode, Attributes: attrs, OpenParticipation: true, MatchmakeSystemType: 1,
	}, f.message)
	if err != nil {
		return fmt.Errorf("nex matchmake: AutoMatchmake_Postpone: %w", err)
	}
	if f.format.json() {
		_ = writeJSON(out, map[string]any{"record": "session", "id": ms.ID, "owner": ms.Owner, "host": ms.Host,
			"participants": ms.ParticipationCount, "max_participants": ms.MaxParticipants, "min_participants": ms.MinParticipants,
			"game_mode": ms.GameMode, "attributes": ms.Attributes, "open": ms.OpenParticipation, "flags": ms.Flags,
			"session_key": fmt.Sprintf("%x", ms.SessionKey)})
	} else {
		printSession(out, &ms)
	}
	pids, err := c.Participants(ctx, ms.ID)
	if err != nil {
		return fmt.Errorf("nex matchmake: GetParticipants: %w", err)
	}
	urls, err := c.ParticipantURLs(ctx, ms.ID)
	if err != nil {
		return fmt.Errorf("nex matchmake: GetParticipantsURLs: %w", err)
	}
	if !f.format.json() {
		fmt.Fprintf(out, "participants %d\n", len(pids))
	}
	for _, p := range pids {
		var purls []string
		for _, u := range urls {
			if u.PID() == p {
				purls = append(purls, u.String())
			}
		}
		if f.format.json() {
			_ = writeJSON(out, map[string]any{"record": "participant", "pid": p, "urls": purls})
			continue
		}
		fmt.Fprintf(out, "  pid %d\n", p)
		for _, u := range purls {
			fmt.Fprintf(out, "    %s\n", u)
		}
	}
	if !f.format.json() {
		fmt.Fprintln(out, "waiting for notifications")
	}
	wctx := cmd.Context()
	if f.stay > 0 {
		var wcancel context.CancelFunc
		wctx, wcancel = context.WithTimeout(wctx, f.stay)
		defer wcancel()
	}
	for {
		select {
		case ev := <-events:
			emit(map[string]any{"record": "notification", "type": ev.Type, "name": eventName(ev.Type), "source": ev.Source,
				"param1": ev.Param1, "param2": ev.Param2, "param3": ev.Param3, "str": ev.StrParam},
				"notification %d (%s): source %d, param1 %d, param2 %d, param3 %d, %q\n",
				ev.Type, eventName(ev.Type), ev.Source, ev.Param1, ev.Param2, ev.Param3, ev.StrParam)
		case <-sess.Conn.Done():
			return fmt.Errorf("nex matchmake: the server closed the connection: %w", sess.Conn.Err())
		case <-wctx.Done():
			lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer lcancel()
			if err := c.EndParticipation(lctx, ms.ID, ""); err != nil {
				emit(map[string]any{"record": "left", "session": ms.ID, "error": err.Error()}, "leaving session %d: %v\n", ms.ID, err)
			} else {
				emit(map[string]any{"record": "left", "session": ms.ID}, "left session %d\n", ms.ID)
			}
			return nil
		}
	}
}

func printSession(out io.Writer, ms *matchmaking.MatchmakeSession) {
	fmt.Fprintf(out, "session %d: owner %d, host %d, %d/%d participants (min %d), game mode %d, attributes %v, open %v, flags 0x%x\n",
		ms.ID, ms.Owner, ms.Host, ms.ParticipationCount, ms.MaxParticipants, ms.MinParticipants, ms.GameMode,
		ms.Attributes, ms.OpenParticipation, ms.Flags)
	if len(ms.SessionKey) > 0 {
		fmt.Fprintf(out, "session key %x\n", ms.SessionKey)
	}
}
