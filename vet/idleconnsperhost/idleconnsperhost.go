// Package idleconnsperhost defines HP003 idle-conns-per-host: a Transport
// used for concurrent requests to one host while MaxIdleConnsPerHost stays
// at its default of 2.
package idleconnsperhost

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP003 idle-conns-per-host.
var Rule = rule.Rule{
	ID:       "HP003",
	Name:     "idle-conns-per-host",
	Exercise: 3,
	Summary:  "Transport without MaxIdleConnsPerHost used for fan-out",
	Help: "http.Transport keeps at most MaxIdleConnsPerHost idle connections per host, 2 when unset. Under " +
		"fan-out to one host every connection beyond the second is closed when its response is done, and " +
		"the next request dials again. MaxIdleConns does not raise the per-host limit. Set " +
		"MaxIdleConnsPerHost to the expected concurrency. Flagged: a Transport literal that raises " +
		"MaxIdleConns or MaxConnsPerHost above 2 but leaves MaxIdleConnsPerHost unset, and a Transport " +
		"(or Client on the default Transport) whose requests are issued from goroutines started in a loop. " +
		"The first shape is flagged only for package-level transports (shared by the whole program, as " +
		"http.DefaultTransport is): a Transport built in a function or stored in a field (an SDK's " +
		"credential client, a health poller) may well be used sequentially, where 2 idle connections are " +
		"plenty.",
}

// Analyzer reports HP003.
var Analyzer = rule.New(Rule, run)

const defaultPerHost = 2 // http.DefaultMaxIdleConnsPerHost

type candidate struct {
	lit    *ast.CompositeLit
	tuned  bool // raises MaxIdleConns/MaxConnsPerHost above the per-host default
	client bool // an http.Client literal on the default transport
	dest   types.Object
	fanOut bool
}

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	in := inspector.New(pass.Files)
	var cands []*candidate
	byObj := map[types.Object]*candidate{}
	perHostSet := map[types.Object]bool{}
	for c := range in.Root().Preorder((*ast.CompositeLit)(nil), (*ast.AssignStmt)(nil)) {
		switch n := c.Node().(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "MaxIdleConnsPerHost" {
					if o := nethttp.RootObj(info, sel.X); o != nil {
						perHostSet[o] = true
					}
				}
			}
		case *ast.CompositeLit:
			if rule.IsTestFile(pass, n.Pos()) {
				continue
			}
			t := info.TypeOf(n)
			isT := nethttp.IsNamed(t, "net/http", "Transport")
			isC := nethttp.IsNamed(t, "net/http", "Client") && fix.FieldValue(n, "Transport") == nil
			if !isT && !isC {
				continue
			}
			if isT && fix.FieldValue(n, "MaxIdleConnsPerHost") != nil {
				continue
			}
			cd := &candidate{lit: n, client: isC}
			if isT {
				for _, f := range []string{"MaxIdleConns", "MaxConnsPerHost"} {
					if v, ok := nethttp.IntConst(info, fix.FieldValue(n, f)); ok && v > defaultPerHost {
						cd.tuned = true
					}
				}
			}
			cd.dest = dest(info, c)
			if cd.dest != nil {
				byObj[cd.dest] = cd
			}
			cands = append(cands, cd)
		}
	}
	markFanOut(pass, in, byObj)
	for _, cd := range cands {
		if cd.dest != nil && perHostSet[cd.dest] {
			continue
		}
		switch {
		case cd.tuned && !cd.client && packageLevel(cd.dest):
			rule.Report(pass, Rule, cd.lit, "MaxIdleConns/MaxConnsPerHost is raised but MaxIdleConnsPerHost stays at 2: connections beyond 2 per host are closed after each response; set MaxIdleConnsPerHost")
		case cd.fanOut && cd.client:
			rule.Report(pass, Rule, cd.lit, "this Client is used from goroutines started in a loop but runs on http.DefaultTransport (2 idle connections per host): give it a Transport with MaxIdleConnsPerHost set")
		case cd.fanOut:
			rule.Report(pass, Rule, cd.lit, "this Transport is used from goroutines started in a loop with MaxIdleConnsPerHost at 2: set MaxIdleConnsPerHost to the fan-out width")
		}
	}
	return nil
}

// dest returns the variable or field a literal (or &literal) is stored in,
// also through an enclosing Client literal's Transport field.
func dest(info *types.Info, c inspector.Cursor) types.Object {
	var node ast.Node = c.Node()
	p := c.Parent()
	for {
		switch n := p.Node().(type) {
		case *ast.UnaryExpr, *ast.ParenExpr:
			node, p = n, p.Parent()
			continue
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Transport" && n.Value == node {
				// Client{Transport: &Transport{...}}: follow the client.
				lit := p.Parent()
				node, p = lit.Node(), lit.Parent()
				continue
			}
			return nil
		case *ast.AssignStmt, *ast.ValueSpec:
			return nethttp.StoredIn(info, n, node)
		}
		return nil
	}
}

// markFanOut marks candidates whose storage is used as the receiver of a
// request call inside a go statement (or errgroup/WaitGroup Go) in a loop.
func markFanOut(pass *analysis.Pass, in *inspector.Inspector, byObj map[types.Object]*candidate) {
	info := pass.TypesInfo
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		fn := nethttp.Callee(info, call)
		if !nethttp.IsMethod(fn, "net/http", "Client", "Do", "Get", "Post", "PostForm", "Head") &&
			!nethttp.IsMethod(fn, "net/http", "Transport", "RoundTrip") {
			continue
		}
		cd := byObj[nethttp.RootObj(info, call.Fun.(*ast.SelectorExpr).X)]
		if cd == nil || !inLoopGoroutine(info, c) {
			continue
		}
		cd.fanOut = true
	}
}

// inLoopGoroutine reports whether c runs in a goroutine started in a loop.
func inLoopGoroutine(info *types.Info, c inspector.Cursor) bool {
	inGo := false
	for p := c.Parent(); p.Node() != nil; p = p.Parent() {
		switch n := p.Node().(type) {
		case *ast.GoStmt:
			inGo = true
		case *ast.CallExpr:
			fn := nethttp.Callee(info, n)
			if fn != nil && fn.Name() == "Go" && fn.Signature().Recv() != nil {
				inGo = true // errgroup.Group.Go, sync.WaitGroup.Go, conc pools
			}
		case *ast.ForStmt, *ast.RangeStmt:
			if inGo {
				return true
			}
		case *ast.FuncDecl:
			return false
		}
	}
	return false
}

// packageLevel reports whether obj is a package-level variable.
func packageLevel(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	return ok && !v.IsField() && v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}
