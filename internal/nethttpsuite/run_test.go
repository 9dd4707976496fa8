package nethttpsuite

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseJSONLeavesAndHangs reads go test -json output: leaf units keep
// their outcome, parents are implied, and the tests still running when
// the binary timed out are returned.
func TestParseJSONLeavesAndHangs(t *testing.T) {
	out := strings.Join([]string{
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"pass","Test":"TestA/h1"}`,
		`{"Action":"fail","Test":"TestA/h2"}`,
		`{"Action":"fail","Test":"TestA"}`,
		`{"Action":"skip","Test":"TestB"}`,
		`{"Action":"output","Test":"TestC/h1","Output":"panic: test timed out after 2m0s\n"}`,
		`{"Action":"output","Test":"TestC/h1","Output":"\trunning tests:\n"}`,
		`{"Action":"output","Test":"TestC/h1","Output":"\t\tTestC/h1 (2m0s)\n"}`,
		`{"Action":"output","Test":"TestC/h1","Output":"\n"}`,
	}, "\n")
	res := Results{}
	var log bytes.Buffer
	running, _, err := parseJSON([]byte(out), res, &log)
	if err != nil {
		t.Fatal(err)
	}
	want := Results{"TestA/h1": Pass, "TestA/h2": Fail, "TestB": Skip}
	if len(res) != len(want) {
		t.Errorf("results %v; want %v", res, want)
	}
	for u, o := range want {
		if res[u] != o {
			t.Errorf("%s = %q; want %q", u, res[u], o)
		}
	}
	if len(running) != 1 || running[0] != "TestC/h1" {
		t.Errorf("running = %q; want [TestC/h1]", running)
	}
}

// TestParseJSONCrash reads the output of a binary that crashed (a panic
// that names no test, as synctest's deadlock does): the units that had
// started and not ended in the test it is attributed to are returned,
// and their parent is no unit; a test paused meanwhile runs again.
func TestParseJSONCrash(t *testing.T) {
	out := strings.Join([]string{
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"pass","Test":"TestA"}`,
		`{"Action":"run","Test":"TestB"}`,
		`{"Action":"run","Test":"TestB/h1"}`,
		`{"Action":"run","Test":"TestB/h2"}`,
		`{"Action":"pass","Test":"TestB/h2"}`,
		`{"Action":"run","Test":"TestC"}`,
		`{"Action":"run","Test":"TestC/h1"}`,
		`{"Action":"pause","Test":"TestC/h1"}`,
		`{"Action":"output","Test":"TestB","Output":"panic: deadlock: all goroutines in bubble are blocked\n"}`,
		`{"Action":"fail","Test":"TestB"}`,
	}, "\n")
	res := Results{}
	var log bytes.Buffer
	running, crashed, err := parseJSON([]byte(out), res, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !crashed || len(running) != 1 || running[0] != "TestB/h1" {
		t.Errorf("running = %q, crashed = %v; want [TestB/h1], true", running, crashed)
	}
	if _, ok := res["TestB"]; ok || res["TestA"] != Pass || res["TestB/h2"] != Pass {
		t.Errorf("results = %v; want TestA and TestB/h2 passed, no TestB", res)
	}
}

// TestCompareCountsPerMode checks the tally: a difference is deliberate,
// open, or unexpected; a listed unit that passes is stale.
func TestCompareCountsPerMode(t *testing.T) {
	net := Results{"TestA/h1": Pass, "TestA/h2": Pass, "TestB/h1": Pass, "TestC": Pass, "TestD/h2": Pass, "TestE": Fail, "TestF/h1": Skip}
	hot := Results{"TestA/h1": Pass, "TestA/h2": Fail, "TestB/h1": Fail, "TestC": Hang, "TestD/h2": Pass, "TestE": Pass, "TestF/h1": Skip}
	servers := map[string]bool{"TestA": true, "TestB": true, "TestC": true, "TestD": true, "TestE": true, "TestF": true}
	c := Compare(net, hot, servers, map[string]string{"TestA/h2": "why"}, map[string]string{"TestB": "todo", "TestD": "todo"})
	if c.Units != 7 {
		t.Errorf("units = %d; want 7", c.Units)
	}
	if h1 := c.Modes["h1"]; h1.Both != 1 || h1.OnlyNet != 1 || h1.Open != 1 || h1.Skipped != 1 {
		t.Errorf("h1 = %+v", *h1)
	}
	if h2 := c.Modes["h2"]; h2.Both != 1 || h2.OnlyNet != 1 || h2.Deliberate != 1 {
		t.Errorf("h2 = %+v", *h2)
	}
	if len(c.Unexpected) != 1 || c.Unexpected[0] != "TestC (hang)" {
		t.Errorf("unexpected = %q; want [TestC (hang)]", c.Unexpected)
	}
	if len(c.Gained) != 1 || c.Gained[0] != "TestE" {
		t.Errorf("gained = %q; want [TestE]", c.Gained)
	}
	if len(c.Stale) != 1 || c.Stale[0] != "TestD/h2" {
		t.Errorf("stale = %q; want [TestD/h2]", c.Stale)
	}
	if table := c.Table(); !strings.Contains(table, "| all | 7 | 2 | 3 | 1 | 1 | 1 | 0 | 1 |") {
		t.Errorf("table:\n%s", table)
	}
}
