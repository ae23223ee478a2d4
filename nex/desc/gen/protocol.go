package main

import (
	"fmt"
	"go/token"
	"strings"

	"github.com/gamewire/gamewire/nex/desc"
)

// protoName is the Go name of a protocol (MatchmakeExtension_MK8 ->
// MatchmakeExtensionMK8).
func protoName(p *desc.Protocol) string { return desc.GoName(p.Name) }

// msgName is the Go name of a method's request or response type, qualified when the
// method is declared in another family (a variant's inherited method).
func (g *gen) msgName(m *desc.Method, suffix string) string {
	return g.qualify(m.Protocol.File, protoName(m.Protocol)+desc.GoName(m.Name)+suffix)
}

// argName is the Go parameter name of a method parameter or result: its
// description name in lowerCamelCase, clear of Go keywords and the stub's own names.
func argName(name string) string {
	words := strings.Split(name, "_")
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(strings.ToLower(w[:1]) + w[1:])
			continue
		}
		b.WriteString(desc.GoName(w))
	}
	s := b.String()
	switch {
	case s == "" || s[0] >= '0' && s[0] <= '9':
		s = "x" + s
	case token.IsKeyword(s) || reservedArgs[s]:
		s += "Arg"
	}
	return s
}

// resultName is the Go name of a method result: its argName, with "Out" added
// when a parameter has that name too.
func resultName(m *desc.Method, f *desc.Field) string {
	n := argName(f.Name)
	for _, p := range m.Params {
		if argName(p.Name) == n {
			return n + "Out"
		}
	}
	return n
}

// reservedArgs are the names generated methods use for their own variables and
// imports.
var reservedArgs = map[string]bool{
	"ctx": true, "c": true, "err": true, "out": true, "w": true, "r": true, "req": true, "resp": true,
	"a": true, "x": true, "data": true, "params": true, "types": true, "rmc": true, "context": true,
	"fmt": true, "h": true,
}

// methodConst is the Go name of a method id constant.
func methodConst(p *desc.Protocol, m *desc.Method) string {
	return protoName(p) + "Method" + desc.GoName(m.Name)
}

func (g *gen) protocol(p *desc.Protocol) error {
	g.use(modulePath + "/nex/types")
	g.use(modulePath + "/nex/rmc")
	g.use("context")
	pn := protoName(p)
	all := p.AllMethods()

	g.p("// %sProtocolID is the id of the %s protocol.\n", pn, p.Name)
	if p.Doc != "" {
		g.p("//\n")
		g.comment(p.Doc)
	}
	if p.ParentProtocol != nil {
		g.p("//\n// It is a variant of %s: its methods add to or replace its parent's.\n", p.ParentProtocol.QualifiedName())
	}
	g.p("const %sProtocolID uint16 = %d\n\n", pn, p.ID)

	if len(all) > 0 {
		g.p("// Method ids of %s.\nconst (\n", pn)
		for _, m := range all {
			g.p("\t%s uint32 = %d\n", methodConst(p, m), m.ID)
		}
		g.p(")\n\n")
	}
	// A variant names the methods it declares and asks its parent for the rest.
	named, fallback := all, `""`
	if pp := p.ParentProtocol; pp != nil {
		named, fallback = p.Methods, g.qualify(pp.File, protoName(pp)+"MethodName")+"(id)"
	}
	g.p("// %sMethodName returns the name of a %s method, \"\" for an unknown id.\n", pn, pn)
	g.p("func %sMethodName(id uint32) string {\n", pn)
	if len(named) > 0 {
		g.p("\tswitch id {\n")
		for _, m := range named {
			g.p("\tcase %d:\n\t\treturn %q\n", m.ID, m.Name)
		}
		g.p("\t}\n")
	}
	g.p("\treturn %s\n}\n\n", fallback)

	// Messages of the methods this protocol declares.
	for _, m := range p.Methods {
		if m.Opaque {
			continue
		}
		g.message(p, m, m.Params, "Request", "parameters")
		g.message(p, m, m.Results, "Response", "results")
	}

	if err := checkNames(p); err != nil {
		return err
	}
	g.handler(p, all)
	g.server(p, all)
	if p.ParentProtocol != nil {
		g.ownServer(p)
	}
	if !p.NoResponse {
		return g.client(p)
	}
	return nil
}

