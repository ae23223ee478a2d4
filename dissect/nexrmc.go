package dissect

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/dyn"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
)

// NEX RMC by description: a message record that is one whole RMC request or
// response gets an "rmc" object with the ids, the protocol and method names the
// descriptions give (nex/desc), and the request's parameters or the response's
// return values decoded by description (nex/desc/dyn). A response is matched to
// its request by call id on its connection. A game's variant of a protocol
// (MK8's MatchmakeExtension, ...) is chosen by Config.Game, else by the flow's
// access key through the games table (nex/games).

// maxPendingCalls bounds the requests a connection remembers while waiting for
// their responses; past it the oldest are forgotten.
const maxPendingCalls = 1024

// maxSummaryParams bounds the parameter text a summary line carries.
const maxSummaryParams = 400

// rmcFlow is a PRUDP connection's RMC state.
type rmcFlow struct {
	calls   map[uint64]pendingCall // by request direction<<32 | call id
	minor   [2]int                 // PRUDP minor version each side offered (-1: not seen)
	game    *games.Game
	variant string
	looked  bool
	// gates is the flow's reading of the disputed gates under Config.NEXGates
	// auto, learned as nex.Server learns a connection's (docs/nex.md
	// "Disputed gates"); gatesSet: its first reading is chosen.
	gates    types.GateReading
	gatesSet bool
}

type pendingCall struct {
	method *desc.Method
	frame  uint64
}

// descriptions returns the description set, loaded once per Dissector; nil when
// decoding by description is off or the set does not load.
func (d *Dissector) descriptions() *desc.Set {
	if d.descsLoaded {
		return d.descs
	}
	d.descsLoaded = true
	if d.cfg.NoDescriptions {
		return nil
	}
	d.descs = d.cfg.Descriptions
	if d.descs == nil {
		if s, err := desc.Builtin(); err == nil {
			d.descs = s
		}
	}
	if d.descs != nil {
		d.gateLo, d.gateHi = disputeWindow(d.descs)
	}
	return d.descs
}

// disputeWindow returns the NEX versions [lo, hi) where the disputed gates of
// set's structures and method parameters read differently in the two readings
// (0, 0 when it has none): outside it a message that fails to decode fails in
// both.
func disputeWindow(set *desc.Set) (lo, hi types.Version) {
	cond := func(c desc.Cond) {
		if !c.Disputed() {
			return
		}
		a, b := min(c.NexMin, c.NCMin), max(c.NexMin, c.NCMin)
		if lo == 0 || a < lo {
			lo = a
		}
		hi = max(hi, b)
	}
	for _, f := range set.Files() {
		for fl := range f.Fields() {
			cond(fl.Cond)
		}
	}
	return lo, hi
}

// protocol returns the protocol of id for a game variant ("" for none): the
// variant's when the descriptions have one, else the root protocol.
func (d *Dissector) protocol(id uint16, variant string) *desc.Protocol {
	key := protoKey{id, variant}
	if p, ok := d.protoCache[key]; ok {
		return p
	}
	p := dyn.SelectProtocol(d.descriptions(), id, variant)
	if d.protoCache == nil {
		d.protoCache = map[protoKey]*desc.Protocol{}
	}
	d.protoCache[key] = p
	return p
}

type protoKey struct {
	id      uint16
	variant string
}

// rmcGame returns the game of the flow: Config.Game, else the game whose access
// key the flow uses.
func (h *prudpHandler) rmcGame() (*games.Game, string) {
	st := &h.rmc
	if st.looked {
		return st.game, st.variant
	}
	st.looked = true
	if g := h.d.cfg.Game; g != nil {
		st.game = g
	} else if h.accessKey != "" {
		for i := range games.Table {
			if games.Table[i].AccessKey == h.accessKey {
				st.game = &games.Table[i]
				break
			}
		}
	}
	st.variant = h.d.cfg.Variant
	if st.variant == "" && st.game != nil {
		st.variant = dyn.GameVariant(st.game.Name)
	}
	if h.rx.Name == wire.NameLite {
		// Switch servers answer the ticket granting of Authentication_NX.
		st.variant += ",nx"
	}
	return st.game, st.variant
}

// noteMinor records the PRUDP minor version a SYN or CONNECT offers (V1 and
// Lite; the CONNECT's, later, wins).
func (h *prudpHandler) noteMinor(dir int, p *wire.Packet) {
	if p.Options&wire.OptSupportedFunctions != 0 {
		h.rmc.minor[dir] = int(p.SupportedFunctions&0xff) + 1
	}
}

