package stringrouting_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/hotpathhq/hotpath/vet/stringrouting"
)

// TestAnalyzer runs in module mode (go 1.22 in go.mod) so the version gate
// applies; old.go lowers its own version to go1.21 with a build constraint
// and must not be flagged.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "go122"), stringrouting.Analyzer, "./...")
}
