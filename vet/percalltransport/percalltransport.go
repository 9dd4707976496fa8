// Package percalltransport defines HP001 per-call-transport: an
// http.Transport (or a Client with its own Transport) built for one call and
// thrown away, so no connection is ever reused.
package percalltransport

import (
	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/percall"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP001 per-call-transport.
var Rule = rule.Rule{
	ID:       "HP001",
	Name:     "per-call-transport",
	Exercise: 1,
	Summary:  "http.Transport built per call",
	Help: "The Transport holds the keep-alive pool. A Transport built, used for a request and dropped inside " +
		"one call means every call dials a new TCP connection (and TLS handshake) and leaves idle " +
		"connections behind until they time out. Build one Transport (or Client) once and share it: " +
		"a package variable, a struct field set in a constructor, or a sync.Once. A new http.Client that " +
		"reuses a shared Transport is fine and not flagged, nor is a lazy-init guard (if c.client == nil), " +
		"nor a transport that is returned or stored.",
}

// Analyzer reports HP001.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	for _, t := range percall.Find(pass) {
		rule.Report(pass, Rule, t.Construct, "a new http.Transport is built and used for one call: its connections are never reused; share one Transport across calls")
	}
	return nil
}