// codec returns the codec settings of the flow: PID size and structure headers
// as nex.ConnSettings derives them (Lite: 8-byte PIDs and headers; V1: headers
// from negotiated minor version 3; the other dialects neither), the NEX
// version (Config.NEXVersion, else the game's when the table has it) and the
// reading of the disputed gates (Config.NEXGates; auto: the flow's, learned).
func (h *prudpHandler) codec(set *desc.Set) dyn.Codec {
	g, _ := h.rmcGame()
	c := dyn.Codec{Set: set, Version: h.d.cfg.NEXVersion}
	if c.Version == 0 && g != nil {
		c.Version = types.Version(g.NEXVersion)
	}
	switch h.rx.Name {
	case wire.NameLite:
		c.Settings = types.Settings{PIDSize: 8, StructureHeader: true}
		if c.Version == 0 {
			c.Version = types.Version4
		}
	case wire.NameV1:
		minor := 0
		switch a, b := h.rmc.minor[0], h.rmc.minor[1]; {
		case a > 0 && b > 0:
			minor = min(a, b) - 1
		case a > 0:
			minor = a - 1
		case b > 0:
			minor = b - 1
		default: // no handshake in the capture: go by the NEX version
			if c.Version >= types.Version3_5 {
				minor = 3
			}
		}
		c.Settings = types.SettingsForMinorVersion(minor, 4)
	}
	c.Settings.Version = c.Version
	c.Settings.Gates = h.d.cfg.NEXGates
	if c.Settings.Gates == types.GatesAuto {
		// The first reading is auto's at the flow's settings (the handshake is
		// over when RMC comes); a message that decodes only in the other one
		// switches it, as nex.Server switches a connection's.
		if !h.rmc.gatesSet {
			h.rmc.gates.Set(c.Settings.NintendoClientsGates())
			h.rmc.gatesSet = true
		}
		c.Settings.Learned = &h.rmc.gates
	}
	return c
}

// otherGates decodes body again in the other reading of the disputed gates when
// the flow learns its reading (Config.NEXGates auto) and the first reading
// failed with err: when that succeeds the flow keeps the other reading, as a
// server keeps it for a connection whose request parses only that way. Only
// at the versions where the descriptions' readings differ (disputeWindow): the
// first reading's values and error stand otherwise, and when the other fails too.
func (h *prudpHandler) otherGates(cd dyn.Codec, fields []*desc.Field, body []byte, vals []dyn.FieldValue, err error) ([]dyn.FieldValue, error) {
	other, ok := cd.Settings.OtherGates(h.d.gateLo, h.d.gateHi)
	if !ok {
		return vals, err
	}
	oc := cd
	oc.Settings = other
	h.d.dynScratch.Reset()
	if ovals, oerr := oc.DecodeFieldsScratch(fields, body, &h.d.dynScratch); oerr == nil {
		cd.Settings.Learn(other)
		return ovals, nil
	}
	h.d.dynScratch.Reset() // the first reading's values again, for the record
	return cd.DecodeFieldsScratch(fields, body, &h.d.dynScratch)
}

// isNEX reports whether the flow's dialect carries NEX RMC.
func (h *prudpHandler) isNEX() bool {
	switch h.rx.Name {
	case wire.NameV0, wire.NameV0Friends, wire.NameV1, wire.NameLite:
		return true
	}
	return false
}

// appendRMC adds an "rmc" object to a message record when the message is one
// whole packed RMC request or response (nintendo-wiki "RMC Protocol", nex/rmc), and
// a few words to the summary. The size field is checked first, so other
// payloads cost nothing.
func (h *prudpHandler) appendRMC(c *pktCtx, r *Record, b []byte, msg []byte) []byte {
	if len(msg) < 9 || int(binary.LittleEndian.Uint32(msg)) != len(msg)-4 {
		return b
	}
	var set *desc.Set
	if h.isNEX() {
		set = h.d.descriptions()
	}
	obj := len(r.Fields)
	if rmc.IsRequest(msg) {
		q, n, err := rmc.ParseRequest(msg)
		if err != nil || n != len(msg) {
			return b
		}
		r.addObject("rmc", 0)
		b = appendRMCCall(r, b, "request", q.Protocol, q.Method, q.CallID)
		if set != nil {
			b = h.describeCall(c, r, b, set, q.Protocol, q.Method, q.CallID, q.Params, true, false)
		}
		r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
		return b
	}
	q, n, err := rmc.ParseResponse(msg)
	if err != nil || n != len(msg) {
		return b
	}
	kind := "response"
	if q.IsError() {
		kind = "error"
	}
	r.addObject("rmc", 0)
	b = appendRMCCall(r, b, kind, q.Protocol, q.Method, q.CallID)
	res := q.Result.Name()
	if res == "" {
		res = q.Result.String()
	}
	r.addString("result", res)
	if set != nil {
		if q.IsError() {
			b = h.describeCall(c, r, b, set, q.Protocol, q.Method, q.CallID, nil, false, true)
			b = append(b, ' ')
			b = append(b, res...)
		} else {
			b = h.describeCall(c, r, b, set, q.Protocol, q.Method, q.CallID, q.Data, false, false)
		}
	}
	r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
	return b
}

