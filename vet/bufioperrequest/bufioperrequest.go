// Package bufioperrequest defines HP008 bufio-per-request: a new
// bufio.Reader (4 KB buffer) wrapped around every request body.
package bufioperrequest

import (
	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP008 bufio-per-request.
var Rule = rule.Rule{
	ID:       "HP008",
	Name:     "bufio-per-request",
	Exercise: 8,
	Summary:  "bufio.NewReader(r.Body) per request",
	Help: "bufio.NewReader allocates a 4 KB buffer (NewReaderSize: the size asked for) on every request and " +
		"drops it when the handler returns. Keep *bufio.Reader values in a sync.Pool and Reset them onto " +
		"r.Body. Flagged: bufio.NewReader and NewReaderSize over an *http.Request body (also through " +
		"io.LimitReader or http.MaxBytesReader). Response bodies and other readers are not flagged.",
}

// Analyzer reports HP008.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	for _, call := range nethttp.Calls(pass.Files) {
		fn := nethttp.Callee(info, call)
		if !nethttp.IsFunc(fn, "bufio", "NewReader", "NewReaderSize") || len(call.Args) == 0 {
			continue
		}
		if !nethttp.RequestBody(info, call.Args[0]) {
			continue
		}
		rule.Report(pass, Rule, call, "bufio."+fn.Name()+" allocates a new buffer for every request body: Reset a pooled *bufio.Reader instead")
	}
	return nil
}
