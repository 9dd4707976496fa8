// Package serveridletimeout defines HP009 server-idle-timeout: a server
// that keeps idle keep-alive connections open forever.
package serveridletimeout

import (
	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/rule"
	"github.com/hotpathhq/hotpath/vet/internal/serverlit"
)

// Rule is HP009 server-idle-timeout.
var Rule = rule.Rule{
	ID:       "HP009",
	Name:     "server-idle-timeout",
	Exercise: 9,
	Summary:  "server without IdleTimeout (or ReadTimeout)",
	Help: "An http.Server with IdleTimeout and ReadTimeout both zero never closes an idle keep-alive " +
		"connection: each holds a goroutine, buffers and a file descriptor until the client goes away, and " +
		"clients that vanish without a FIN leak them for good. Set IdleTimeout (for example 90s, above your " +
		"clients' IdleConnTimeout). A zero IdleTimeout falls back to ReadTimeout, so a server with ReadTimeout " +
		"is not flagged, nor one whose timeouts are set after the literal.",
}

// Analyzer reports HP009.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	for _, s := range serverlit.Find(pass) {
		if s.Escapes || s.Set("IdleTimeout") || s.Set("ReadTimeout") {
			continue
		}
		var fixes []analysis.SuggestedFix
		if f, ok := s.TimeoutsFix(pass); ok {
			fixes = append(fixes, f)
		}
		rule.Report(pass, Rule, s.Lit, "http.Server has no IdleTimeout (nor ReadTimeout): idle keep-alive connections are never closed", fixes...)
	}
	return nil
}