// describeCall names the protocol and method of a call and decodes its
// parameters (a request) or return values (a success response; body nil for an
// error, isErr) into the "rmc" object being built and the summary.
func (h *prudpHandler) describeCall(c *pktCtx, r *Record, b []byte, set *desc.Set, protocol uint16, method, callID uint32, body []byte, request, isErr bool) []byte {
	_, variant := h.rmcGame()
	dir := c.dir
	var m *desc.Method
	pname := ""
	st := &h.rmc
	if request {
		if p := h.d.protocol(protocol, variant); p != nil {
			m = p.Method(method)
			if m != nil && !p.NoResponse {
				if st.calls == nil {
					st.calls = map[uint64]pendingCall{}
				}
				if len(st.calls) >= maxPendingCalls {
					clear(st.calls)
				}
				st.calls[uint64(dir)<<32|uint64(callID)] = pendingCall{method: m, frame: c.d.frame.Number}
			}
			pname = p.Name
			r.addString("protocol", pname)
		}
	} else {
		key := uint64(1-dir)<<32 | uint64(callID)
		// An error response carries no method id: its request names the method.
		if pc, ok := st.calls[key]; ok && (isErr || pc.method.ID == method) && pc.method.Protocol.Root().ID == protocol {
			m = pc.method
			delete(st.calls, key)
			pname = h.d.protocol(protocol, variant).Name
			r.addString("protocol", pname)
			r.addInt("request_frame", int64(pc.frame))
		} else if p := h.d.protocol(protocol, variant); p != nil {
			if !isErr {
				m = p.Method(method)
			}
			pname = p.Name
			r.addString("protocol", pname)
		}
	}
	if m == nil {
		return b
	}
	r.addString("method", m.Name)
	b = append(b, " ("...)
	b = append(b, pname...)
	b = append(b, '.')
	b = append(b, m.Name...)
	b = append(b, ')')
	if m.Opaque || isErr {
		return b
	}
	fields := m.Results
	key := "results"
	if request {
		fields, key = m.Params, "params"
	}
	cd := h.codec(set)
	h.d.dynScratch.Reset()
	vals, err := cd.DecodeFieldsScratch(fields, body, &h.d.dynScratch)
	if err != nil {
		vals, err = h.otherGates(cd, fields, body, vals, err)
	}
	if !request && err == nil && m.Protocol.Root().ID == rmc.ProtocolTicketGranting {
		if t, ok := dyn.Lookup(vals, "ticket"); ok && len(t.Bytes) > 0 {
			h.d.learnTicket(r, t.Bytes)
		}
	}
	if len(vals) > 0 || err == nil {
		obj := len(r.Fields)
		// The summary's text of the values is rendered from these fields when
		// a text line is asked for (Record.appendInfo).
		r.paramsAt, r.paramsField = len(b), obj
		r.addObject(key, 0)
		for i := range vals {
			addValue(r, vals[i].Name, &vals[i].Value)
		}
		r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
	}
	if err != nil {
		r.addString(key+"_error", err.Error())
		b = append(b, " [undecoded: "...)
		b = append(b, err.Error()...)
		b = append(b, ']')
	}
	return b
}

// indexKeys are the keys of the first list items, made once.
var indexKeys = func() []string {
	out := make([]string, 64)
	for i := range out {
		out[i] = "[" + strconv.Itoa(i) + "]"
	}
	return out
}()

func indexKey(i int) string {
	if i < len(indexKeys) {
		return indexKeys[i]
	}
	return "[" + strconv.Itoa(i) + "]"
}