// message writes a method's request or response type.
func (g *gen) message(p *desc.Protocol, m *desc.Method, fields []*desc.Field, suffix, what string) {
	name := protoName(p) + desc.GoName(m.Name) + suffix
	g.p("// %s holds the %s of %s.%s.\ntype %s struct {\n", name, what, p.Name, m.Name, name)
	for _, f := range fields {
		if f.Doc != "" {
			g.comment(f.Doc)
		}
		tag := f.Name
		if f.Type.Kind == desc.KAnyData && f.Type.Name != "" {
			tag += ",any=" + f.Type.Name
		}
		g.p("\t%s %s `nex:%q`\n", fieldName(f.Name), g.goType(f.Type), tag)
	}
	g.p("}\n\n")
	g.p("// Append appends the %s in order.\nfunc (x *%s) Append(w *types.Writer) {\n", what, name)
	if usesNex(fields) {
		g.p("v := w.NEXVersion()\n")
	}
	for _, f := range fields {
		c := condExpr(f.Cond, "w", true)
		if c != "" {
			g.p("if %s {\n", c)
		}
		g.writeStmt("x."+fieldName(f.Name), f.Type, 0)
		if c != "" {
			g.p("}\n")
		}
	}
	g.p("}\n\n")
	g.p("// Read reads the %s in order; the caller checks r.Done.\nfunc (x *%s) Read(r *types.Reader) {\n", what, name)
	if usesNex(fields) {
		g.p("v := r.NEXVersion()\n")
	}
	for _, f := range fields {
		c := condExpr(f.Cond, "r", false)
		if c != "" {
			g.p("if %s {\n", c)
		}
		g.readStmt("x."+fieldName(f.Name), f.Type, fmt.Sprintf("%q", f.Name))
		if c != "" {
			g.p("}\n")
		}
	}
	g.p("}\n\n")
}

// signature returns a method's handler parameters and results (without ctx and
// the call) and the zero-result return statement's names.
func (g *gen) signature(m *desc.Method) (params, results string) {
	var ps, rs []string
	for _, f := range m.Params {
		ps = append(ps, argName(f.Name)+" "+g.goType(f.Type))
	}
	for _, f := range m.Results {
		rs = append(rs, resultName(m, f)+" "+g.goType(f.Type))
	}
	rs = append(rs, "err error")
	return strings.Join(ps, ", "), strings.Join(rs, ", ")
}

// methodSig is a method's handler signature after ctx and the call.
func (g *gen) methodSig(m *desc.Method) string {
	if m.Opaque {
		return "(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error)"
	}
	params, results := g.signature(m)
	return fmt.Sprintf("(ctx context.Context, c *rmc.Call%s) (%s)", prefixComma(params), results)
}

func (g *gen) handler(p *desc.Protocol, all []*desc.Method) {
	pn := protoName(p)
	g.p("// %sHandler answers %s calls: one method per method of the protocol, with its\n", pn, p.Name)
	g.p("// parameters decoded and its results encoded by the generated code. A method's\n")
	g.p("// error fails the call as rmc.Handler's does (a types.Result is sent as that code).\n")
	g.p("// Embed Unimplemented%s to answer the methods a handler does not implement\n// with Core::NotImplemented.\n", pn)
	methods := func(ms []*desc.Method) {
		for _, m := range ms {
			if m.Doc != "" {
				g.comment(m.Doc)
			}
			if m.Opaque {
				g.p("\t// %s's parameters are not described: it gets the raw call.\n", desc.GoName(m.Name))
			}
			g.p("\t%s%s\n", desc.GoName(m.Name), g.methodSig(m))
		}
	}
	if pp := p.ParentProtocol; pp == nil {
		g.p("type %sHandler interface {\n", pn)
		methods(all)
		g.p("}\n\n")
	} else {
		var inherited []*desc.Method
		for _, m := range all {
			if m.Protocol != p {
				inherited = append(inherited, m)
			}
		}
		g.p("//\n// It is %sOwnHandler (the methods %s declares)\n// with the methods it inherits from %s.\n", pn, p.Name, pp.Name)
		g.p("type %sHandler interface {\n\t%sOwnHandler\n", pn, pn)
		methods(inherited)
		g.p("}\n\n")
		g.p("// %sOwnHandler answers the methods %s declares: those it adds to %s and\n", pn, p.Name, pp.Name)
		g.p("// those it replaces (an id of %s's with another method). A game's package\n", pp.Name)
		g.p("// implements it beside %s's service, which answers the inherited methods\n", pp.Name)
		g.p("// (New%sOwnServer, Serve%sOwn); embed Unimplemented%s for the methods it\n// does not answer.\n", pn, pn, pn)
		g.p("type %sOwnHandler interface {\n", pn)
		methods(p.Methods)
		g.p("}\n\n")
	}

	g.p("// Unimplemented%s answers every %s method with Core::NotImplemented.\n", pn, p.Name)
	if pp := p.ParentProtocol; pp != nil {
		g.p("type Unimplemented%s struct{ %s }\n\n", pn, g.qualify(pp.File, "Unimplemented"+protoName(pp)))
	} else {
		g.p("type Unimplemented%s struct{}\n\n", pn)
	}
	for _, m := range p.Methods {
		mn := desc.GoName(m.Name)
		g.p("// %s answers Core::NotImplemented.\nfunc (Unimplemented%s) %s%s {\n", mn, pn, mn, g.methodSig(m))
		if m.Opaque {
			g.p("\treturn out, types.CoreNotImplemented\n}\n\n")
		} else {
			g.p("\terr = types.CoreNotImplemented\n\treturn\n}\n\n")
		}
	}
}

