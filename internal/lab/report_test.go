package lab

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	before, after := newArm("before", "x := 1"), newArm("after", "")
	r := newResult(microMetrics, before, after)
	r.ID, r.Seed, r.Title = "000-99", "000", "a <sample> & test"
	for i := range 6 {
		before.record(NsPerOp.Name, 100+float64(i))
		after.record(NsPerOp.Name, 50+float64(i))
		before.record(AllocsPerOp.Name, 3)
		after.record(AllocsPerOp.Name, 0)
	}
	r.summarize()
	r.compare("time", "before", "after", NsPerOp, Claim{Quote: "100 → 50 ns/op", Ratio: 2})
	r.compare("allocs", "before", "after", AllocsPerOp, Claim{Quote: "3 → 1", Ratio: 3})
	r.compare("context", "before", "after", NsPerOp, Claim{Quote: "no claim", Info: true})
	r.Setup, r.SameWork = "setup", "same"
	r.finish("because", "a note")
	failed := &Result{ID: "000-98", Seed: "000", Title: "broken", Verdict: NotReproducible, Why: "boom", Err: "boom"}
	return &Report{Machine: ReadMachine(), Schema: SchemaVersion, Budget: "quick", RunsPerArm: 6, MaxRuns: 12, Sources: Sources, Started: time.Unix(1700000000, 0).UTC(), Duration: 3 * time.Second, Rule: Rule, Results: []*Result{r, failed}}
}

func TestWriteHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, bad := range []string{"http://", "https://", "<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML contains %q: not self-contained", bad)
		}
	}
	for _, want := range []string{"<svg", "000-99", "a &lt;sample&gt; &amp; test", "confirmed", "not reproducible here", "2.00×", "How a ratio becomes a verdict", "a note", "no effect here", "inconclusive", "net/http — Optimization", "Nov 28, 2014", "author, date and URL not printed", "github.com/pessolato/httpmicrobench", "95% CI", "claimed</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if regexp.MustCompile(`NaN|Inf`).MatchString(s) {
		t.Error("HTML shows NaN or Inf")
	}
	// The rule is shown beside the summary table, not folded away.
	rule := strings.Index(s, "How a ratio becomes a verdict")
	table := strings.Index(s, `<table class="summary">`)
	if rule < 0 || table < 0 || rule > table || strings.Contains(s[:table], "<details") {
		t.Error("the verdict rule is not shown, unfolded, just before the summary table")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	rep := sampleReport()
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(rep)
	y, _ := json.Marshal(got)
	if !bytes.Equal(x, y) {
		t.Errorf("round trip differs:\n%s\n%s", x, y)
	}
	if got.Results[0].Comparisons[0].Verdict != Confirmed {
		t.Errorf("verdict lost: %+v", got.Results[0].Comparisons[0])
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"| experiment | claim | claimed | measured (95% CI) | verdict |", "| 000-99 | time: 100 → 50 ns/op | 2.00× |", "**confirmed**", "**How a ratio becomes a verdict.**", "- **inconclusive**: ", "*Go HTTP Clients: net/http vs The Fast Ones*", "2025-10-08", "Seed 000: *net/http — Optimization*", "```go\nx := 1\n```", "| 000-98 broken |"} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	_, table, _ := strings.Cut(s, "| experiment | claim |")
	if summary, _, _ := strings.Cut(table, "\n## 000-99"); strings.Contains(summary, "no claim") {
		t.Error("info comparisons belong in the experiment's section, not the verdict table")
	}
}

// Every experiment names its seed article, and every article is quoted
// with the details it prints.
func TestEverySeedHasASource(t *testing.T) {
	for _, e := range Experiments() {
		s, ok := SourceOf(e.Seed)
		if !ok {
			t.Errorf("experiment %s: seed %q has no entry in Sources", e.ID, e.Seed)
			continue
		}
		if s.Title == "" || s.Claim == "" || s.Byline() == "" {
			t.Errorf("source %s is incomplete: %+v", s.Seed, s)
		}
	}
	seen := map[string]bool{}
	for _, s := range Sources {
		if seen[s.Seed] {
			t.Errorf("seed %s listed twice", s.Seed)
		}
		seen[s.Seed] = true
	}
}

