package udiff

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
	new := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\nnew\n"
	want := `--- a/x.go
+++ b/x.go
@@ -1,7 +1,7 @@
 a
 b
 c
-d
+D
 e
 f
 g
@@ -12,3 +12,4 @@
 l
 m
 n
+new
`
	if got := Unified("a/x.go", "b/x.go", old, new); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := Unified("a", "b", old, old); got != "" {
		t.Errorf("equal texts: %q", got)
	}
	if got, want := Unified("a", "b", "x", "y\n"), "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n"; got != want {
		t.Errorf("no final newline: got\n%s\nwant\n%s", got, want)
	}
	if got, want := Unified("a", "b", "", "y\n"), "--- a\n+++ b\n@@ -0,0 +1 @@\n+y\n"; got != want {
		t.Errorf("from empty: got\n%s\nwant\n%s", got, want)
	}
}

// TestUnifiedApplies: on random edits of a random file, applying the diff
// to the old text gives the new one, and the diff is minimal in hunks' sense
// (every - and + line is a real change).
func TestUnifiedApplies(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 500 {
		var a []string
		for range rng.Intn(40) {
			a = append(a, strconv.Itoa(rng.Intn(8))+"\n")
		}
		b := append([]string(nil), a...)
		for range rng.Intn(5) {
			switch p := rng.Intn(len(b) + 1); rng.Intn(3) {
			case 0:
				b = append(b[:p], append([]string{"new\n"}, b[p:]...)...)
			case 1:
				if p < len(b) {
					b = append(b[:p], b[p+1:]...)
				}
			default:
				if p < len(b) {
					b[p] = "changed\n"
				}
			}
		}
		old, new := strings.Join(a, ""), strings.Join(b, "")
		d := Unified("a", "b", old, new)
		got, err := apply(old, d)
		if err != nil || got != new {
			t.Fatalf("case %d: %v\nold:\n%s\nnew:\n%s\ndiff:\n%s\napplied:\n%s", i, err, old, new, d, got)
		}
	}
}

// apply applies a unified diff made by Unified to old, checking every
// context and removed line.
func apply(old, d string) (string, error) {
	if d == "" {
		return old, nil
	}
	src := lines(old)
	var out []string
	next := 0 // next line of src to copy
	dl := lines(d)[2:]
	for len(dl) > 0 {
		parts := strings.Fields(strings.Trim(dl[0], "@ \n")) // "-1,7", "+1,7"
		o0, on := rng(parts[0][1:])
		start := o0 - 1
		if on == 0 {
			start = o0
		}
		out = append(out, src[next:start]...)
		next = start
		dl = dl[1:]
		for len(dl) > 0 && !strings.HasPrefix(dl[0], "@@") {
			l := dl[0]
			dl = dl[1:]
			if len(dl) > 0 && strings.HasPrefix(dl[0], `\`) {
				l = strings.TrimSuffix(l, "\n")
				dl = dl[1:]
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(src) || src[next] != l[1:] {
					return strings.Join(out, ""), fmt.Errorf("line %d: have %q, diff says %q", next+1, src[min(next, len(src)-1)], l)
				}
				if l[0] == ' ' {
					out = append(out, l[1:])
				}
				next++
			case '+':
				out = append(out, l[1:])
			}
		}
	}
	return strings.Join(append(out, src[next:]...), ""), nil
}

func rng(s string) (int, int) {
	a, b, ok := strings.Cut(s, ",")
	first, _ := strconv.Atoi(a)
	if !ok {
		return first, 1
	}
	n, _ := strconv.Atoi(b)
	return first, n
}
