package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// manifestArgs returns the container args of a printed Job, unquoted.
func manifestArgs(t *testing.T, manifest string) []string {
	t.Helper()
	var args []string
	in := false
	for line := range strings.Lines(manifest) {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "args:":
			in = true
		case in && strings.HasPrefix(trimmed, "- "):
			s, err := strconv.Unquote(strings.TrimPrefix(trimmed, "- "))
			if err != nil {
				t.Fatalf("arg line %q does not unquote: %v", trimmed, err)
			}
			args = append(args, s)
		case in:
			return args
		}
	}
	t.Fatalf("no args in the manifest:\n%s", manifest)
	return nil
}

// A header with quotes, a colon and a '#', a body with a newline, a tab,
// a NUL and non-ASCII text, each as one argument: they reach the pod's
// args as given, in order, after the Job's own flags, and the URL last.
func TestLoadK8sManifest(t *testing.T) {
	header := `X-Note: a "quoted": value # not a comment`
	data := "line one\n\tline \"two\": {x: [1]} \x00 é 日本 \\ end"
	before := time.Now()
	args := []string{"load", "k8s", "--shards", "4", "--run-id", "run-7", "--rate", "1000", "-H", header,
		"--data=" + data, "-c", "8", "-d", "20s", "--start-in", "45s", "--cpu", "2", "--memory", "1Gi", "--namespace", "perf",
		"http://api.perf.svc:8080/x?a=1&b=2", "--quiet"}
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	m := out.String()
	got := manifestArgs(t, m)
	if len(got) < 6 || got[0] != "load" || got[1] != "--result-line" || got[2] != "--start-at" || got[4] != "--run-id" || got[5] != "run-7" {
		t.Fatalf("args %q: want load --result-line --start-at T --run-id run-7 first", got)
	}
	start, err := time.Parse(time.RFC3339, got[3])
	if err != nil || !strings.HasSuffix(got[3], "Z") {
		t.Fatalf("--start-at %q: not RFC 3339 UTC: %v", got[3], err)
	}
	if lo, hi := before.Add(44*time.Second), time.Now().Add(45*time.Second); start.Before(lo) || start.After(hi) {
		t.Errorf("--start-at %s: want now + 45s (%s to %s)", start, lo, hi)
	}
	want := []string{"--rate", "1000", "-H", header, "--data=" + data, "-c", "8", "-d", "20s", "--quiet", "http://api.perf.svc:8080/x?a=1&b=2"}
	if strings.Join(got[6:], "\x01") != strings.Join(want, "\x01") {
		t.Errorf("load args\n got %q\nwant %q", got[6:], want)
	}
	for _, s := range []string{
		`name: "hotpath-load-run-7"`, `namespace: "perf"`, `completionMode: "Indexed"`, "completions: 4", "parallelism: 4",
		"backoffLimitPerIndex: 0", `restartPolicy: "Never"`, `name: "HOTPATH_SHARDS"`, `value: "4"`,
		`topologyKey: "kubernetes.io/hostname"`, `cpu: "2" # --cpu`, `cpu: "2" # = the request`, `memory: "1Gi" # = the request`,
		"activeDeadlineSeconds: 375", // 45s + 20s + 10s + 5min
	} {
		if !strings.Contains(m, s) {
			t.Errorf("manifest lacks %s", s)
		}
	}
	if strings.ContainsRune(m, 0) || strings.Contains(m, "line one\n") {
		t.Error("a raw NUL or newline of an argument reached the manifest")
	}
	if !strings.Contains(errOut.String(), "hotpath load collect --job hotpath-load-run-7 --namespace perf") {
		t.Errorf("stderr does not say what to do next: %s", errOut.String())
	}
}

// Every field of the Job carries a comment saying why it is set: on the
// lines above it or at the end of its line.
func TestLoadK8sEveryFieldDocumented(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"load", "k8s", "--shards", "2", "--namespace", "x", "-d", "5s", "http://svc/"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	key := regexp.MustCompile(`^(- )?[A-Za-z][A-Za-z0-9./-]*:`)
	prevComment := false
	fields := 0
	for line := range strings.Lines(out.String()) {
		s := strings.TrimSpace(line)
		switch {
		case s == "":
			continue
		case strings.HasPrefix(s, "#"):
			prevComment = true
			continue
		case key.MatchString(s):
			fields++
			if !prevComment && !strings.Contains(s, " # ") {
				t.Errorf("field without a comment saying why: %s", s)
			}
		}
		prevComment = false
	}
	if fields < 40 {
		t.Errorf("only %d fields found: the check is not reading the manifest", fields)
	}
}

func TestYAMLQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `a "b": c # d`, "x\ny\r\n", "tab\there", "nul\x00", "\\", "null", "yes",
		"0x10", "- item", "é日本\u00a0\u2028\u0085\ufeff", "emoji 🙂", "\U000e0001", "{[&*!|>'%@`]}"} {
		q := yamlQuote(s)
		if strings.ContainsAny(q, "\n\r\t\x00\u2028\u0085\ufeff\u00a0") {
			t.Errorf("yamlQuote(%q) = %s: a raw line break or invisible character", s, q)
		}
		if got, err := strconv.Unquote(q); err != nil || got != s {
			t.Errorf("yamlQuote(%q) = %s, reads back as %q, %v", s, q, got, err)
		}
	}
}

func TestLoadK8sUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-h"}, 0, "--shards"},
		{[]string{"-h"}, 0, "hotpath load collect --job"},
		{[]string{"http://svc/"}, 2, "--shards 0: want 1 to 100000"},
		{[]string{"--shards", "2"}, 2, "want one URL"},
		{[]string{"--shards", "2", "http://a/", "http://b/"}, 2, "want one URL"},
		{[]string{"--shards", "2", "ftp://svc/"}, 2, "not an http:// or https:// URL"},
		{[]string{"--shards", "2", "--name", "Bad_Name", "http://svc/"}, 2, "want a DNS label"},
		{[]string{"--shards", "2", "--name", strings.Repeat("a", 62), "http://svc/"}, 2, "at most 61 characters"},
		{[]string{"--shards", "2", "--cpu", "lots", "http://svc/"}, 2, `--cpu "lots" is not a Kubernetes quantity`},
		{[]string{"--shards", "2", "--memory", "0", "http://svc/"}, 2, "not a Kubernetes quantity"},
		{[]string{"--shards", "2", "--run-id", "a b", "http://svc/"}, 2, "label value"},
		{[]string{"--shards", "2", "--start-in", "0s", "http://svc/"}, 2, "--start-in 0s"},
		{[]string{"--shards", "2", "--json", "http://svc/"}, 2, "pass --json to hotpath load collect"},
		{[]string{"--shards", "2", "--html", "r.html", "http://svc/"}, 2, "pass --html to hotpath load collect"},
		{[]string{"--shards", "2", "--shard", "0/2", "http://svc/"}, 2, "JOB_COMPLETION_INDEX"},
		{[]string{"--shards", "2", "--start-at", "2030-01-01T00:00:00Z", "http://svc/"}, 2, "--start-in"},
		{[]string{"--shards", "2", "--bogus", "1", "http://svc/"}, 2, "would fail in every pod: flag provided but not defined: -bogus"},
		{[]string{"--shards", "2", "--rate", "fast", "http://svc/"}, 2, "would fail in every pod"},
		{[]string{"--shards", "2", "http://svc/", "-H"}, 2, "load flag -H needs a value"},
		{[]string{"--shards", "2", "--data", "a\xffb", "http://svc/"}, 2, "not valid UTF-8"},
		{[]string{"--shards", "2", "--targets", "mix.txt", "http://svc/"}, 2, "a target file here is not in the pods"},
		{[]string{"--shards", "2", "--data", "@body.json", "http://svc/"}, 2, "a file here is not in the pods"},
		{[]string{"--shards", "2", "--data-binary=@body.bin", "http://svc/"}, 2, "a file here is not in the pods"},
		{[]string{"--shards", "2", "--summary-md", "s.md", "http://svc/"}, 2, "pass --summary-md to hotpath load collect"},
		{[]string{"--shards", "2", "http://127.0.0.1:8080/"}, 0, "is the pod itself"},
		{[]string{"--shards", "3", "-k", "https://svc/", "-c", "9"}, 0, "3 shards"},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		args := append([]string{"load", "k8s"}, tc.args...)
		if code := run(args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("hotpath %q: exit %d, output %q; want exit %d and %q", args, code, out.String(), tc.code, tc.out)
		}
	}
}

