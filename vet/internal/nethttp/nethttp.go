// Package nethttp holds the type and syntax predicates the hotpath vet
// analyzers share: "is this a *http.Response", "is this function an HTTP
// handler", "which function does this call invoke".
package nethttp

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// IsNamed reports whether t, after stripping one pointer, is the named type
// path.name.
func IsNamed(t types.Type, path, name string) bool {
	if t == nil {
		return false
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := n.Obj()
	return obj.Name() == name && obj.Pkg() != nil && obj.Pkg().Path() == path
}

// IsPtrTo reports whether t is *path.name.
func IsPtrTo(t types.Type, path, name string) bool {
	if t == nil {
		return false
	}
	_, ok := types.Unalias(t).(*types.Pointer)
	return ok && IsNamed(t, path, name)
}

// IsResponse reports whether t is *http.Response.
func IsResponse(t types.Type) bool { return IsPtrTo(t, "net/http", "Response") }

// IsRequest reports whether t is *http.Request.
func IsRequest(t types.Type) bool { return IsPtrTo(t, "net/http", "Request") }

// IsResponseWriter reports whether t is http.ResponseWriter or a type that
// implements it.
func IsResponseWriter(t types.Type) bool {
	if t == nil {
		return false
	}
	if IsNamed(t, "net/http", "ResponseWriter") {
		return true
	}
	// A concrete writer: it has Header() http.Header, Write and WriteHeader.
	ms := types.NewMethodSet(t)
	if _, ok := types.Unalias(t).(*types.Pointer); !ok {
		if _, isIface := t.Underlying().(*types.Interface); !isIface {
			ms = types.NewMethodSet(types.NewPointer(t))
		}
	}
	has := func(name string) *types.Func {
		for i := 0; i < ms.Len(); i++ {
			if f, ok := ms.At(i).Obj().(*types.Func); ok && f.Name() == name {
				return f
			}
		}
		return nil
	}
	h := has("Header")
	if h == nil || has("Write") == nil || has("WriteHeader") == nil {
		return false
	}
	sig := h.Signature()
	return sig.Results().Len() == 1 && IsNamed(sig.Results().At(0).Type(), "net/http", "Header")
}

// IsHeader reports whether t is http.Header.
func IsHeader(t types.Type) bool { return IsNamed(t, "net/http", "Header") }

// Callee returns the function or method a call invokes, or nil.
func Callee(info *types.Info, call *ast.CallExpr) *types.Func {
	f, _ := typeutil.Callee(info, call).(*types.Func)
	return f
}

// IsFunc reports whether fn is the package-level function path.name (one of
// names).
func IsFunc(fn *types.Func, path string, names ...string) bool {
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != path || fn.Signature().Recv() != nil {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

// IsMethod reports whether fn is a method named one of names whose receiver
// is path.typ (or a pointer to it).
func IsMethod(fn *types.Func, path, typ string, names ...string) bool {
	if fn == nil {
		return false
	}
	recv := fn.Signature().Recv()
	if recv == nil || !IsNamed(recv.Type(), path, typ) {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

// CallTo reports whether e is a call of the package-level function
// path.name (one of names), returning the call.
func CallTo(info *types.Info, e ast.Expr, path string, names ...string) (*ast.CallExpr, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return nil, false
	}
	return call, IsFunc(Callee(info, call), path, names...)
}

// IsHandlerSig reports whether sig handles one request: it takes an
// *http.Request, or a framework's per-request context (gin, echo, fiber).
func IsHandlerSig(sig *types.Signature) bool {
	if sig == nil {
		return false
	}
	for i := 0; i < sig.Params().Len(); i++ {
		t := sig.Params().At(i).Type()
		if IsRequest(t) || IsFrameworkContext(t) {
			return true
		}
	}
	return false
}

// IsFrameworkContext reports whether t is a web framework's per-request
// context: *gin.Context, echo.Context, *fiber.Ctx.
func IsFrameworkContext(t types.Type) bool {
	return IsPtrTo(t, "github.com/gin-gonic/gin", "Context") ||
		IsNamed(t, "github.com/labstack/echo/v4", "Context") ||
		IsNamed(t, "github.com/labstack/echo", "Context") ||
		IsPtrTo(t, "github.com/gofiber/fiber/v2", "Ctx")
}

// FuncSig returns the signature of a *ast.FuncDecl or *ast.FuncLit.
func FuncSig(info *types.Info, fn ast.Node) *types.Signature {
	switch fn := fn.(type) {
	case *ast.FuncDecl:
		if obj, ok := info.Defs[fn.Name].(*types.Func); ok {
			return obj.Signature()
		}
	case *ast.FuncLit:
		if sig, ok := info.TypeOf(fn).(*types.Signature); ok {
			return sig
		}
	}
	return nil
}

// InHandler reports whether the code at the top of stack runs once per
// request: the innermost function, or one it is nested in, takes an
// *http.Request or a framework's request context.
func InHandler(info *types.Info, stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch fn := stack[i].(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			if IsHandlerSig(FuncSig(info, fn)) {
				return true
			}
		}
	}
	return false
}

// EnclosingFunc returns the innermost *ast.FuncDecl or *ast.FuncLit on stack.
func EnclosingFunc(stack []ast.Node) ast.Node {
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			return stack[i]
		}
	}
	return nil
}

// OuterFunc returns the outermost *ast.FuncDecl on stack, or nil for
// package-level code.
func OuterFunc(stack []ast.Node) *ast.FuncDecl {
	for _, n := range stack {
		if fd, ok := n.(*ast.FuncDecl); ok {
			return fd
		}
	}
	return nil
}

// FuncBody returns the body of a *ast.FuncDecl or *ast.FuncLit.
func FuncBody(fn ast.Node) *ast.BlockStmt {
	switch fn := fn.(type) {
	case *ast.FuncDecl:
		return fn.Body
	case *ast.FuncLit:
		return fn.Body
	}
	return nil
}

// ObjOf returns the variable an identifier (after parens) refers to.
func ObjOf(info *types.Info, e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.ObjectOf(id).(*types.Var)
	return v
}

// IsLocal reports whether v is a local variable or parameter (not a field,
// not package-level).
func IsLocal(v *types.Var) bool {
	return v != nil && !v.IsField() && v.Pkg() != nil && v.Parent() != v.Pkg().Scope() && v.Parent() != nil
}

// RootObj returns the storage an expression names: for x the variable x,
// for s.a.b the field object b. Analyzers use it to match "the same storage"
// across functions (a package variable, or a struct field).
func RootObj(info *types.Info, e ast.Expr) types.Object {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return info.ObjectOf(e)
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[e]; ok && sel.Kind() == types.FieldVal {
			return sel.Obj()
		}
		return info.ObjectOf(e.Sel)
	case *ast.StarExpr:
		return RootObj(info, e.X)
	}
	return nil
}

