// Package clienttimeout defines HP016 client-timeout: an HTTP client with
// no Timeout, whose requests wait forever on a server that stops answering.
package clienttimeout

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP016 client-timeout.
var Rule = rule.Rule{
	ID:       "HP016",
	Name:     "client-timeout",
	Exercise: 1,
	Summary:  "HTTP client without a Timeout",
	Help: "An http.Client whose Timeout is zero waits as long as the server keeps the connection open: a server " +
		"(or a proxy on the way) that accepts a request and then goes silent blocks the call, its goroutine and " +
		"its connection for good, unless the request's context has a deadline; under load such calls pile up " +
		"until the process runs out of goroutines or file descriptors. http.DefaultClient has no Timeout, and " +
		"http.Get, Head, Post and PostForm send with it. Set Client.Timeout (it bounds the whole exchange, body " +
		"included: the catalog's Ex. 1 client sets 5 s), or, for a client that streams responses, the " +
		"Transport's ResponseHeaderTimeout and a deadline per request. Flagged: http.Get/Head/Post/PostForm; " +
		"http.DefaultClient's Get/Head/Post/PostForm, and its Do unless the request's context gets a deadline " +
		"in the function (context.WithTimeout, WithDeadline); http.DefaultClient handed on as the client to " +
		"send with (stored in a field or variable, passed to a function); a Client literal or new(http.Client) " +
		"without Timeout. Not flagged: a Timeout assigned after the literal (c.Timeout = d: in the same " +
		"function for a local variable, anywhere in the package for a package variable or a field, or by a " +
		"function of the package the client is passed to); a Client whose Transport sets " +
		"ResponseHeaderTimeout (in its literal, by an assignment, or in a function of the package that returns " +
		"it); http.DefaultClient as the default for a client the caller did not give (if c == nil { c = " +
		"http.DefaultClient }); packages that set http.DefaultClient.Timeout.",
}

// Analyzer reports HP016.
var Analyzer = rule.New(Rule, run)

// fixTimeout is the Timeout the suggested fixes write (hotpath's
// client.New default), with %s for the time package's name.
const fixTimeout = "30 * %s.Second"

// Advice ending the messages: what to use instead.
const (
	callAdvice = "use a client with Timeout set (one shared &http.Client{Timeout: 30 * time.Second}, or hotpath's client.New()) or a request context with a deadline"
	litAdvice  = "a request without a context deadline waits forever on a server that stops answering; set Timeout (30 * time.Second, say: it bounds the whole exchange, body included), or, for a client that streams responses, the Transport's ResponseHeaderTimeout"
)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	in := inspector.New(pass.Files)
	s := scan(info, in)
	defaultBounded := false
	if o := defaultClientObj(pass.Pkg); o != nil && s.timeoutSet[o] {
		defaultBounded = true // this package gives http.DefaultClient a Timeout
	}
	for c := range in.Root().Preorder((*ast.CompositeLit)(nil), (*ast.CallExpr)(nil), (*ast.SelectorExpr)(nil)) {
		if rule.IsTestFile(pass, c.Node().Pos()) {
			continue
		}
		switch n := c.Node().(type) {
		case *ast.CompositeLit:
			if !nethttp.IsNamed(info.TypeOf(n), "net/http", "Client") {
				continue
			}
			if _, ok := info.TypeOf(n).Underlying().(*types.Struct); !ok {
				continue
			}
			if set(info, fieldValue(n, "Timeout")) || s.bounded(info, fieldValue(n, "Transport")) {
				continue
			}
			if d := dest(info, c); d != nil && s.timeoutSet[d] {
				continue
			}
			var fixes []analysis.SuggestedFix
			if f, ok := literalFix(pass, fileOf(c), n); ok {
				fixes = append(fixes, f)
			}
			rule.Report(pass, Rule, n, "http.Client has no Timeout: "+litAdvice, fixes...)
		case *ast.CallExpr:
			if isNewClient(info, n) {
				if d := dest(info, c); d != nil && s.timeoutSet[d] {
					continue
				}
				var fixes []analysis.SuggestedFix
				if f, ok := newFix(pass, fileOf(c), n); ok {
					fixes = append(fixes, f)
				}
				rule.Report(pass, Rule, n, "new(http.Client) has no Timeout: "+litAdvice, fixes...)
				continue
			}
			if !defaultBounded {
				s.checkCall(pass, c, n)
			}
		case *ast.SelectorExpr:
			if !defaultBounded && isDefaultClient(info, n) && s.handedOn(info, c) {
				rule.Report(pass, Rule, n, "http.DefaultClient, handed on here as the client to send with, has no Timeout: its requests without a context deadline wait forever on a server that stops answering; "+callAdvice)
			}
		}
	}
	return nil
}

