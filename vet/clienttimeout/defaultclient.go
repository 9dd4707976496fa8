// http.DefaultClient: its sends, and where it is handed on.

package clienttimeout

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

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