// serveFunc is the name of the exported function answering one method of the
// protocol that declares it, qualified as seen from this package.
func (g *gen) serveFunc(m *desc.Method) string {
	return g.qualify(m.Protocol.File, "Serve"+protoName(m.Protocol)+desc.GoName(m.Name))
}

func (g *gen) server(p *desc.Protocol, all []*desc.Method) {
	pn := protoName(p)
	srv := firstLower(pn) + "Server"
	g.p("// %s adapts a %sHandler to rmc.Handler.\ntype %s struct{ h %sHandler }\n\n", srv, pn, srv, pn)
	g.p("// New%sServer returns h as an rmc.Handler for the whole protocol: calls of\n// methods it does not describe answer Core::NotImplemented.\n", pn)
	g.p("func New%sServer(h %sHandler) rmc.Handler { return %s{h} }\n\n", pn, pn, srv)
	g.p("// Register%s registers h for every %s method on mux as one protocol handler.\n", pn, p.Name)
	g.p("// Methods registered on mux one by one (mux.Handle) take precedence: that is how a\n// game overrides or adds a method without touching h.\n")
	g.p("func Register%s(mux *rmc.Mux, h %sHandler) { mux.HandleProtocol(%sProtocolID, %s{h}) }\n\n", pn, pn, pn, srv)
	g.p("// Register%sMethods registers h for the given %s methods only.\n", pn, p.Name)
	g.p("func Register%sMethods(mux *rmc.Mux, h %sHandler, methods ...uint32) {\n\tfor _, id := range methods {\n\t\tmux.Handle(%sProtocolID, id, %s{h})\n\t}\n}\n\n", pn, pn, pn, srv)

	g.p("// ServeRMC answers a call with Serve%s.\n", pn)
	g.p("func (a %s) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {\n\treturn Serve%s(a.h, ctx, c, out)\n}\n\n", srv, pn)
	g.p("// Serve%s answers a %s call with h: it decodes the parameters, calls the\n// method's handler method and encodes its results; methods it does not describe\n// answer Core::NotImplemented. A service whose ServeRMC does more (checks, error\n// mapping) calls it.\n", pn, p.Name)
	g.p("func Serve%s(h %sHandler, ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {\n", pn, pn)
	if p.ParentProtocol != nil {
		g.p("if out, handled, err := Serve%sOwn(h, ctx, c, out); handled {\nreturn out, err\n}\n", pn)
	}
	g.p("\tswitch c.Method {\n")
	for _, m := range all {
		if m.Protocol == p && p.ParentProtocol != nil {
			continue // answered by ServeOwn
		}
		g.p("\tcase %d:\n\t\treturn %s(h, ctx, c, out)\n", m.ID, g.serveFunc(m))
	}
	g.p("\t}\n\treturn out, types.CoreNotImplemented\n}\n\n")

	// One function per method this protocol declares; its variants' servers
	// call them for the methods they inherit.
	for _, m := range p.Methods {
		mn := desc.GoName(m.Name)
		g.p("// Serve%s%s answers a %s.%s call with h's %s: the generated decoding and\n// encoding, for %s's server and its variants'.\n", pn, mn, p.Name, m.Name, mn, pn)
		g.p("func Serve%s%s(h interface {\n\t%s%s\n}, ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {\n", pn, mn, mn, g.methodSig(m))
		if m.Opaque {
			if p.NoResponse {
				g.p("out, err := h.%s(ctx, c, out)\nif err != nil {\nreturn out, err\n}\nreturn out, rmc.ErrNoResponse\n}\n\n", mn)
			} else {
				g.p("return h.%s(ctx, c, out)\n}\n\n", mn)
			}
			continue
		}
		g.use("fmt")
		g.p("r := c.Reader()\n")
		var args []string
		if len(m.Params) > 0 {
			g.p("var req %s\nreq.Read(&r)\n", g.msgName(m, "Request"))
			for _, f := range m.Params {
				args = append(args, "req."+fieldName(f.Name))
			}
		}
		if lo, hi := g.disputeWindow(m.Params); lo != 0 {
			// A disputed gate applies: a request that parses only in the
			// other reading teaches the connection that reading.
			g.p("err := r.Done()\nif err != nil {\n")
			g.p("if st, ok := c.Peer.Settings.OtherGates(%d, %d); ok {\n", lo, hi)
			g.p("r2 := types.NewReader(c.Params, st)\nvar req2 %s\nreq2.Read(&r2)\n", g.msgName(m, "Request"))
			g.p("if r2.Done() == nil {\nc.Peer.Settings.Learn(st)\nreq, err = req2, nil\n}\n}\n}\n")
			g.p("if err != nil {\nreturn out, rmc.ParamError(h, %d, fmt.Errorf(\"%s.%s: %%w\", err))\n}\n", m.ID, p.Name, m.Name)
		} else {
			g.p("if err := r.Done(); err != nil {\nreturn out, rmc.ParamError(h, %d, fmt.Errorf(\"%s.%s: %%w\", err))\n}\n", m.ID, p.Name, m.Name)
		}
		var names []string
		for _, f := range m.Results {
			names = append(names, resultName(m, f))
		}
		call := fmt.Sprintf("h.%s(ctx, c%s)", mn, prefixComma(strings.Join(args, ", ")))
		if len(names) == 0 {
			g.p("if err := %s; err != nil {\nreturn out, err\n}\n", call)
		} else {
			g.p("%s, err := %s\nif err != nil {\nreturn out, err\n}\n", strings.Join(names, ", "), call)
		}
		if p.NoResponse {
			g.p("return out, rmc.ErrNoResponse\n}\n\n")
			continue
		}
		if len(names) == 0 {
			g.p("return out, nil\n}\n\n")
			continue
		}
		g.p("resp := %s{", g.msgName(m, "Response"))
		for i, f := range m.Results {
			if i > 0 {
				g.p(", ")
			}
			g.p("%s: %s", fieldName(f.Name), names[i])
		}
		g.p("}\nw := types.NewWriter(out, c.Peer.Settings)\nresp.Append(&w)\nreturn w.Bytes()\n}\n\n")
	}
}