// scanned is what the whole package does to clients and transports,
// gathered before the literals and calls are judged.
type scanned struct {
	// timeoutSet: variables and fields whose .Timeout is assigned a
	// non-zero value somewhere (http.DefaultClient's object included), or
	// that are overwritten whole (*c = *original).
	timeoutSet map[types.Object]bool
	// headerBound: variables and fields that are given a Transport with
	// ResponseHeaderTimeout set (in its literal, by an assignment, or by a
	// function of the package that returns one).
	headerBound map[types.Object]bool
	// boundedFuncs: functions of the package (or package variables holding
	// a function literal) that return such a Transport.
	boundedFuncs map[types.Object]bool
	// defaultAlias: variables defined as http.DefaultClient and never
	// assigned anything else (client := http.DefaultClient).
	defaultAlias map[types.Object]bool
}

func scan(info *types.Info, in *inspector.Inspector) *scanned {
	s := &scanned{timeoutSet: map[types.Object]bool{}, headerBound: map[types.Object]bool{}, boundedFuncs: map[types.Object]bool{}, defaultAlias: map[types.Object]bool{}}
	setters := s.scanFuncs(info, in)
	notAlias := map[types.Object]bool{}
	assign := func(lhs, rhs ast.Expr, define bool) {
		if star, ok := ast.Unparen(lhs).(*ast.StarExpr); ok && nethttp.IsNamed(info.TypeOf(star), "net/http", "Client") {
			// *c = *original: the whole client is replaced, Timeout included.
			if o := nethttp.RootObj(info, star.X); o != nil {
				s.timeoutSet[o] = true
			}
		}
		if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok && rhs != nil && set(info, rhs) {
			switch {
			case sel.Sel.Name == "Timeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Client"):
				if o := nethttp.RootObj(info, sel.X); o != nil {
					s.timeoutSet[o] = true
				}
			case sel.Sel.Name == "ResponseHeaderTimeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Transport"):
				if o := nethttp.RootObj(info, sel.X); o != nil {
					s.headerBound[o] = true
				}
			}
		}
		o := nethttp.RootObj(info, lhs)
		if o == nil || rhs == nil {
			return
		}
		if s.bounded(info, rhs) {
			s.headerBound[o] = true
		}
		if v, ok := o.(*types.Var); ok && !v.IsField() && nethttp.IsPtrTo(v.Type(), "net/http", "Client") {
			if define && isDefaultClient(info, rhs) {
				s.defaultAlias[o] = true
			} else {
				notAlias[o] = true
			}
		}
	}
	for c := range in.Root().Preorder((*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil), (*ast.UnaryExpr)(nil), (*ast.CallExpr)(nil)) {
		switch n := c.Node().(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var r ast.Expr
				switch {
				case len(n.Lhs) == len(n.Rhs):
					r = n.Rhs[i]
				case len(n.Rhs) == 1 && i == 0: // t, err := newTransport()
					if call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok && s.bounded(info, call) {
						r = call
					}
				}
				define := false
				if id, ok := l.(*ast.Ident); ok && info.Defs[id] != nil {
					define = true
				}
				assign(l, r, define)
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				var r ast.Expr
				if len(n.Names) == len(n.Values) {
					r = n.Values[i]
				}
				assign(id, r, true)
			}
		case *ast.UnaryExpr: // &c: anything may be stored through it
			if o := nethttp.RootObj(info, n.X); o != nil && n.Op == token.AND {
				notAlias[o] = true
			}
		case *ast.CallExpr: // configure(c), where configure sets c.Timeout
			fn, _ := typeutil.Callee(info, n).(*types.Func)
			for i, a := range n.Args {
				if fn != nil && setters[fn][i] {
					if o := nethttp.RootObj(info, a); o != nil {
						s.timeoutSet[o] = true
					}
				}
			}
		}
	}
	for o := range notAlias {
		delete(s.defaultAlias, o)
	}
	return s
}