// addValue adds v to r as field k: structures as objects, lists as arrays.
func addValue(r *Record, k string, v *dyn.Value) {
	switch v.Kind() {
	case desc.KBool:
		r.addBool(k, v.Bool())
	case desc.KUint8, desc.KUint16, desc.KUint32, desc.KUint64, desc.KPID:
		if v.Uint() > math.MaxInt64 {
			r.addJSON(k, strconv.AppendUint(nil, v.Uint(), 10))
		} else {
			r.addInt(k, int64(v.Uint()))
		}
	case desc.KSint8, desc.KSint16, desc.KSint32, desc.KSint64:
		r.addInt(k, v.Int())
	case desc.KEnum:
		if n := v.EnumName(); n != "" {
			r.addEnum(k, n, v.Int())
		} else {
			r.addInt(k, v.Int())
		}
	case desc.KResult:
		res := types.Result(v.Uint())
		if n := res.Name(); n != "" {
			r.addString(k, n)
		} else {
			r.addString(k, res.String())
		}
	case desc.KDateTime:
		r.addString(k, types.DateTime(v.Uint()).String())
	case desc.KString, desc.KStationURL:
		r.addString(k, v.Str)
	case desc.KBuffer, desc.KQBuffer, desc.KQUUID:
		r.addHex(k, v.Bytes)
	case desc.KList:
		arr := len(r.Fields)
		r.addArray(k, 0)
		for i := range v.Items {
			addValue(r, indexKey(i), &v.Items[i])
		}
		r.Fields[arr].Int = int64(len(r.Fields) - arr - 1)
	case desc.KMap:
		obj := len(r.Fields)
		kk := v.Type.Key.Kind
		if kk == desc.KString || kk.Integer() || kk == desc.KPID || kk == desc.KEnum {
			r.addObject(k, 0)
			for i := range v.Pairs {
				p := &v.Pairs[i]
				name := p.Key.Str
				if kk != desc.KString {
					name = strings.Trim(string(p.Key.AppendJSON(nil)), `"`)
				}
				addValue(r, name, &p.Value)
			}
		} else {
			r.addArray(k, 0)
			for i := range v.Pairs {
				p := &v.Pairs[i]
				o := len(r.Fields)
				r.addObject(indexKey(i), 0)
				addValue(r, "key", &p.Key)
				addValue(r, "value", &p.Value)
				r.Fields[o].Int = int64(len(r.Fields) - o - 1)
			}
		}
		r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
	case desc.KStruct:
		obj := len(r.Fields)
		r.addObject(k, 0)
		if v.Struct != nil {
			for li := range v.Struct.Levels {
				fs := v.Struct.Levels[li].Fields
				for fi := range fs {
					addValue(r, fs[fi].Name, &fs[fi].Value)
				}
			}
		}
		r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
	case desc.KAnyData:
		obj := len(r.Fields)
		r.addObject(k, 0)
		r.addString("class", v.Str)
		if v.Struct != nil {
			inner := len(r.Fields)
			r.addObject("value", 0)
			for li := range v.Struct.Levels {
				fs := v.Struct.Levels[li].Fields
				for fi := range fs {
					addValue(r, fs[fi].Name, &fs[fi].Value)
				}
			}
			r.Fields[inner].Int = int64(len(r.Fields) - inner - 1)
		} else {
			r.addHex("hex", v.Bytes)
		}
		r.Fields[obj].Int = int64(len(r.Fields) - obj - 1)
	default: // floats, variants, Data
		r.addJSON(k, v.AppendJSON(nil))
	}
}

// learnedTicket is what a player's ticket holds: the session key of their
// secure connection and the internal ticket its CONNECT will present.
type learnedTicket struct {
	pid        uint64
	sessionKey []byte
	internal   []byte
}

// maxLearnedTickets bounds the tickets a capture's passwords open.
const maxLearnedTickets = 4096

// learnTicket opens the ticket of an authentication response (Login, LoginEx,
// RequestTicket, ValidateAndRequestTicket...: "Kerberos Tickets" in
// nintendo-wiki "Kerberos Authentication") with the keys of the keys file's
// passwords, and keeps its session key for the secure CONNECT that presents its
// internal ticket. It says in r whether the ticket opened.
func (d *Dissector) learnTicket(r *Record, sealed []byte) {
	targets := d.kerberosTargets()
	if len(targets) == 0 {
		return
	}
	for _, tk := range targets {
		if !tk.password {
			continue
		}
		for _, s := range []kerberos.Settings{kerberos.NEX3DS, kerberos.Switch, kerberos.Friends} {
			t, err := kerberos.OpenTicket(sealed, tk.key, s)
			if err != nil {
				continue
			}
			if len(d.learned) < maxLearnedTickets {
				d.learned = append(d.learned, learnedTicket{pid: tk.pid, sessionKey: t.SessionKey, internal: t.Internal})
			}
			r.addString("ticket", "opened with the password of PID "+strconv.FormatUint(tk.pid, 10)+
				": session key "+hex.EncodeToString(t.SessionKey)+" for PID "+strconv.FormatUint(t.TargetPID, 10))
			return
		}
	}
	r.addString("ticket", "not opened: no password of the keys file opens it")
}
