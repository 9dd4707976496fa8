// Package tlspercall defines HP010 tls-per-call: a TLS client config built
// per call, in a per-call Transport, without a session cache, so every call
// pays a full TLS handshake.
package tlspercall

import (
	"go/ast"
	"go/token"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/percall"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP010 tls-per-call.
var Rule = rule.Rule{
	ID:       "HP010",
	Name:     "tls-per-call",
	Exercise: 10,
	Summary:  "TLS client config built per call without session reuse",
	Help: "A tls.Config built inside a per-call Transport, with no ClientSessionCache, gives every call a " +
		"full TLS handshake: one or two round trips plus ECDHE and certificate verification (milliseconds " +
		"of CPU). Share the Transport so connections are reused, and set " +
		"ClientSessionCache: tls.NewLRUClientSessionCache(n) so cold connections resume sessions. Not " +
		"flagged: TLS configs on long-lived transports, or with a session cache.",
}

// Analyzer reports HP010.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	for _, t := range percall.Find(pass) {
		for _, cfg := range t.TLS {
			lit := literal(cfg)
			if lit == nil || !nethttp.IsNamed(pass.TypesInfo.TypeOf(lit), "crypto/tls", "Config") || hasSessionCache(lit) {
				continue
			}
			rule.Report(pass, Rule, cfg, "a new tls.Config without ClientSessionCache in a per-call Transport: every call pays a full TLS handshake; share the Transport and set ClientSessionCache")
		}
	}
	return nil
}

func literal(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

func hasSessionCache(lit *ast.CompositeLit) bool {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "ClientSessionCache" {
				return true
			}
		}
	}
	return false
}
