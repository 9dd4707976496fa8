package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/vet"
)

func TestVetCommand(t *testing.T) {
	// The flags below choose rules and output formats over the same two
	// package sets: each is loaded and analyzed once, with every rule,
	// and each run keeps the findings of its rules (under -race, loading
	// net/http's dependencies from source takes about 25 s a time).
	// vet.Run's own choice of rules is tested in package vet.
	vetRun = allRulesOnce(t)
	defer func() { vetRun = vet.Run }()
	demo := "../../vet/testdata/demo"
	var out, errb bytes.Buffer
	if code := runVet([]string{"-C", demo, "./..."}, &out, &errb); code != 1 {
		t.Fatalf("exit %d with findings, want 1; stderr: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "[HP012 undrained-body]") || !strings.Contains(out.String(), "[HP013 read-header-timeout]") ||
		strings.Contains(out.String(), "HP015") {
		t.Errorf("output (HP015 is off by default):\n%s", out.String())
	}

	// HP015 runs when named, or with --all.
	for _, args := range [][]string{{"--rules", "unclosed-body"}, {"--all"}} {
		out.Reset()
		if code := runVet(append(args, "-C", demo), &out, &errb); code != 1 || !strings.Contains(out.String(), "demo.go:38:15: [HP015 unclosed-body]") {
			t.Errorf("%q: exit %d\n%s", args, code, out.String())
		}
		if got, want := strings.Contains(out.String(), "HP012"), args[0] == "--all"; got != want {
			t.Errorf("%q: HP012 reported %v, want %v\n%s", args, got, want, out.String())
		}
	}

	out.Reset()
	if code := runVet([]string{"--sarif", "-C", demo}, &out, &errb); code != 1 {
		t.Fatalf("--sarif exit %d", code)
	}
	var sarif struct{ Version string }
	if err := json.Unmarshal(out.Bytes(), &sarif); err != nil || sarif.Version != "2.1.0" {
		t.Errorf("--sarif output (err %v): %.200s", err, out.String())
	}

	out.Reset()
	if code := runVet([]string{"-C", "../../vet/testdata/clean", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("clean package: exit %d, stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"findings": []`) {
		t.Errorf("--json on clean code:\n%s", out.String())
	}
}

func TestVetUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--json", "--sarif"},
		{"--fix", "--json"},
		{"--rules", "HP999", "-C", "../../vet/testdata/clean"},
		{"--no-such-flag"},
		{"-C", "../../vet/testdata/clean", "./nosuchdir"},
	} {
		var out, errb bytes.Buffer
		if code := runVet(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %s)", args, code, errb.String())
		}
		// One prefix, never "hotpath vet: vet: ...".
		if msg := errb.String(); !strings.HasPrefix(msg, "hotpath vet: ") || strings.Contains(msg, "vet: vet:") {
			t.Errorf("%q: stderr %q", args, msg)
		}
	}
	var out, errb bytes.Buffer
	if code := runVet([]string{"--rules", "list"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 16 ||
		strings.Count(out.String(), "(off by default)") != 1 || !strings.Contains(out.String(), "unclosed-body") {
		t.Errorf("--rules list: exit %d\n%s", code, out.String())
	}
	out.Reset()
	if code := runVet([]string{"--all", "--rules", "HP015"}, &out, &errb); code != 2 {
		t.Errorf("--all with --rules: exit %d, want 2", code)
	}
}

// TestVetFindsTheLabsBeforeArms: the lab's "before" arms are the
// catalog's anti-patterns written on purpose, so they are a recall check
// on real code: each rule below must keep finding its arm. (The arms of
// 000-01, 03, 09, 10 and 13 build their client or server in helpers the
// rules cannot see through; see vet/README.md.) The "after" arms must
// stay clean: any other finding fails the test.
func TestVetFindsTheLabsBeforeArms(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runVet([]string{"--json", "-C", "../..", "./internal/lab"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1 (findings); stderr %s", code, errb.String())
	}
	var res struct {
		Findings []struct {
			Rule string `json:"rule_id"`
			File string `json:"file"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json: %v\n%.300s", err, out.String())
	}
	want := map[string]string{
		"HP002": "e000_02", "HP004": "e000_04", "HP005": "e000_05", "HP006": "e000_06", "HP007": "e000_07",
		"HP008": "e000_08", "HP011": "e000_11", "HP012": "e000_12", "HP014": "e000_14",
	}
	got := map[string]bool{}
	for _, f := range res.Findings {
		file, ok := want[f.Rule]
		if !ok || !strings.Contains(f.File, file) {
			t.Errorf("unexpected finding %s in %s", f.Rule, f.File)
		}
		got[f.Rule] = true
	}
	for rule, file := range want {
		if !got[rule] {
			t.Errorf("%s no longer finds the before arm in internal/lab/%s_*.go", rule, file)
		}
	}
}

// TestVetFix copies a module with fixable findings, prints the fixes with
// --diff (writing nothing), applies them with --fix (the file must match
// the golden file), and runs --fix again: nothing is left to fix.
func TestVetFix(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "fix.go"} {
		b, err := os.ReadFile(filepath.Join("../../vet/testdata/fix", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	orig, _ := os.ReadFile(filepath.Join(dir, "fix.go"))
	golden, err := os.ReadFile("../../vet/testdata/fix/fix.go.golden")
	if err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := runVet([]string{"--diff", "-C", dir}, &out, &errb); code != 1 {
		t.Fatalf("--diff: exit %d, want 1; stderr %s", code, errb.String())
	}
	if d := out.String(); !strings.HasPrefix(d, "--- a/fix.go\n+++ b/fix.go\n@@ ") || strings.Count(d, "+\t\"time\"\n") != 1 || strings.Count(d, "+\t\"io\"\n") != 1 ||
		!strings.Contains(d, "+\treq.Header.Set(\"Authorization\", \"Bearer \"+token)\n") {
		t.Errorf("--diff output:\n%s", d)
	}
	if !strings.Contains(errb.String(), "would apply 6 fix(es) to 1 file(s)") || strings.Contains(errb.String(), "[HP") {
		t.Errorf("--diff stderr:\n%s", errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fix.go")); !bytes.Equal(b, orig) {
		t.Fatal("--diff wrote the file")
	}

	out.Reset()
	errb.Reset()
	if code := runVet([]string{"--fix", "-C", dir}, &out, &errb); code != 0 { // every finding has a fix
		t.Fatalf("--fix: exit %d, want 0; stderr %s", code, errb.String())
	}
	// HP013's and HP009's fixes on ServeAdmin's literal are the same edit,
	// HP016's and HP013's time imports too; HP012's io import goes
	// elsewhere, so it does not overlap them. The fixed code is clean.
	if !strings.HasPrefix(out.String(), "applied 6 fix(es) to 1 file(s)\n") || strings.Contains(out.String(), "[HP") ||
		strings.Contains(out.String(), "overlap") {
		t.Errorf("--fix output:\n%s", out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fix.go")); !bytes.Equal(b, golden) {
		t.Errorf("fix.go after --fix:\n%s\nwant (fix.go.golden):\n%s", b, golden)
	}

	out.Reset()
	if code := runVet([]string{"--fix", "-C", dir}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "applied 0 fix(es) to 0 file(s)\n") ||
		strings.Contains(out.String(), "fix available") {
		t.Errorf("second --fix: exit %d\n%s", code, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fix.go")); !bytes.Equal(b, golden) {
		t.Error("second --fix changed the file")
	}
}

// vetHint matches a hotpath vet command line as texts show it, up to what
// ends a command in prose or a shell line ("hotpath vet: ..." is an error
// message's prefix, "[flags]" a placeholder).
var vetHint = regexp.MustCompile("hotpath vet([^\\n'\"`)>|#<;:\\[]*)")

// TestVetHints: every "hotpath vet ..." command that vet's messages, usage
// and READMEs show parses, with valid rule names (issue 14: "see hotpath
// vet -rules" failed).
func TestVetHints(t *testing.T) {
	var texts []string
	var usage bytes.Buffer
	runVet([]string{"-h"}, &usage, io.Discard)
	texts = append(texts, usage.String(), (&vet.UnknownRuleError{Name: "x"}).Error())
	for _, f := range []string{"../../README.md", "../../vet/README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	// String literals in vet's Go code and in this command.
	files, _ := filepath.Glob("vet*.go")
	err := filepath.WalkDir("../../vet", func(path string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					texts = append(texts, s)
				}
			}
			return true
		})
	}
	n := 0
	for _, text := range texts {
		for _, m := range vetHint.FindAllStringSubmatch(text, -1) {
			n++
			args := strings.Fields(m[1])
			fs, o := vetFlags()
			pos, _, ok := parseFlags(fs, args, false, io.Discard, io.Discard)
			if !ok {
				t.Errorf("%q does not parse", m[0])
				continue
			}
			if err := o.check(); err != nil {
				t.Errorf("%q: %v", m[0], err)
			}
			if o.rules != "" && o.rules != "list" {
				if _, err := vet.Select(strings.Split(o.rules, ",")); err != nil {
					t.Errorf("%q: %v", m[0], err)
				}
			}
			for _, p := range pos {
				if p != "rules" && !strings.HasPrefix(p, ".") {
					t.Errorf("%q: argument %q is neither 'rules' nor a ./package pattern", m[0], p)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d hints: is the pattern still right?", n)
	}
}

// TestVetRuleRange: the rule range the usage and the READMEs state
// ("HP001-HP015", "HP001 to HP015") is vet.Checks()'s.
func TestVetRuleRange(t *testing.T) {
	checks := vet.Checks()
	first, last := checks[0].Rule.ID, checks[len(checks)-1].Rule.ID
	var usage bytes.Buffer
	runVet([]string{"-h"}, &usage, io.Discard)
	texts := map[string]string{"hotpath vet -h": usage.String()}
	for _, f := range []string{"../../README.md", "../../vet/README.md", "../hotpath-vet/main.go", "../../vet/vet.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	rx := regexp.MustCompile(`(HP\d{3}) ?(?:-|–|to|…) ?(HP\d{3})`)
	for name, text := range texts {
		for _, m := range rx.FindAllStringSubmatch(text, -1) {
			if m[1] != first || m[2] != last {
				t.Errorf("%s: %q, want %s-%s (vet.Checks())", name, m[0], first, last)
			}
		}
	}
	if !rx.MatchString(usage.String()) || !rx.MatchString(texts["../../README.md"]) {
		t.Errorf("the usage and README.md must state the rule range")
	}
	var list bytes.Buffer
	runVet([]string{"rules"}, &list, io.Discard)
	if got := strings.Count(list.String(), "\n"); got != len(checks) {
		t.Errorf("hotpath vet rules: %d lines, want %d:\n%s", got, len(checks), list.String())
	}
}

// allRulesOnce returns a vet.Run that runs every rule once per package
// set (directory, patterns, tests) and answers each call with the
// findings of the rules the call selects, as vet.Run would.
func allRulesOnce(t *testing.T) func(vet.Config) (*vet.Result, error) {
	type key struct {
		dir, patterns string
		tests         bool
	}
	runs := map[key]*vet.Result{}
	return func(cfg vet.Config) (*vet.Result, error) {
		checks, err := vet.Select(cfg.Rules)
		if err != nil {
			return nil, err
		}
		if cfg.All {
			checks = vet.Checks()
		}
		patterns := strings.Join(cfg.Patterns, " ")
		if patterns == "" {
			patterns = "./..." // vet.Run's default
		}
		k := key{cfg.Dir, patterns, cfg.Tests}
		all, ok := runs[k]
		if !ok {
			every := cfg
			every.Rules, every.All = nil, true
			if all, err = vet.Run(every); err != nil {
				return nil, err
			}
			runs[k] = all
		}
		res := *all
		res.Checks, res.Findings = checks, nil
		for _, f := range all.Findings {
			for _, c := range checks {
				if f.RuleID == c.Rule.ID {
					res.Findings = append(res.Findings, f)
				}
			}
		}
		t.Logf("vet %+v: %d of %d findings", cfg, len(res.Findings), len(all.Findings))
		return &res, nil
	}
}