// scanFuncs records the package's functions that return a Transport with
// ResponseHeaderTimeout set (in s.boundedFuncs), and returns, for each
// function, the parameters (by index) whose Timeout its body sets.
func (s *scanned) scanFuncs(info *types.Info, in *inspector.Inspector) map[*types.Func]map[int]bool {
	setters := map[*types.Func]map[int]bool{}
	type function struct {
		obj  types.Object // *types.Func, or the variable holding a literal
		sig  *types.Signature
		body *ast.BlockStmt
	}
	var funcs []function
	for c := range in.Root().Preorder((*ast.FuncDecl)(nil), (*ast.ValueSpec)(nil)) {
		switch n := c.Node().(type) {
		case *ast.FuncDecl:
			if fn, _ := info.Defs[n.Name].(*types.Func); fn != nil && n.Body != nil {
				funcs = append(funcs, function{fn, fn.Signature(), n.Body})
			}
		case *ast.ValueSpec: // var DefaultTransport = func(...) (*http.Transport, error) {...}
			for i, id := range n.Names {
				if i >= len(n.Values) {
					break
				}
				if lit, ok := ast.Unparen(n.Values[i]).(*ast.FuncLit); ok {
					if sig, ok := info.TypeOf(lit).(*types.Signature); ok && info.Defs[id] != nil {
						funcs = append(funcs, function{info.Defs[id], sig, lit.Body})
					}
				}
			}
		}
	}
	for _, f := range funcs {
		fn, _ := f.obj.(*types.Func)
		params := f.sig.Params()
		bound := map[types.Object]bool{} // locals holding a bounded Transport
		var results []ast.Expr
		ast.Inspect(f.body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ReturnStmt:
				results = append(results, n.Results...)
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					var r ast.Expr
					if len(n.Lhs) == len(n.Rhs) {
						r = n.Rhs[i]
					}
					if lit := transportLit(info, r); lit != nil && set(info, fieldValue(lit, "ResponseHeaderTimeout")) {
						if o := nethttp.RootObj(info, l); o != nil {
							bound[o] = true
						}
					}
					sel, ok := ast.Unparen(l).(*ast.SelectorExpr)
					if !ok || (r != nil && !set(info, r)) {
						continue
					}
					switch {
					case sel.Sel.Name == "ResponseHeaderTimeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Transport"):
						if o := nethttp.RootObj(info, sel.X); o != nil {
							bound[o] = true
						}
					case sel.Sel.Name == "Timeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Client") && fn != nil:
						for j := range params.Len() {
							if nethttp.RootObj(info, sel.X) == params.At(j) {
								if setters[fn] == nil {
									setters[fn] = map[int]bool{}
								}
								setters[fn][j] = true
							}
						}
					}
				}
			}
			return true
		})
		for _, r := range results {
			if lit := transportLit(info, r); lit != nil && set(info, fieldValue(lit, "ResponseHeaderTimeout")) {
				s.boundedFuncs[f.obj] = true
			}
			if o := nethttp.RootObj(info, r); o != nil && bound[o] {
				s.boundedFuncs[f.obj] = true
			}
		}
	}
	return setters
}