// StoredIn returns where stmt (an assignment or a var declaration)
// stores value, one of its right-hand sides: the storage its matching
// left-hand side names (RootObj), or nil.
func StoredIn(info *types.Info, stmt ast.Node, value ast.Node) types.Object {
	switch n := stmt.(type) {
	case *ast.AssignStmt:
		for i, r := range n.Rhs {
			if r == value && i < len(n.Lhs) && len(n.Lhs) == len(n.Rhs) {
				return RootObj(info, n.Lhs[i])
			}
		}
	case *ast.ValueSpec:
		for i, r := range n.Values {
			if r == value && i < len(n.Names) {
				return info.ObjectOf(n.Names[i])
			}
		}
	}
	return nil
}

// IntConst returns the integer value of a constant expression.
func IntConst(info *types.Info, e ast.Expr) (int64, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil {
		return 0, false
	}
	v, exact := constant.Int64Val(constant.ToInt(tv.Value))
	return v, exact
}

// StringConst returns the string value of a constant expression.
func StringConst(info *types.Info, e ast.Expr) (string, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// IsBodyOf reports whether e is X.Body (through parens) with X of a type
// accepted by isOwner, returning X.
func IsBodyOf(info *types.Info, e ast.Expr, isOwner func(types.Type) bool) (ast.Expr, bool) {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Body" {
		return nil, false
	}
	return sel.X, isOwner(info.TypeOf(sel.X))
}

