// Package udiff writes unified diffs of text files, line by line, with
// Myers' O(ND) algorithm: fixes change a few lines of a file, so D is small
// and the diff is fast and small even for long files.
package udiff

import (
	"fmt"
	"strings"
)

const context = 3 // lines of context around each change, as diff -u

// Unified returns the unified diff turning old into new, with the header
// lines "--- oldName" and "+++ newName", or "" when they are equal.
func Unified(oldName, newName, old, new string) string {
	if old == new {
		return ""
	}
	ops := diff(lines(old), lines(new))
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldName, newName)
	// Walk the script hunk by hunk: a hunk runs from the context before its
	// first change to the context after its last one, and swallows changes
	// closer than 2*context lines.
	oldLine, newLine := 0, 0 // lines of old and new before ops[i]
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			oldLine++
			newLine++
			i++
			continue
		}
		start := i
		for start > 0 && i-start < context && ops[start-1].kind == ' ' {
			start--
		}
		end := i // one past the hunk's last change
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*context {
				break
			}
		}
		stop := end
		for stop < len(ops) && stop-end < context && ops[stop].kind == ' ' {
			stop++
		}
		back := i - start // context lines before the first change
		o0, n0 := oldLine-back, newLine-back
		var no, nn int
		var body strings.Builder
		for _, op := range ops[start:stop] {
			switch op.kind {
			case ' ':
				no++
				nn++
			case '-':
				no++
			case '+':
				nn++
			}
			body.WriteByte(op.kind)
			body.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n%s", span(o0, no), span(n0, nn), body.String())
		for _, op := range ops[i:stop] {
			if op.kind != '+' {
				oldLine++
			}
			if op.kind != '-' {
				newLine++
			}
		}
		i = stop
	}
	return b.String()
}

// span formats a hunk range: the first line (1-based) and the count; an
// empty range names the line before it, as diff -u does.
func span(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	if n == 1 {
		return fmt.Sprint(before + 1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// lines splits s after each newline; the last line may lack one.
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

type op struct {
	kind byte // ' ' both, '-' old only, '+' new only
	line string
}

// diff returns a shortest edit script from a to b (Myers 1986). Only the
// band of the V array that step d can touch is kept per step, so memory is
// O(D²).
func diff(a, b []string) []op {
	n, m := len(a), len(b)
	max := n + m
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int // trace[d][k+d]: v[k] before step d
	d := 0
search:
	for ; d <= max; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				break search
			}
		}
	}
	var rev []op
	x, y := n, m
	for ; d > 0; d-- {
		prev := func(k int) int { return trace[d][k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && prev(k-1) < prev(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, op{' ', a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, op{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, op{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, op{' ', a[x-1]})
		x--
		y--
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}