// bounded reports whether a Transport value e is known to bound the wait
// for the response head: a Transport literal with ResponseHeaderTimeout, a
// call of a function of the package that returns one, or a variable or
// field given one. Any other transport, a parameter or a wrapping
// RoundTripper included, is taken to bound nothing: on the code measured
// (vet/README.md), one such transport in seventeen set it.
func (s *scanned) bounded(info *types.Info, e ast.Expr) bool {
	if e == nil {
		return false
	}
	if lit := transportLit(info, e); lit != nil {
		return set(info, fieldValue(lit, "ResponseHeaderTimeout"))
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		fn := typeutil.Callee(info, call)
		return fn != nil && s.boundedFuncs[fn]
	}
	o := nethttp.RootObj(info, e)
	return o != nil && s.headerBound[o]
}

// handedOn reports whether the http.DefaultClient at c is handed on as a
// client to send with: stored in a field or variable (other than an alias
// whose sends are reported where they happen, or net/http's own default
// standing in for a client the caller did not give: if c == nil { c =
// http.DefaultClient }), or passed to a function.
// Sending with it, reading or setting its fields, comparing it and copying
// it (*http.DefaultClient) are not handing it on.
func (s *scanned) handedOn(info *types.Info, c inspector.Cursor) bool {
	var node ast.Node = c.Node()
	p := c.Parent()
	for {
		if _, ok := p.Node().(*ast.ParenExpr); !ok {
			break
		}
		node, p = p.Node(), p.Parent()
	}
	switch n := p.Node().(type) {
	case *ast.SelectorExpr, *ast.StarExpr, *ast.BinaryExpr:
		return false
	case *ast.AssignStmt:
		for _, l := range n.Lhs {
			if l == node {
				return false // http.DefaultClient = ...
			}
		}
		for i, r := range n.Rhs {
			if r == node && i < len(n.Lhs) {
				o := nethttp.RootObj(info, n.Lhs[i])
				return o == nil || (!s.defaultAlias[o] && !nilFallback(info, p, o))
			}
		}
	case *ast.ValueSpec:
		for i, r := range n.Values {
			if r == node && i < len(n.Names) {
				return !s.defaultAlias[info.ObjectOf(n.Names[i])]
			}
		}
	case *ast.CallExpr:
		return n.Fun != node
	case *ast.KeyValueExpr:
		return n.Value == node
	case *ast.ReturnStmt, *ast.CompositeLit, *ast.SendStmt:
		return true
	}
	return false
}

// nilFallback reports whether the assignment at as (to o) is the body of
// an "if o == nil" (alone in it): a default for a client the caller did
// not give, which code further on may well bound with deadlines (on the
// code measured, three such defaults in five were).
func nilFallback(info *types.Info, as inspector.Cursor, o types.Object) bool {
	block, ok := as.Parent().Node().(*ast.BlockStmt)
	if !ok || len(block.List) != 1 {
		return false
	}
	ifs, ok := as.Parent().Parent().Node().(*ast.IfStmt)
	if !ok || ifs.Body != block {
		return false
	}
	cond, ok := ast.Unparen(ifs.Cond).(*ast.BinaryExpr)
	if !ok || cond.Op != token.EQL {
		return false
	}
	isNil := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return false
		}
		_, isNil := info.Uses[id].(*types.Nil)
		return isNil
	}
	return (isNil(cond.Y) && nethttp.RootObj(info, cond.X) == o) || (isNil(cond.X) && nethttp.RootObj(info, cond.Y) == o)
}

