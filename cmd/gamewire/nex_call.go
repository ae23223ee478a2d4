package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/dyn"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/rmc"
)

// `gamewire nex call ADDR Protocol.Method '{json}'`: any described NEX method,
// as grpcurl calls any gRPC method. The parameters are encoded by the method's
// description (nex/desc, nex/desc/dyn) and the response decoded by it.

// nexCallOptions are the flags of nex call.
type nexCallOptions struct {
	loginOptions
	descs      *nexDescOptions
	nexVersion string
	nexGates   string
	compact    bool
}

func newNEXCallCmd(descs *nexDescOptions) *cobra.Command {
	o := &nexCallOptions{descs: descs}
	cmd := &cobra.Command{
		Use:   "call ADDR Protocol.Method [JSON]",
		Short: "Call any described NEX method with JSON parameters and print the response as JSON",
		Long: `call logs in to the NEX server whose authentication server is at ADDR as gamewire
login does (same flags), encodes JSON as the parameters of Protocol.Method by its
description, calls it on the secure connection and prints the return values as JSON,
or the error's name.

  gamewire nex call ADDR Health.PingDaemon --user U --password P
  gamewire nex call ADDR Ranking.GetRanking '{"mode":0,"category":5,"order":{"offset":0,"count":10}}' --user U --password P

Names are the descriptions' (gamewire nex protocols lists them): protocols and
methods in the nintendo-wiki's CamelCase (case and underscores are ignored),
parameters and structure fields in NintendoClients' snake_case. A parameter or
field left out takes its description's default, or its type's zero value. Lists
are arrays, maps objects, byte strings hex, an AnyData {"class": NAME, "value":
{...}}, DateTime "YYYY-MM-DD hh:mm:ss" or its packed number, enums a name or a
number. A game's variant protocol is named as such (MatchmakeExtension_MK8.X) or
chosen with --game; --nex-version sets the version structures are encoded for,
--nex-gates the reading of the fields the consoles and NintendoClients place at
different NEX versions (set it as the server's serve --nex-gates).
--proto-dir adds NintendoClients' .proto files to the descriptions.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := ""
			if len(args) == 3 {
				params = args[2]
			}
			return runNEXCall(cmd, o, args[0], args[1], params)
		},
	}
	o.registerLogin(cmd)
	f := cmd.Flags()
	f.Lookup("game").Usage += "; also its variant of the protocol called"
	f.StringVar(&o.nexVersion, "nex-version", "", "NEX version structures are encoded and decoded for (3.5, 30504; default: the connection's)")
	registerNEXGates(f, &o.nexGates, "NintendoClients' with structure headers below NEX 3.5 (as serve reads such a connection), else the consoles'")
	f.BoolVar(&o.compact, "compact", false, "print the response on one line")
	return cmd
}

// resolveMethod finds Protocol.Method in set: the protocol by name (a game's
// variant when variant names one), the method by name or number.
func resolveMethod(set *desc.Set, name, variant string) (*desc.Protocol, *desc.Method, error) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return nil, nil, fmt.Errorf("%q is not Protocol.Method (gamewire nex protocols lists them)", name)
	}
	p, err := set.Protocol(name[:i])
	if err != nil {
		return nil, nil, err
	}
	if variant != "" && p.ParentProtocol == nil {
		p = dyn.SelectProtocol(set, p.ID, variant)
	}
	m := p.MethodByName(name[i+1:])
	if m == nil {
		names := make([]string, 0)
		for _, m := range p.AllMethods() {
			names = append(names, m.Name)
		}
		return nil, nil, fmt.Errorf("protocol %s has no method %q (it has %s)", p.Name, name[i+1:], strings.Join(names, ", "))
	}
	if m.Opaque {
		return nil, nil, fmt.Errorf("%s.%s: its parameters are not described, so it cannot be called by description", p.Name, m.Name)
	}
	return p, m, nil
}

// parseParams decodes the JSON parameters (an object; "" is {}).
func parseParams(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, fmt.Errorf("parameters are not a JSON object: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("parameters: more after the JSON object")
	}
	return obj, nil
}

func runNEXCall(cmd *cobra.Command, o *nexCallOptions, addr, name, params string) error {
	set, err := o.descs.set()
	if err != nil {
		return fmt.Errorf("nex call: descriptions: %w", err)
	}
	variant := ""
	if o.game != "" {
		g, err := games.Find(o.game)
		if err != nil {
			return fmt.Errorf("nex call: --game: %w", err)
		}
		variant = dyn.GameVariant(g.Name)
	}
	p, m, err := resolveMethod(set, name, variant)
	if err != nil {
		return fmt.Errorf("nex call: %w", err)
	}
	obj, err := parseParams(params)
	if err != nil {
		return fmt.Errorf("nex call: %w", err)
	}
	version, gates, err := parseNEXFlags(o.nexVersion, o.nexGates)
	if err != nil {
		return fmt.Errorf("nex call: %w", err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	sess, err := o.login(ctx, addr)
	if err != nil {
		return fmt.Errorf("nex call: %w", err)
	}
	defer closeSession(sess)
	c := dyn.Codec{Set: set, Settings: sess.RMC.Settings(), Version: version}
	c.Settings.Gates = gates
	// Encoding needs the session's settings (PID size, structure headers), so
	// a bad parameter is found after the login.
	body, err := c.AppendFields(nil, m.Params, obj)
	if err != nil {
		return fmt.Errorf("nex call: %s.%s: %w", p.Name, m.Name, err)
	}
	resp, err := sess.RMC.Call(ctx, p.ID, m.ID, body)
	out := cmd.OutOrStdout()
	var ce *rmc.CallError
	if errors.As(err, &ce) {
		name := ce.Result.Name()
		if name == "" {
			name = "unknown" // a code errors.py does not name
		}
		js := fmt.Sprintf(`{"error":%q,"code":"0x%08X"}`, name, uint32(ce.Result))
		fmt.Fprintln(out, js)
		return fmt.Errorf("nex call: %s.%s: %s", p.Name, m.Name, ce.Result)
	}
	if err != nil {
		return fmt.Errorf("nex call: %s.%s: %w", p.Name, m.Name, err)
	}
	vals, err := c.DecodeFields(m.Results, resp)
	if err != nil {
		return fmt.Errorf("nex call: %s.%s: response: %w (%d bytes: %x)", p.Name, m.Name, err, len(resp), resp)
	}
	js := dyn.AppendFieldsJSON(nil, vals)
	if !o.compact {
		var buf bytes.Buffer
		if json.Indent(&buf, js, "", "  ") == nil {
			js = buf.Bytes()
		}
	}
	_, err = fmt.Fprintf(out, "%s\n", js)
	return err
}
