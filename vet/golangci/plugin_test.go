package golangci_test

import (
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis/analysistest"

	_ "github.com/hotpathhq/hotpath/vet/golangci"
)

func TestPlugin(t *testing.T) {
	newPlugin, err := register.GetPlugin("hotpath")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{"rules": []any{"HP012", "read-header-timeout"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
		t.Errorf("load mode %q, want %q", got, register.LoadModeTypesInfo)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("got %d analyzers for two rules", len(as))
	}
	analysistest.Run(t, analysistest.TestData(), as[0], "a")
	analysistest.Run(t, analysistest.TestData(), as[1], "b")
}

func TestPluginRejectsUnknownRule(t *testing.T) {
	newPlugin, err := register.GetPlugin("hotpath")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPlugin(map[string]any{"rules": []any{"HP999"}}); err == nil {
		t.Fatal("unknown rule HP999 accepted")
	}
}

// TestPluginDefaults: with no rules listed, every rule but the ones off by
// default runs; HP015 runs when listed.
func TestPluginDefaults(t *testing.T) {
	newPlugin, err := register.GetPlugin("hotpath")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rules []any
		want  int
		has   bool
	}{{nil, 15, false}, {[]any{"HP015"}, 1, true}} {
		p, err := newPlugin(map[string]any{"rules": c.rules})
		if err != nil {
			t.Fatal(err)
		}
		as, err := p.BuildAnalyzers()
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, a := range as {
			has = has || a.Name == "unclosedbody"
		}
		if len(as) != c.want || has != c.has {
			t.Errorf("rules %v: %d analyzers (unclosedbody %v), want %d (%v)", c.rules, len(as), has, c.want, c.has)
		}
	}
}