// checkCall reports requests sent with http.DefaultClient.
func (s *scanned) checkCall(pass *analysis.Pass, c inspector.Cursor, call *ast.CallExpr) {
	info := pass.TypesInfo
	fn := nethttp.Callee(info, call)
	if nethttp.IsFunc(fn, "net/http", "Get", "Head", "Post", "PostForm") {
		rule.Report(pass, Rule, call, "http."+fn.Name()+" sends with http.DefaultClient, which has no Timeout: if the server stops answering, this call waits forever; "+callAdvice)
		return
	}
	if !nethttp.IsMethod(fn, "net/http", "Client", "Do", "Get", "Head", "Post", "PostForm") {
		return
	}
	recv := call.Fun.(*ast.SelectorExpr).X
	name := "http.DefaultClient"
	if !isDefaultClient(info, recv) {
		o := nethttp.RootObj(info, recv)
		if o == nil || !s.defaultAlias[o] {
			return
		}
		name = nethttp.SourceOf(recv) + " (http.DefaultClient)"
	}
	if fn.Name() == "Do" {
		if len(call.Args) == 1 && deadline(info, nethttp.EnclosingBody(c), call.Args[0]) {
			return // the request's context has a deadline
		}
		rule.Report(pass, Rule, call, name+" has no Timeout: if the server stops answering, Do waits forever unless the request's context has a deadline; "+callAdvice)
		return
	}
	rule.Report(pass, Rule, call, name+" has no Timeout: if the server stops answering, "+fn.Name()+" waits forever; "+callAdvice)
}

// deadline reports whether the request e visibly carries a context with a
// deadline: built (NewRequestWithContext) or re-contexted (WithContext,
// Clone) in the function with a context that context.WithTimeout or
// WithDeadline made there; for a local variable, by any of its
// assignments. A request or context from a caller may or may not have one.
func deadline(info *types.Info, body *ast.BlockStmt, e ast.Expr) bool {
	if body == nil {
		return false
	}
	bounded := map[types.Object]bool{} // contexts and requests with a deadline
	// Assignments in source order: ctx, cancel := context.WithTimeout(...),
	// then req, err := http.NewRequestWithContext(ctx, ...).
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) == 0 {
			return true
		}
		call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		fn := nethttp.Callee(info, call)
		yes := false
		switch {
		case nethttp.IsFunc(fn, "context", "WithTimeout", "WithDeadline", "WithTimeoutCause", "WithDeadlineCause"):
			yes = true
		case nethttp.IsFunc(fn, "net/http", "NewRequestWithContext"), nethttp.IsMethod(fn, "net/http", "Request", "WithContext", "Clone"):
			yes = len(call.Args) > 0 && bounded[nethttp.RootObj(info, call.Args[0])]
		}
		if yes {
			if o := nethttp.RootObj(info, as.Lhs[0]); o != nil {
				bounded[o] = true
			}
		}
		return true
	})
	e = ast.Unparen(e)
	if call, ok := e.(*ast.CallExpr); ok {
		fn := nethttp.Callee(info, call)
		if nethttp.IsFunc(fn, "net/http", "NewRequestWithContext") || nethttp.IsMethod(fn, "net/http", "Request", "WithContext", "Clone") {
			return len(call.Args) > 0 && bounded[nethttp.RootObj(info, call.Args[0])]
		}
		return false
	}
	o := nethttp.RootObj(info, e)
	return o != nil && bounded[o]
}

// defaultClientObj returns net/http's DefaultClient variable as pkg sees
// it, or nil when pkg does not import net/http directly.
func defaultClientObj(pkg *types.Package) types.Object {
	for _, imp := range pkg.Imports() {
		if imp.Path() == "net/http" {
			return imp.Scope().Lookup("DefaultClient")
		}
	}
	return nil
}

// isDefaultClient reports whether e is http.DefaultClient.
func isDefaultClient(info *types.Info, e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	v, ok := info.Uses[sel.Sel].(*types.Var)
	return ok && v.Name() == "DefaultClient" && v.Pkg() != nil && v.Pkg().Path() == "net/http" && v.Parent() == v.Pkg().Scope()
}

// transportLit returns the http.Transport literal e builds (&Transport{...}
// or Transport{...}), or nil.
func transportLit(info *types.Info, e ast.Expr) *ast.CompositeLit {
	if e == nil {
		return nil
	}
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok || !nethttp.IsNamed(info.TypeOf(lit), "net/http", "Transport") {
		return nil
	}
	return lit
}