// ownServer writes a variant's dispatch of the methods it declares (adds to its
// parent or replaces in it), for a game's package that serves those beside the
// parent protocol's service: the handler interface of those methods only, the
// dispatcher that reports whether it answered, a handler that passes the other
// methods to the parent's service, and their registration on a Mux.
func (g *gen) ownServer(p *desc.Protocol) {
	pn := protoName(p)
	pp := p.ParentProtocol

	g.p("// Serve%sOwn answers a call of a method %s declares with h as Serve%s\n", pn, p.Name, pn)
	g.p("// does, and reports handled. A call of any other method (one %s inherits)\n", p.Name)
	g.p("// is not answered: handled is false and out is returned as it is, for the\n")
	g.p("// caller to pass to the parent's service. A service whose ServeRMC checks\n// calls or maps errors calls it.\n")
	g.p("func Serve%sOwn(h %sOwnHandler, ctx context.Context, c *rmc.Call, out []byte) (_ []byte, handled bool, err error) {\n\tswitch c.Method {\n", pn, pn)
	for _, m := range p.Methods {
		g.p("\tcase %d:\n\t\tout, err = %s(h, ctx, c, out)\n", m.ID, g.serveFunc(m))
	}
	g.p("\tdefault:\n\t\treturn out, false, nil\n\t}\n\treturn out, true, err\n}\n\n")

	srv := firstLower(pn) + "OwnServer"
	g.p("// %s adapts the handler of %s's own methods and its parent's\n// service to rmc.Handler.\n", srv, p.Name)
	g.p("type %s struct {\n\th      %sOwnHandler\n\tparent rmc.Handler\n}\n\n", srv, pn)
	g.p("// New%sOwnServer returns an rmc.Handler for the whole protocol: h answers\n", pn)
	g.p("// the methods %s declares, parent (%s's service) the ones it inherits; a\n", p.Name, pp.Name)
	g.p("// nil parent answers those Core::NotImplemented. A replaced method never\n// reaches parent.\n")
	g.p("func New%sOwnServer(h %sOwnHandler, parent rmc.Handler) rmc.Handler {\n\treturn %s{h, parent}\n}\n\n", pn, pn, srv)
	g.p("// ServeRMC answers a call with Serve%sOwn, else with the parent.\n", pn)
	g.p("func (a %s) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {\n", srv)
	g.p("\tout, handled, err := Serve%sOwn(a.h, ctx, c, out)\n", pn)
	g.p("\tswitch {\n\tcase handled:\n\t\treturn out, err\n\tcase a.parent == nil:\n\t\treturn out, types.CoreNotImplemented\n\t}\n")
	g.p("\treturn a.parent.ServeRMC(ctx, c, out)\n}\n\n")

	g.p("// Register%sOwn registers h on mux for each method %s declares (mux.Handle),\n", pn, p.Name)
	g.p("// so that the handler registered for the whole protocol (%s's service,\n", pp.Name)
	g.p("// mux.HandleProtocol) answers only the methods %s inherits. h is a\n", p.Name)
	g.p("// New%sOwnServer, or a service whose ServeRMC calls Serve%sOwn.\n", pn, pn)
	ids := make([]string, len(p.Methods))
	for i, m := range p.Methods {
		ids[i] = fmt.Sprint(m.ID)
	}
	g.p("func Register%sOwn(mux *rmc.Mux, h rmc.Handler) {\n", pn)
	g.p("\tfor _, id := range [...]uint32{%s} {\n\t\tmux.Handle(%sProtocolID, id, h)\n\t}\n}\n\n", strings.Join(ids, ", "), pn)
}