func TestByline(t *testing.T) {
	for _, tt := range []struct {
		s    Source
		want string
	}{
		{Source{}, "author, date and URL not printed"},
		{Source{Date: "Nov 28, 2014"}, "Nov 28, 2014; author and URL not printed"},
		{Source{Author: "A. Writer", Site: "example.org", Date: "2025-01-02", URL: "https://example.org/a"}, "by A. Writer, example.org, 2025-01-02"},
		{Source{Author: "A. Writer"}, "by A. Writer; date and URL not printed"},
	} {
		if got := tt.s.Byline(); got != tt.want {
			t.Errorf("Byline(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestSourcesCited: the reports cite each article by its title (linked to
// its URL where it prints one), never by a file the repository does not
// hold (they cited seeds/*.txt).
func TestSourcesCited(t *testing.T) {
	rep := sampleReport()
	rep.Sources = append(append([]Source{}, Sources...), Source{Seed: "999", Title: "An Article", URL: "https://example.org/article", Claim: "fast"})
	var md, html bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report.md": md.String(), "index.html": html.String(), "results.json": string(js)} {
		if strings.Contains(out, "seeds/") || strings.Contains(out, ".txt") {
			t.Errorf("%s cites a seed file", name)
		}
		for _, s := range rep.Sources {
			if !strings.Contains(out, s.Title) {
				t.Errorf("%s does not cite %q", name, s.Title)
			}
		}
	}
	if !strings.Contains(md.String(), "[*An Article*](https://example.org/article)") || !strings.Contains(html.String(), "example.org/article") {
		t.Error("an article's URL is not cited")
	}
	if !strings.Contains(md.String(), "*Basic Micro-Optimizations Part 2* (Nov 28, 2014; author and URL not printed)") {
		t.Errorf("seed 004's citation:\n%s", md.String())
	}
}

func TestWrapLabel(t *testing.T) {
	got := wrapLabel("GET · client.Transport (shared Transport) with a very long tail of words", 34)
	if len(got) != 2 || got[0] != "GET · client.Transport (shared" || !strings.HasPrefix(got[1], "Transport) with") || !strings.HasSuffix(got[1], "…") {
		t.Errorf("wrapLabel = %q", got)
	}
	if got := wrapLabel("short", 34); len(got) != 1 || got[0] != "short" {
		t.Errorf("wrapLabel(short) = %q", got)
	}
}

// "cost → 0" moves away from a claim diamond at the right end of the axis.
func TestCostGoneLabelAvoidsTheDiamond(t *testing.T) {
	r := &Result{Comparisons: []Comparison{
		{Name: "garbage", Claim: Claim{Ratio: 565}, Measured: stat(48, 48, 48), AfterZero: true, Verdict: Confirmed},
		{Name: "time", Claim: Claim{Ratio: 2.3}, Measured: stat(2, 1.8, 2.4), Verdict: Confirmed},
	}}
	svg := ratioChart(r)
	if !strings.Contains(svg, `text-anchor="start" fill="#1a7f4b" font-weight="600" paint-order="stroke" stroke="#fbfbfd" stroke-width="4">cost → 0`) {
		t.Errorf("cost → 0 label sits at the right end, under the claim's diamond:\n%s", svg)
	}
	r.Comparisons[0].Claim.Ratio = 0 // no diamond: the label goes at the right end
	if svg := ratioChart(r); !strings.Contains(svg, `text-anchor="end" fill="#1a7f4b" font-weight="600" paint-order="stroke" stroke="#fbfbfd" stroke-width="4">cost → 0`) {
		t.Error("cost → 0 label not at the right end without a diamond")
	}
}