// loadBoolFlags must list exactly the load command's flags that take no
// value, or the k8s command would take a flag's value for the URL (or the
// URL for a flag's value). Each flag of `hotpath load -h` is tried with
// -h after it: a flag that takes no value lets -h print the usage (exit
// 0); one that takes a value swallows -h and fails (exit 2).
func TestLoadBoolFlags(t *testing.T) {
	var usage bytes.Buffer
	run([]string{"load", "-h"}, &usage, &usage)
	flagLine := regexp.MustCompile(`^  -([a-z0-9-]+)`)
	n := 0
	sc := bufio.NewScanner(&usage)
	for sc.Scan() {
		m := flagLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		isBool := run([]string{"load", "-" + m[1], "-h"}, &bytes.Buffer{}, &bytes.Buffer{}) == 0
		if isBool != loadBoolFlags[m[1]] {
			t.Errorf("load flag -%s: takes no value: %v; loadBoolFlags says %v", m[1], isBool, loadBoolFlags[m[1]])
		}
	}
	if n < 15 {
		t.Fatalf("found %d flags in hotpath load -h: is the usage format different?\n%s", n, usage.String())
	}
}

// fakeKubectl writes a shell script standing in for kubectl: it records
// its arguments in DIR/calls, answers `get pods` with DIR/pods.json and
// `logs POD` with DIR/POD.log (failing when there is none), and with
// `apply -f -` copies its input to DIR/applied.
func fakeKubectl(t *testing.T, dir string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake kubectl is a shell script")
	}
	script := `#!/bin/sh
d='` + dir + `'
echo "$@" >> "$d/calls"
case "$1" in
get) [ -f "$d/get.err" ] && { cat "$d/get.err" >&2; exit 1; }; cat "$d/pods.json" ;;
logs) [ -f "$d/$2.log" ] || { echo "Error from server (BadRequest): container \"hotpath\" in pod \"$2\" is waiting to start: ContainerCreating" >&2; exit 1; }; cat "$d/$2.log" ;;
apply) cat > "$d/applied"; [ -f "$d/apply.err" ] && { cat "$d/apply.err" >&2; exit 1; }; echo "job.batch/x created" ;;
*) echo "fake kubectl: unexpected $*" >&2; exit 3 ;;
esac
`
	bin := filepath.Join(dir, "kubectl")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestLoadK8sApply(t *testing.T) {
	dir := t.TempDir()
	bin := fakeKubectl(t, dir)
	var out, errOut bytes.Buffer
	args := []string{"load", "k8s", "--shards", "2", "--apply", "--kubectl", bin, "--run-id", "r1", "-n", "1000", "http://svc/"}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	applied, _ := os.ReadFile(filepath.Join(dir, "applied"))
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	if !strings.Contains(out.String(), "job.batch/x created") || strings.TrimSpace(string(calls)) != "apply -f -" {
		t.Errorf("kubectl not run as apply -f -: calls %q, output %q", calls, out.String())
	}
	if !strings.Contains(string(applied), `kind: "Job"`) || !strings.Contains(string(applied), `"--run-id"`) || strings.Contains(string(applied), "activeDeadlineSeconds") {
		t.Errorf("kubectl got (an -n run has no deadline):\n%s", applied)
	}
	os.WriteFile(filepath.Join(dir, "apply.err"), []byte("error: no cluster\n"), 0o644)
	out.Reset()
	if code := run(args, &out, &out); code != 1 || !strings.Contains(out.String(), "error: no cluster") || !strings.Contains(out.String(), "apply -f -: exit status 1") {
		t.Errorf("failing kubectl apply: exit %d, %s", code, out.String())
	}
	out.Reset()
	args[6] = filepath.Join(dir, "nonexistent")
	if code := run(args, &out, &out); code != 1 || !strings.Contains(out.String(), "not found: install kubectl, or point --kubectl or HOTPATH_KUBECTL at it") {
		t.Errorf("missing kubectl: exit %d, %s", code, out.String())
	}
}

// TestK8sDeadline: the Job's deadline covers the run however its length
// is written: -d with a unit or in bare seconds, stages of either kind.
func TestK8sDeadline(t *testing.T) {
	start := 10 * time.Second
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"-d", "30s"}, 350},
		{[]string{"-d", "30"}, 350},
		{[]string{"-d=2m", "--timeout", "20"}, 450},
		{[]string{"--stages", "30s:100,1m:100"}, 410},
		{[]string{"--conn-stages=1m:10"}, 380},
		{[]string{"-n", "5"}, 0},
		{nil, 330},
	} {
		if got := k8sDeadline(start, tc.args); got != tc.want {
			t.Errorf("%q: %d s, want %d", tc.args, got, tc.want)
		}
	}
}