// disputeWindow returns the NEX versions [lo, hi) where the readings of the
// disputed gates the fields may carry (directly, in structures, lists, maps and
// the classes an AnyData may hold) differ; lo is 0 when none does.
func (g *gen) disputeWindow(fields []*desc.Field) (lo, hi uint32) {
	seen := map[*desc.Struct]bool{}
	cond := func(c desc.Cond) {
		if !c.Disputed() {
			return
		}
		a, b := uint32(min(c.NexMin, c.NCMin)), uint32(max(c.NexMin, c.NCMin))
		if lo == 0 || a < lo {
			lo = a
		}
		if b > hi {
			hi = b
		}
	}
	var typ func(t *desc.Type)
	structure := func(s *desc.Struct) {
		for ; s != nil; s = s.ParentStruct {
			if seen[s] {
				return
			}
			seen[s] = true
			for _, f := range s.Fields {
				cond(f.Cond)
				typ(f.Type)
			}
		}
	}
	typ = func(t *desc.Type) {
		switch t.Kind {
		case desc.KList:
			typ(t.Elem)
		case desc.KMap:
			typ(t.Key)
			typ(t.Elem)
		case desc.KStruct:
			structure(t.Struct)
		case desc.KAnyData:
			for _, f := range g.set.Files() {
				for _, s := range f.Structs {
					if t.Struct == nil || derives(s, t.Struct) {
						structure(s)
					}
				}
			}
		}
	}
	for _, f := range fields {
		cond(f.Cond)
		typ(f.Type)
	}
	return lo, hi
}

// derives reports whether s is base or derives from it.
func derives(s, base *desc.Struct) bool {
	for ; s != nil; s = s.ParentStruct {
		if s == base {
			return true
		}
	}
	return false
}

func prefixComma(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}

