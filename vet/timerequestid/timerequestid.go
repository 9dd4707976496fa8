// Package timerequestid defines HP014 time-request-id: request IDs made
// from time.Now().UnixNano().
package timerequestid

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP014 time-request-id.
var Rule = rule.Rule{
	ID:       "HP014",
	Name:     "time-request-id",
	Exercise: 14,
	Summary:  "request ID from time.Now().UnixNano()",
	Help: "A request ID built from the clock collides when two requests start in the same nanosecond on " +
		"different cores (and clocks are coarser than that on some systems), costs a clock read, and " +
		"usually a formatting allocation. Use an atomic counter (with an instance prefix if IDs must be " +
		"unique across processes), or UUIDv7/KSUID when they must be globally unique. Flagged: " +
		"time.Now().UnixNano() (or UnixMicro) flowing into a name or header key that says ID, in code that " +
		"handles a request (net/http, gin, echo, fiber).",
}

// Analyzer reports HP014.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	for c, call := range nethttp.Calls(pass.Files) {
		fn := nethttp.Callee(info, call)
		if !nethttp.IsMethod(fn, "time", "Time", "UnixNano", "UnixMicro") {
			continue
		}
		recv, ok := ast.Unparen(call.Fun.(*ast.SelectorExpr).X).(*ast.CallExpr)
		if !ok || !nethttp.IsFunc(nethttp.Callee(info, recv), "time", "Now") {
			continue
		}
		if !inRequestCode(info, c) || !namedID(info, c) {
			continue
		}
		rule.Report(pass, Rule, call, "request ID from time.Now()."+fn.Name()+"(): IDs collide under concurrency; use an atomic counter or a UUID")
	}
	return nil
}

// inRequestCode reports whether any enclosing function handles a request.
func inRequestCode(info *types.Info, c inspector.Cursor) bool {
	for f := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		if nethttp.IsHandlerSig(nethttp.FuncSig(info, f.Node())) {
			return true
		}
	}
	return false
}

// namedID follows the value up through conversions, formatting calls and
// concatenation to where it lands, and reports whether that place says "id":
// a variable or field named ...id/...ID, a header key or context key naming
// an ID.
func namedID(info *types.Info, c inspector.Cursor) bool {
	child := c.Node()
	for p := c.Parent(); p.Node() != nil; child, p = p.Node(), p.Parent() {
		switch n := p.Node().(type) {
		case *ast.ParenExpr, *ast.BinaryExpr:
			continue
		case *ast.CallExpr:
			// A call that takes our value: Set/Add(key, value), WithValue(ctx, key, value), Set(key, value) on gin.
			if k := keyArg(n, child); k != nil && saysID(keyText(info, k)) {
				return true
			}
			if n.Fun == child {
				return false
			}
			continue // strconv.FormatInt(...), fmt.Sprintf(...), string conversions
		case *ast.AssignStmt:
			for i, r := range n.Rhs {
				if r == child && i < len(n.Lhs) {
					return saysID(lastName(n.Lhs[i]))
				}
			}
			return false
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if v == child && i < len(n.Names) {
					return saysID(n.Names[i].Name)
				}
			}
			return false
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				return saysID(k.Name)
			}
			return saysID(keyText(info, n.Key))
		default:
			return false
		}
	}
	return false
}

// keyArg returns the key argument of a call that stores value under a key
// (h.Set(key, v), h.Add(key, v), context.WithValue(ctx, key, v), c.Set(key, v)).
func keyArg(call *ast.CallExpr, value ast.Node) ast.Expr {
	n := len(call.Args)
	if n < 2 || call.Args[n-1] != value {
		return nil
	}
	return call.Args[n-2]
}

func keyText(info *types.Info, e ast.Expr) string {
	if s, ok := nethttp.StringConst(info, e); ok {
		return s
	}
	return lastName(e)
}

func lastName(e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.CompositeLit:
		if t, ok := e.Type.(*ast.Ident); ok {
			return t.Name
		}
	}
	return ""
}

// saysID reports whether a name or key names a request/trace/correlation ID.
func saysID(s string) bool {
	l := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s))
	return l == "id" || strings.HasSuffix(l, "id") && !strings.HasSuffix(l, "valid") && !strings.HasSuffix(l, "paid") ||
		strings.HasSuffix(l, "idkey") || strings.Contains(l, "requestid") || strings.Contains(l, "traceid") || strings.Contains(l, "correlationid")
}
