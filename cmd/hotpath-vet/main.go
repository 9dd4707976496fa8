// Command hotpath-vet runs the hotpath vet rules (HP001-HP016) as a
// standalone analysis driver or under go vet:
//
//	go vet -vettool=$(which hotpath-vet) ./...
//	hotpath-vet ./...
//
// Each rule is a flag named after its analyzer (-undrainedbody=false turns
// HP012 off). Rules off by default (HP015 unclosed-body, which bodyclose
// covers) run only when their flag is given: -unclosedbody (alone, it runs
// only that rule, as any rule flag set to true does). Without the flag the
// rule is still registered, so go vet accepts it, but does nothing.
// Findings read as in 'hotpath vet', "file:line:col: [HP012
// undrained-body] message"; go vet -fix and -diff apply or show the
// suggested fixes. For JSON and SARIF reports use 'hotpath vet'.
package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/hotpathhq/hotpath/vet"
)

func main() { multichecker.Main(analyzers(os.Args[1:])...) }

// analyzers returns every rule's analyzer; a rule off by default is
// replaced by an inert one of the same name, flag and doc unless args turn
// its flag on.
func analyzers(args []string) []*analysis.Analyzer {
	var out []*analysis.Analyzer
	for _, c := range vet.Checks() {
		a := c.Analyzer
		if c.Rule.OffByDefault && !flagOn(args, a.Name) {
			a = &analysis.Analyzer{
				Name: a.Name,
				Doc:  a.Doc,
				URL:  a.URL,
				Run:  func(*analysis.Pass) (any, error) { return nil, nil },
			}
		}
		out = append(out, a)
	}
	return out
}

// flagOn reports whether args set the boolean flag name to true (-name,
// --name, -name=true); the last setting wins and "--" ends the flags. Under
// go vet the flags come ahead of the tool's config file argument.
func flagOn(args []string, name string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		k, v, hasV := strings.Cut(a, "=")
		if k != name {
			continue
		}
		on = true
		if hasV {
			b, err := strconv.ParseBool(v)
			on = err == nil && b
		}
	}
	return on
}