// hidden returns the parent's methods whose names a variant's client hides:
// those of methods the variant replaces under another name (an id it declares
// again), which its embedded parent client would otherwise promote and which
// would send the parent's parameters to the variant's method.
func hidden(p *desc.Protocol) []*desc.Method {
	pp := p.ParentProtocol
	if pp == nil {
		return nil
	}
	ownNames := map[string]bool{}
	for _, m := range p.Methods {
		ownNames[desc.GoName(m.Name)] = true
	}
	var out []*desc.Method
	for _, m := range pp.AllMethods() {
		if p.Method(m.ID) != m && !ownNames[desc.GoName(m.Name)] {
			out = append(out, m)
		}
	}
	return out
}

// checkNames refuses a variant method that would shadow an inherited method of
// the same name and another id: the variant's client could not reach that one.
func checkNames(p *desc.Protocol) error {
	if p.ParentProtocol == nil {
		return nil
	}
	for _, m := range p.Methods {
		for _, pm := range p.ParentProtocol.AllMethods() {
			if desc.GoName(pm.Name) == desc.GoName(m.Name) && pm.ID != m.ID && p.Method(pm.ID) == pm {
				return fmt.Errorf("protocol %s: method %s (%d) has the name of inherited method %d", p.Name, m.Name, m.ID, pm.ID)
			}
		}
	}
	return nil
}

func (g *gen) client(p *desc.Protocol) error {
	pn := protoName(p)
	if pp := p.ParentProtocol; pp != nil {
		if pp.NoResponse {
			return fmt.Errorf("protocol %s: its parent %s is noresponse (no client to embed)", p.Name, pp.Name)
		}
		parent := protoName(pp) + "Client"
		g.p("// %sClient calls %s methods through C (an *rmc.Client, a logged-in\n", pn, p.Name)
		g.p("// session's RMC; New%sClient sets it): the methods %s declares\n", pn, p.Name)
		g.p("// here, the ones it inherits through the embedded %s.\n", parent)
		g.p("type %sClient struct {\n\t%s\n", pn, g.qualify(pp.File, parent))
		for _, m := range hidden(p) {
			mn := desc.GoName(m.Name)
			g.p("\t// %s hides %s's method %d: %s replaces it\n\t// with %s.\n\t%s struct{}\n",
				mn, m.Protocol.Name, m.ID, p.Name, p.Method(m.ID).Name, mn)
		}
		g.p("}\n\n")
		g.p("// New%sClient returns a %sClient calling through c.\n", pn, pn)
		g.p("func New%sClient(c rmc.Caller) %sClient {\n\treturn %sClient{%s: %s(c)}\n}\n\n",
			pn, pn, pn, parent, g.qualify(pp.File, "New"+parent))
	} else {
		g.p("// %sClient calls %s methods through C (an *rmc.Client, a logged-in session's RMC).\n", pn, p.Name)
		g.p("type %sClient struct{ C rmc.Caller }\n\n", pn)
		g.p("// New%sClient returns a %sClient calling through c.\n", pn, pn)
		g.p("func New%sClient(c rmc.Caller) %sClient { return %sClient{C: c} }\n\n", pn, pn, pn)
	}
	for _, m := range p.Methods {
		mn := desc.GoName(m.Name)
		if m.Doc != "" {
			g.comment(m.Doc)
		} else {
			g.p("// %s calls %s.%s.\n", mn, p.Name, m.Name)
		}
		if m.Opaque {
			g.p("// Its parameters are not described: params and the response data are raw.\n")
			g.p("func (c %sClient) %s(ctx context.Context, params []byte) ([]byte, error) {\n", pn, mn)
			g.p("return c.C.Call(ctx, %sProtocolID, %d, params)\n}\n\n", pn, m.ID)
			continue
		}
		params, results := g.signature(m)
		g.use("fmt")
		g.p("func (c %sClient) %s(ctx context.Context%s) (%s) {\n", pn, mn, prefixComma(params), results)
		g.p("w := types.NewWriter(nil, c.C.Settings())\n")
		if len(m.Params) > 0 {
			g.p("req := %s{", g.msgName(m, "Request"))
			for i, f := range m.Params {
				if i > 0 {
					g.p(", ")
				}
				g.p("%s: %s", fieldName(f.Name), argName(f.Name))
			}
			g.p("}\nreq.Append(&w)\n")
		}
		g.p("params, err := w.Bytes()\nif err != nil {\nreturn\n}\n")
		g.p("data, err := c.C.Call(ctx, %sProtocolID, %d, params)\nif err != nil {\nreturn\n}\n", pn, m.ID)
		g.p("r := types.NewReader(data, c.C.Settings())\n")
		if len(m.Results) > 0 {
			g.p("var resp %s\nresp.Read(&r)\n", g.msgName(m, "Response"))
		}
		g.p("if err = r.Done(); err != nil {\nerr = fmt.Errorf(\"%s.%s response: %%w\", err)\nreturn\n}\n", p.Name, m.Name)
		for _, f := range m.Results {
			g.p("%s = resp.%s\n", resultName(m, f), fieldName(f.Name))
		}
		g.p("return\n}\n\n")
	}
	return nil
}