// RequestBody reports whether e reads a request body: r.Body, or r.Body
// wrapped in io.LimitReader or http.MaxBytesReader, with r an *http.Request.
func RequestBody(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if _, ok := IsBodyOf(info, e, IsRequest); ok {
		return true
	}
	if call, ok := CallTo(info, e, "io", "LimitReader"); ok && len(call.Args) == 2 {
		return RequestBody(info, call.Args[0])
	}
	if call, ok := CallTo(info, e, "net/http", "MaxBytesReader"); ok && len(call.Args) == 3 {
		return RequestBody(info, call.Args[1])
	}
	return false
}

// IsMainOrInit reports whether fd is func main() in package main or an
// init function: code that runs once.
func IsMainOrInit(pkg *types.Package, fd *ast.FuncDecl) bool {
	if fd == nil || fd.Recv != nil {
		return false
	}
	return fd.Name.Name == "init" || (fd.Name.Name == "main" && pkg.Name() == "main")
}

// IsTestFunc reports whether fd is a Test, Benchmark, Fuzz or Example function.
func IsTestFunc(fd *ast.FuncDecl) bool {
	if fd == nil {
		return false
	}
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(fd.Name.Name, p) {
			return true
		}
	}
	return false
}

// Use is one reference to a variable: the identifier and the node holding it.
type Use struct {
	Ident  *ast.Ident
	Parent ast.Node
}

// UsesOf returns the references (not the definition) to v within root.
func UsesOf(info *types.Info, root ast.Node, v *types.Var) []Use {
	var out []Use
	ast.PreorderStack(root, nil, func(n ast.Node, stack []ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v && len(stack) > 0 {
			p := stack[len(stack)-1]
			if _, ok := p.(*ast.ParenExpr); ok && len(stack) > 1 {
				p = stack[len(stack)-2]
			}
			out = append(out, Use{Ident: id, Parent: p})
		}
		return true
	})
	return out
}

// DefinedBy returns the local variable that the single-or-first result of
// the call at rhs index i of an assignment or var spec is bound to:
// "v, err := f()" or "v := f()" or "var v = f()".
func DefinedBy(info *types.Info, stmt ast.Node, call ast.Expr) *types.Var {
	switch s := stmt.(type) {
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 && s.Rhs[0] == call && len(s.Lhs) >= 1 {
			return localVar(info, s.Lhs[0])
		}
		for i, r := range s.Rhs {
			if r == call && i < len(s.Lhs) && len(s.Lhs) == len(s.Rhs) {
				return localVar(info, s.Lhs[i])
			}
		}
	case *ast.ValueSpec:
		if len(s.Values) == 1 && s.Values[0] == call && len(s.Names) >= 1 {
			return localVar(info, s.Names[0])
		}
	}
	return nil
}

func localVar(info *types.Info, e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil
	}
	v, _ := info.ObjectOf(id).(*types.Var)
	if !IsLocal(v) {
		return nil
	}
	return v
}

// IsWriteTo reports whether call is w.Write(arg) on an http.ResponseWriter
// w, with arg being the given identifier.
func IsWriteTo(info *types.Info, call *ast.CallExpr, arg *ast.Ident) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Write" || len(call.Args) != 1 || ast.Unparen(call.Args[0]) != arg {
		return false
	}
	return IsResponseWriter(info.TypeOf(sel.X))
}

// SourceOf renders a simple expression (identifiers and selectors) as
// source, for messages; anything else renders as "...".
func SourceOf(e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return SourceOf(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return SourceOf(e.Fun) + "()"
	}
	return "..."
}

// EnclosingBody returns the body of the innermost function around c, or nil
// for package-level code.
func EnclosingBody(c inspector.Cursor) *ast.BlockStmt {
	for f := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		return FuncBody(f.Node())
	}
	return nil
}

// Calls yields every call expression in files with its cursor.
func Calls(files []*ast.File) func(yield func(inspector.Cursor, *ast.CallExpr) bool) {
	return func(yield func(inspector.Cursor, *ast.CallExpr) bool) {
		for c := range inspector.New(files).Root().Preorder((*ast.CallExpr)(nil)) {
			if !yield(c, c.Node().(*ast.CallExpr)) {
				return
			}
		}
	}
}