// set reports whether e is present and not the constant zero.
func set(info *types.Info, e ast.Expr) bool {
	if e == nil {
		return false
	}
	v, ok := nethttp.IntConst(info, e)
	return !ok || v != 0
}

// fieldValue returns the value of a keyed field in a struct literal, or nil.
func fieldValue(lit *ast.CompositeLit, name string) ast.Expr {
	if kv := fix.Field(lit, name); kv != nil {
		return kv.Value
	}
	return nil
}

// dest returns the variable or field a literal (or &literal) is stored in:
// assigned, declared, or the value of a field in a larger literal.
func dest(info *types.Info, c inspector.Cursor) types.Object {
	var node ast.Node = c.Node()
	p := c.Parent()
	for {
		switch n := p.Node().(type) {
		case *ast.UnaryExpr, *ast.ParenExpr:
			node, p = n, p.Parent()
			continue
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && n.Value == node {
				if v, ok := info.ObjectOf(k).(*types.Var); ok && v.IsField() {
					return v
				}
			}
		case *ast.AssignStmt:
			for i, r := range n.Rhs {
				if r == node && i < len(n.Lhs) && len(n.Lhs) == len(n.Rhs) {
					return nethttp.RootObj(info, n.Lhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, r := range n.Values {
				if r == node && i < len(n.Names) {
					return info.ObjectOf(n.Names[i])
				}
			}
		}
		return nil
	}
}

// literalFix sets Timeout in the literal: replaces a zero, or adds the
// field (and imports time if needed).
func literalFix(pass *analysis.Pass, file *ast.File, lit *ast.CompositeLit) (analysis.SuggestedFix, bool) {
	if file == nil {
		return analysis.SuggestedFix{}, false
	}
	for _, e := range lit.Elts {
		if _, keyed := e.(*ast.KeyValueExpr); !keyed {
			return analysis.SuggestedFix{}, false // positional fields: leave it to a person
		}
	}
	tn, edits, ok := fix.TimeName(pass, file, lit.Lbrace)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	value := strings.Replace(fixTimeout, "%s", tn, 1)
	if kv := fix.Field(lit, "Timeout"); kv != nil {
		edits = append(edits, analysis.TextEdit{Pos: kv.Value.Pos(), End: kv.Value.End(), NewText: []byte(value)})
	} else {
		edits = append(edits, fix.AddFields(pass.Fset, lit, []string{"Timeout: " + value}))
	}
	return analysis.SuggestedFix{Message: "Set the client's Timeout to 30 s", TextEdits: edits}, true
}

// isNewClient reports whether call is new(http.Client).
func isNewClient(info *types.Info, call *ast.CallExpr) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) != 1 {
		return false
	}
	if _, builtin := info.Uses[id].(*types.Builtin); !builtin || id.Name != "new" {
		return false
	}
	t := info.TypeOf(call.Args[0])
	return nethttp.IsNamed(t, "net/http", "Client") && !nethttp.IsPtrTo(t, "net/http", "Client")
}

// newFix rewrites new(http.Client) as &http.Client{Timeout: 30 * time.Second}.
func newFix(pass *analysis.Pass, file *ast.File, call *ast.CallExpr) (analysis.SuggestedFix, bool) {
	if file == nil {
		return analysis.SuggestedFix{}, false
	}
	tn, edits, ok := fix.TimeName(pass, file, call.Pos())
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	typ := fix.Source(pass.Fset, call.Args[0])
	if typ == "" {
		return analysis.SuggestedFix{}, false
	}
	text := "&" + typ + "{Timeout: " + strings.Replace(fixTimeout, "%s", tn, 1) + "}"
	edits = append(edits, analysis.TextEdit{Pos: call.Pos(), End: call.End(), NewText: []byte(text)})
	return analysis.SuggestedFix{Message: "Build the client with Timeout set to 30 s", TextEdits: edits}, true
}

func fileOf(c inspector.Cursor) *ast.File {
	for p := range c.Enclosing((*ast.File)(nil)) {
		return p.Node().(*ast.File)
	}
	return nil
}