// generateTest writes the package's test of its generated codecs: every structure
// and message round-trips (zero and filled values at several settings), every
// strict prefix of an encoding fails, and a fuzz target decodes arbitrary bytes.
func (g *gen) generateTest() ([]byte, error) {
	g.b.Reset()
	g.imports = map[string]bool{"testing": true, modulePath + "/nex/protocols/internal/prototest": true}
	g.p("package %s\n\n", g.pkg)
	g.p("// generatedValues lists a value of every generated structure and message.\nvar generatedValues = []any{\n")
	n := 0
	for _, s := range g.file.Structs {
		g.p("\tnew(%s),\n", desc.GoName(s.Name))
		n++
	}
	for _, p := range g.file.Protocols {
		for _, m := range p.Methods {
			if m.Opaque {
				continue
			}
			base := protoName(p) + desc.GoName(m.Name)
			g.p("\tnew(%sRequest),\n\tnew(%sResponse),\n", base, base)
			n += 2
		}
	}
	g.p("}\n\n")
	g.p("func TestGeneratedCodecs(t *testing.T) { prototest.RoundTrip(t, generatedValues) }\n\n")
	g.p("func FuzzGeneratedCodecs(f *testing.F) { prototest.Fuzz(f, generatedValues) }\n")
	clients := g.clientTests()
	if n == 0 && clients == "" {
		// Nothing to test: keep the file valid without the helper.
		g.b.Reset()
		g.imports = map[string]bool{}
		g.p("package %s\n", g.pkg)
	} else if n == 0 {
		// Clients only: drop the codec tests (their imports are the clients' too).
		g.b.Reset()
		g.p("package %s\n\n", g.pkg)
	}
	g.b.WriteString(clients)
	return g.finish(g.b.Bytes())
}

// clientTests returns the test that calls every method of the family's
// clients against the generated servers (prototest.Clients), "" when the family
// has no client.
func (g *gen) clientTests() string {
	var b strings.Builder
	for _, p := range g.file.Protocols {
		if p.NoResponse {
			continue
		}
		g.use(modulePath + "/nex/rmc")
		pn := protoName(p)
		var ids, own []string
		for _, m := range p.AllMethods() {
			ids = append(ids, fmt.Sprint(m.ID))
		}
		if len(ids) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\t{\n\t\tID: %sProtocolID, MethodName: %sMethodName, Methods: []uint32{%s},\n", pn, pn, strings.Join(ids, ", "))
		fmt.Fprintf(&b, "\t\tNewClient: func(c rmc.Caller) any { return New%sClient(c) },\n", pn)
		fmt.Fprintf(&b, "\t\tServer: New%sServer(Unimplemented%s{}),\n", pn, pn)
		if pp := p.ParentProtocol; pp != nil {
			for _, m := range p.Methods {
				own = append(own, fmt.Sprint(m.ID))
			}
			ppn := protoName(pp)
			fmt.Fprintf(&b, "\t\tOwn: []uint32{%s},\n", strings.Join(own, ", "))
			fmt.Fprintf(&b, "\t\tOwnServer: func(parent rmc.Handler) rmc.Handler { return New%sOwnServer(Unimplemented%s{}, parent) },\n", pn, pn)
			fmt.Fprintf(&b, "\t\tParent: %s(%s{}),\n", g.qualify(pp.File, "New"+ppn+"Server"), g.qualify(pp.File, "Unimplemented"+ppn))
		}
		b.WriteString("\t},\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n// TestGeneratedClients calls every method of the clients against the generated\n// servers.\nfunc TestGeneratedClients(t *testing.T) {\n\tprototest.Clients(t, []prototest.Protocol{\n" + b.String() + "\t})\n}\n"
}
