// Package bufferperrequest defines HP005 buffer-per-request: a fresh
// bytes.Buffer allocated for every request only to slurp its body.
package bufferperrequest

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP005 buffer-per-request.
var Rule = rule.Rule{
	ID:       "HP005",
	Name:     "buffer-per-request",
	Exercise: 5,
	Summary:  "new bytes.Buffer per request to read the request body",
	Help: "A bytes.Buffer declared in the handler grows from nothing on every request, reallocating as the " +
		"body arrives, and becomes garbage when the handler returns. Take buffers from a sync.Pool (Reset " +
		"them, and drop oversized ones before Put), or stream the body instead of holding it. Flagged: a " +
		"buffer declared in the function and filled from r.Body with io.Copy or ReadFrom. Buffers from a " +
		"pool, a parameter or a field are not flagged, nor buffers whose bytes outlive the request " +
		"(stored, returned: a pool cannot take those back).",
}

// Analyzer reports HP005.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	for c, call := range nethttp.Calls(pass.Files) {
		fn := nethttp.Callee(info, call)
		var dst, src ast.Expr
		switch {
		case nethttp.IsFunc(fn, "io", "Copy", "CopyN", "CopyBuffer") && len(call.Args) >= 2:
			dst, src = call.Args[0], call.Args[1]
		case nethttp.IsMethod(fn, "bytes", "Buffer", "ReadFrom") && len(call.Args) == 1:
			dst, src = call.Fun.(*ast.SelectorExpr).X, call.Args[0]
		default:
			continue
		}
		if !nethttp.RequestBody(info, src) {
			continue
		}
		dst = ast.Unparen(dst)
		if u, ok := dst.(*ast.UnaryExpr); ok && u.Op == token.AND {
			dst = ast.Unparen(u.X)
		}
		v := nethttp.ObjOf(info, dst)
		if !nethttp.IsLocal(v) || !nethttp.IsNamed(v.Type(), "bytes", "Buffer") {
			continue
		}
		if !freshBuffer(info, c, v) || retained(info, nethttp.EnclosingBody(c), v) {
			continue
		}
		rule.Report(pass, Rule, call, "a new bytes.Buffer is allocated per request to read the body: take it from a sync.Pool (Reset, and drop oversized ones) or stream the body")
	}
	return nil
}

// freshBuffer reports whether v is declared in the enclosing function as a
// new buffer: var b bytes.Buffer, b := new(bytes.Buffer), &bytes.Buffer{},
// bytes.NewBuffer(...), bytes.NewBufferString(...).
func freshBuffer(info *types.Info, c inspector.Cursor, v *types.Var) bool {
	body := nethttp.EnclosingBody(c)
	if body == nil {
		return false
	}
	fresh := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if info.Defs[name] != v {
					continue
				}
				fresh = len(n.Values) == 0 || (i < len(n.Values) && isNew(info, n.Values[i]))
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && info.Defs[id] == v && i < len(n.Rhs) && len(n.Lhs) == len(n.Rhs) {
					fresh = isNew(info, n.Rhs[i])
				}
			}
		}
		return true
	})
	return fresh
}

func isNew(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		_, lit := ast.Unparen(u.X).(*ast.CompositeLit)
		return lit
	}
	if _, ok := e.(*ast.CompositeLit); ok {
		return true
	}
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "new" {
		_, builtin := info.Uses[id].(*types.Builtin)
		return builtin
	}
	return nethttp.IsFunc(nethttp.Callee(info, call), "bytes", "NewBuffer", "NewBufferString")
}

// retained reports whether the buffer v, or the slice its Bytes method
// returns, outlives the call: stored (in a field, a map, a literal),
// returned, sent or appended somewhere. A pooled buffer could not be reused
// then, so the advice does not apply.
func retained(info *types.Info, body *ast.BlockStmt, v *types.Var) bool {
	if body == nil {
		return true
	}
	found := false
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v && !found {
			found = keeps(info, append(stack, n))
		}
		return !found
	})
	return found
}

// keeps reports whether the use of the buffer at the top of stack (v, &v,
// v.Bytes()) hands its memory to something that outlives the call.
func keeps(info *types.Info, stack []ast.Node) bool {
	i := len(stack) - 1
	up := func() ast.Node {
		for i--; i >= 0; i-- {
			if _, ok := stack[i].(*ast.ParenExpr); !ok {
				return stack[i]
			}
		}
		return nil
	}
	child := stack[i]
	p := up()
	if u, ok := p.(*ast.UnaryExpr); ok && u.Op == token.AND {
		child, p = p, up()
	}
	if sel, ok := p.(*ast.SelectorExpr); ok && sel.X == child {
		call, ok := up().(*ast.CallExpr)
		if sel.Sel.Name != "Bytes" || !ok || call.Fun != sel {
			return false // buf.Len(), buf.String() (a copy), buf.Reset()
		}
		child, p = call, up()
		if outer, ok := p.(*ast.CallExpr); ok {
			id, isIdent := ast.Unparen(outer.Fun).(*ast.Ident)
			_, builtin := info.Uses[id].(*types.Builtin)
			return isIdent && builtin && id.Name == "append" && len(outer.Args) > 0 && outer.Args[0] != child
		}
	}
	switch p := p.(type) {
	case *ast.ReturnStmt, *ast.CompositeLit, *ast.KeyValueExpr, *ast.SendStmt, *ast.GoStmt:
		return true
	case *ast.AssignStmt:
		for _, r := range p.Rhs {
			if r == child {
				return true
			}
		}
	case *ast.ValueSpec:
		for _, r := range p.Values {
			if r == child {
				return true
			}
		}
	}
	return false
}
