// Package clienttimeout defines HP016 client-timeout: an HTTP client with
// no Timeout, whose requests wait forever on a server that stops answering.
package clienttimeout

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

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
			if set(info, fix.FieldValue(n, "Timeout")) || s.bounded(info, fix.FieldValue(n, "Transport")) {
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
		case *ast.AssignStmt, *ast.ValueSpec:
			return nethttp.StoredIn(info, n, node)
		}
		return nil
	}
}
