package vet_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/hotpathhq/hotpath/vet"
)

// demo runs every rule over testdata/demo once; loading net/http from
// source dominates the cost, so the tests share the result.
var demo = sync.OnceValues(func() (*vet.Result, error) {
	return vet.Run(vet.Config{Dir: "testdata/demo"})
})

func TestRunDemo(t *testing.T) {
	res, err := demo()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%s:%d %s %s", f.File, f.Line, f.RuleID, f.Rule))
	}
	want := []string{"demo.go:10 HP016 client-timeout", "demo.go:18 HP012 undrained-body", "demo.go:24 HP013 read-header-timeout"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range res.Findings {
		// The analyzers' messages carry the tag for other drivers; JSON
		// and SARIF have rule fields of their own.
		if strings.HasPrefix(f.Message, "[") {
			t.Errorf("Finding.Message keeps the rule tag: %q", f.Message)
		}
	}
	for _, f := range res.Findings {
		if !f.Fixable {
			t.Errorf("%s at line %d should carry a suggested fix", f.RuleID, f.Line)
		}
	}

	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "demo.go:18:8: [HP012 undrained-body] resp.Body is closed before EOF") {
		t.Errorf("text output:\n%s", text.String())
	}

	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var decoded struct{ Findings []vet.Finding }
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || len(decoded.Findings) != 3 || decoded.Findings[0].RuleID != "HP016" {
		t.Errorf("JSON output (err %v):\n%s", err, js.String())
	}
}

func TestSARIF(t *testing.T) {
	res, err := demo()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID      string
						Name    string
						HelpURI string
						Help    struct{ Text string }
					}
				}
			}
			Results []struct {
				RuleID              string
				RuleIndex           int
				PartialFingerprints map[string]string
				Locations           []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != 15 {
		t.Fatalf("%d rules, want 15 (every rule on by default)", len(run.Tool.Driver.Rules))
	}
	for _, r := range run.Tool.Driver.Rules {
		if r.HelpURI == "" || !strings.Contains(r.Help.Text, "hotpath lab --only 000-") {
			t.Errorf("rule %s lacks help: %+v", r.ID, r)
		}
	}
	if len(run.Results) != 3 {
		t.Fatalf("%d results, want 3", len(run.Results))
	}
	seen := map[string]bool{}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("ruleIndex %d does not point at %s", r.RuleIndex, r.RuleID)
		}
		fp := r.PartialFingerprints["hotpathFinding/v1"]
		if fp == "" || seen[fp] {
			t.Errorf("fingerprint %q missing or repeated", fp)
		}
		seen[fp] = true
		if uri := r.Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != "demo.go" {
			t.Errorf("uri %q, want repo-relative demo.go", uri)
		}
	}
}

func TestRunClean(t *testing.T) {
	res, err := vet.Run(vet.Config{Dir: "testdata/clean"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("findings in a package without net/http: %+v", res.Findings)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := vet.Run(vet.Config{Dir: "testdata/demo", Rules: []string{"HP999"}}); err == nil || !strings.Contains(err.Error(), "unknown rule") {
		t.Errorf("unknown rule: err = %v", err)
	}
	if _, err := vet.Run(vet.Config{Dir: "testdata/demo", Patterns: []string{"./nosuchdir"}}); err == nil {
		t.Error("a pattern matching nothing should be an error")
	}
}

func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for i, c := range vet.Checks() {
		r := c.Rule
		// HP001-HP014 follow the catalog's exercises; later rules point at
		// the nearest one. HP015 alone is off by default (bodyclose covers it).
		want, ex := fmt.Sprintf("HP%03d", i+1), i+1
		if i >= 14 {
			ex = r.Exercise
		}
		if r.ID != want || r.Exercise != ex || ex < 1 || ex > 14 || r.OffByDefault != (r.ID == "HP015") {
			t.Errorf("rule %d: ID %s exercise %d off %v, want %s / %d", i, r.ID, r.Exercise, r.OffByDefault, want, ex)
		}
		if seen[r.Name] || c.Analyzer.Name != r.AnalyzerName() || !strings.HasPrefix(c.Analyzer.Doc, r.ID+" "+r.Name) {
			t.Errorf("rule %s: name %q analyzer %q doc %q", r.ID, r.Name, c.Analyzer.Name, c.Analyzer.Doc)
		}
		seen[r.Name] = true
	}
}

func ExampleRun() {
	res, err := vet.Run(vet.Config{Dir: "testdata/clean", Patterns: []string{"./..."}, Rules: []string{"HP012", "read-header-timeout"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d finding(s) in %d package(s)\n", len(res.Findings), res.Packages)
	// Output:
	// 0 finding(s) in 1 package(s)
}

func ExampleResult_WriteText() {
	res, err := demo() // vet.Run(vet.Config{Dir: "testdata/demo"}), shared with the tests
	if err != nil {
		fmt.Println(err)
		return
	}
	res.WriteText(os.Stdout)
	// Output:
	// demo.go:10:15: [HP016 client-timeout] http.Client has no Timeout: a request without a context deadline waits forever on a server that stops answering; set Timeout (30 * time.Second, say: it bounds the whole exchange, body included), or, for a client that streams responses, the Transport's ResponseHeaderTimeout (fix available)
	// demo.go:18:8: [HP012 undrained-body] resp.Body is closed before EOF: bytes left unread cost the connection (Go 1.26 closes it; Go 1.27 drains up to 256 KiB after Close returns, often too late for the next request); drain a bounded rest first: io.CopyN(io.Discard, resp.Body, 64<<10) (fix available)
	// demo.go:24:9: [HP013 read-header-timeout] http.ListenAndServe serves with no timeouts at all: use an http.Server with ReadHeaderTimeout set (fix available)
	// 3 finding(s) in 1 package(s), 15 rule(s) run
}
