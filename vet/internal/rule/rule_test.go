package rule

import "testing"

func TestNames(t *testing.T) {
	r := Rule{ID: "HP012", Name: "undrained-body", Exercise: 12}
	for text, want := range map[string]bool{
		"//nolint":                                   true,
		"//nolint // reason":                         true,
		"//nolint:undrained-body":                    true,
		"//nolint:bodyclose,HP012 // probe":          true,
		"//nolint:undrainedbody":                     true,
		"//nolint:hotpath":                           true,
		"//nolint:bodyclose":                         false,
		"//hotpath:ignore HP012 one-shot probe":      true,
		"//hotpath:ignore undrained-body":            true,
		"//hotpath:ignore HP013 other rule":          false,
		"// a comment mentioning nolint:HP012 later": false,
	} {
		if got := names(text, r); got != want {
			t.Errorf("names(%q) = %v, want %v", text, got, want)
		}
	}
	if r.Lab() != "000-12" || r.AnalyzerName() != "undrainedbody" {
		t.Errorf("Lab %q AnalyzerName %q", r.Lab(), r.AnalyzerName())
	}
}
