// Package marshalwrite defines HP004 marshal-write: json.Marshal into a
// slice that is then written to a ResponseWriter, instead of encoding
// straight into it.
package marshalwrite

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP004 marshal-write.
var Rule = rule.Rule{
	ID:       "HP004",
	Name:     "marshal-write",
	Exercise: 4,
	Summary:  "json.Marshal then Write to a ResponseWriter",
	Help: "json.Marshal builds the whole document in a new slice, which the handler copies into the " +
		"ResponseWriter and drops. json.NewEncoder(w).Encode(v) writes through a small reused buffer. " +
		"Mind the differences: Encode appends a newline, and an encoding error surfaces after part of the " +
		"body may be written, so set headers first. Flagged only when the bytes are used for nothing but " +
		"the write; the suggested fix is offered only when the error check does not use the bytes.",
}

// Analyzer reports HP004.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	in := inspector.New(pass.Files)
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		if !nethttp.IsFunc(nethttp.Callee(info, call), "encoding/json", "Marshal") || len(call.Args) != 1 {
			continue
		}
		stmt := c.Parent().Node()
		v := nethttp.DefinedBy(info, stmt, call)
		if v == nil {
			continue
		}
		body := nethttp.EnclosingBody(c)
		if body == nil {
			continue
		}
		uses := nethttp.UsesOf(info, body, v)
		if len(uses) != 1 {
			continue // used for more than one write: keep the bytes
		}
		write, ok := uses[0].Parent.(*ast.CallExpr)
		if !ok || !nethttp.IsWriteTo(info, write, uses[0].Ident) {
			continue
		}
		var fixes []analysis.SuggestedFix
		if f, ok := encoderFix(pass, c, call, v, write); ok {
			fixes = append(fixes, f)
		}
		rule.Report(pass, Rule, call, "json.Marshal builds a slice only to write it to the ResponseWriter: encode straight into it with json.NewEncoder(w).Encode", fixes...)
	}
	return nil
}

// encoderFix rewrites
//
//	data, err := json.Marshal(v)
//	if err != nil { ... }        // not using data; err only here
//	...                          // statements not using data or err
//	w.Write(data)                // result ignored
//
// into the same statements with
//
//	if err := json.NewEncoder(w).Encode(v); err != nil { ... }
//
// in place of the write. It gives up on any other shape.
func encoderFix(pass *analysis.Pass, c inspector.Cursor, call *ast.CallExpr, data *types.Var, write *ast.CallExpr) (analysis.SuggestedFix, bool) {
	info := pass.TypesInfo
	none := analysis.SuggestedFix{}
	assign, ok := c.Parent().Node().(*ast.AssignStmt)
	if !ok || assign.Tok != token.DEFINE || len(assign.Lhs) != 2 {
		return none, false
	}
	errID, _ := assign.Lhs[1].(*ast.Ident)
	block, ok := c.Parent().Parent().Node().(*ast.BlockStmt)
	if !ok || errID == nil {
		return none, false
	}
	errVar, _ := info.Defs[errID].(*types.Var)
	// The Marshal argument must be side-effect free and unchanged: an
	// identifier or selector chain.
	if !simple(call.Args[0]) {
		return none, false
	}
	i := indexOf(block.List, assign)
	if i < 0 || i+1 >= len(block.List) {
		return none, false
	}
	guard, ok := block.List[i+1].(*ast.IfStmt)
	if !ok || guard.Init != nil || guard.Else != nil || !isErrNotNil(info, guard.Cond, errVar) || mentions(info, guard.Body, data) {
		return none, false
	}
	// Find the write statement in the same block.
	j := -1
	for k := i + 2; k < len(block.List); k++ {
		if es, ok := block.List[k].(*ast.ExprStmt); ok && es.X == write {
			j = k
			break
		}
		if mentions(info, block.List[k], data) || (errVar != nil && mentions(info, block.List[k], errVar)) || assigns(info, block.List[k], call.Args[0]) {
			return none, false
		}
	}
	if j < 0 {
		return none, false
	}
	// err may be used in the guard (http.Error(w, err.Error(), 500)):
	// there it becomes Encode's error; anywhere else, no fix.
	if errVar != nil {
		for _, u := range nethttp.UsesOf(info, block, errVar) {
			if u.Ident.Pos() < guard.Pos() || u.Ident.End() > guard.End() {
				return none, false
			}
		}
	}
	w := write.Fun.(*ast.SelectorExpr).X
	src := func(n ast.Node) string { return fix.Source(pass.Fset, n) }
	jsonPkg := src(call.Fun.(*ast.SelectorExpr).X)
	text := "if " + errID.Name + " := " + jsonPkg + ".NewEncoder(" + src(w) + ").Encode(" + src(call.Args[0]) + "); " + errID.Name + " != nil " + src(guard.Body)
	return analysis.SuggestedFix{
		Message: "Encode straight into the ResponseWriter with json.NewEncoder",
		TextEdits: []analysis.TextEdit{
			{Pos: assign.Pos(), End: block.List[i+2].Pos()},
			{Pos: block.List[j].Pos(), End: block.List[j].End(), NewText: []byte(text)},
		},
	}, true
}

func indexOf(list []ast.Stmt, s ast.Stmt) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func simple(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return simple(e.X)
	case *ast.UnaryExpr:
		return e.Op == token.AND && simple(e.X)
	}
	return false
}

func isErrNotNil(info *types.Info, cond ast.Expr, errVar *types.Var) bool {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ || errVar == nil {
		return false
	}
	x, ok := ast.Unparen(b.X).(*ast.Ident)
	y, ok2 := ast.Unparen(b.Y).(*ast.Ident)
	return ok && ok2 && info.Uses[x] == errVar && y.Name == "nil"
}

// mentions reports whether n refers to v.
func mentions(info *types.Info, n ast.Node, v *types.Var) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v {
			found = true
		}
		return !found
	})
	return found
}

// assigns reports whether n assigns to the root variable of e, which would
// make encoding it later differ from marshalling it earlier.
func assigns(info *types.Info, n ast.Node, e ast.Expr) bool {
	root := e
	for {
		switch x := ast.Unparen(root).(type) {
		case *ast.SelectorExpr:
			root = x.X
			continue
		case *ast.UnaryExpr:
			root = x.X
			continue
		}
		break
	}
	v := nethttp.ObjOf(info, root)
	if v == nil {
		return true
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if mentions(info, l, v) {
					found = true
				}
			}
		case *ast.IncDecStmt:
			found = found || mentions(info, n.X, v)
		case *ast.UnaryExpr:
			found = found || (n.Op == token.AND && mentions(info, n.X, v))
		case *ast.CallExpr:
			for _, a := range n.Args {
				found = found || mentions(info, a, v)
			}
		}
		return !found
	})
	return found
}
