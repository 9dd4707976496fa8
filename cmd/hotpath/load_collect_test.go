package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hotpathhq/hotpath/load"
)

// shardResults runs n short load runs at once against one server, as the
// pods of one Job would, and returns their results.
func shardResults(t *testing.T, n int) []*load.Result {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	res := make([]*load.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res[i], errs[i] = load.Run(context.Background(), load.Config{URL: srv.URL + "/", Connections: 2, Requests: int64(100 * (i + 1))})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	return res
}

// podJSON is a pod as `kubectl get pods -o json` lists it, with the parts
// collect reads.
func podJSON(name string, index, shards int, phase, state string, exit int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"job-name":"j"},
"annotations":{"batch.kubernetes.io/job-completion-index":"%d"}},
"spec":{"containers":[{"name":"hotpath","env":[{"name":"HOTPATH_SHARDS","value":"%d"},{"name":"GOMAXPROCS","valueFrom":{}}]}]},
"status":{"phase":%q,"containerStatuses":[{"name":"hotpath","state":{%q:{"reason":"Error","exitCode":%d}}}]}}`, name, index, shards, phase, state, exit)
}

func writePods(t *testing.T, dir string, pods ...string) {
	t.Helper()
	list := `{"apiVersion":"v1","kind":"List","items":[` + strings.Join(pods, ",") + `]}`
	if err := os.WriteFile(filepath.Join(dir, "pods.json"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resultLog is a pod's log: lines around its one result line.
func resultLog(t *testing.T, r *load.Result) []byte {
	t.Helper()
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return []byte("hotpath load: waiting for the start\n" + ResultLinePrefix + string(j) + "\nbye\n")
}

// collect end to end with a fake kubectl: two real results from two pods'
// logs merge exactly; a pod that failed before printing one is named with
// its state and the end of its log; a shard with no pod at all is named;
// both make the exit code 1 while the merged result is still printed.
func TestLoadCollect(t *testing.T) {
	runs := shardResults(t, 2)
	want, err := load.Merge(runs...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := fakeKubectl(t, dir)
	for i, r := range runs {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("j-%d-x", i)+".log"), resultLog(t, r), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "j-2-x.log"), []byte("starting\nhotpath load: run failed: no request got a response\n"), 0o644)
	writePods(t, dir,
		podJSON("j-2-x", 2, 4, "Failed", "terminated", 1),
		podJSON("j-1-x", 1, 4, "Succeeded", "terminated", 0),
		podJSON("j-0-x", 0, 4, "Succeeded", "terminated", 0))

	var out, errOut bytes.Buffer
	code := run([]string{"load", "collect", "--job", "j", "--namespace", "perf", "--kubectl", bin, "--json"}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1 (a pod without result, a shard without pod): %s", code, errOut.String())
	}
	got, err := load.ReadResult(&out)
	if err != nil {
		t.Fatalf("stdout is not a merged result: %v\nstderr: %s", err, errOut.String())
	}
	if got.Sources != 2 || got.Requests != runs[0].Requests+runs[1].Requests || got.Requests != 300 {
		t.Errorf("merged %d sources, %d requests; want 2 and %d+%d", got.Sources, got.Requests, runs[0].Requests, runs[1].Requests)
	}
	if got.Histograms.Latency != want.Histograms.Latency || got.Latency != want.Latency {
		t.Errorf("merged latency histogram differs from load.Merge of the two results")
	}
	for _, s := range []string{
		"pod j-2-x (shard 2, Failed, terminated: Error, exit code 1) printed no result; the end of its log:",
		"    hotpath load: run failed: no request got a response",
		"no pod for shard(s) 3 of 4",
		"merged 2 result(s) of 3 pod(s)",
	} {
		if !strings.Contains(errOut.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut.String())
		}
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	for _, s := range []string{"get pods --selector job-name=j --output json --namespace perf", "logs j-0-x --namespace perf", "logs j-2-x --namespace perf"} {
		if !strings.Contains(string(calls), s) {
			t.Errorf("kubectl was not run as %q; calls:\n%s", s, calls)
		}
	}

	// Every shard reported: exit 0 and the text summary. The kubectl
	// comes from HOTPATH_KUBECTL this time.
	t.Setenv("HOTPATH_KUBECTL", bin)
	writePods(t, dir, podJSON("j-0-x", 0, 2, "Succeeded", "terminated", 0), podJSON("j-1-x", 1, 2, "Succeeded", "terminated", 0))
	out.Reset()
	errOut.Reset()
	if code := run([]string{"load", "collect", "--job", "j"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "300 requests") || !strings.Contains(out.String(), "merged from 2 runs") {
		t.Errorf("all shards reported: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
}

func TestLoadCollectFailures(t *testing.T) {
	dir := t.TempDir()
	bin := fakeKubectl(t, dir)
	collect := func() (int, string) {
		var out bytes.Buffer
		code := run([]string{"load", "collect", "--job", "j", "--kubectl", bin}, &out, &out)
		return code, out.String()
	}
	writePods(t, dir)
	if code, out := collect(); code != 1 || !strings.Contains(out, "no pods of job j in the current namespace") {
		t.Errorf("no pods: exit %d: %s", code, out)
	}
	// A pending pod has no log yet; a running one no result yet.
	writePods(t, dir, podJSON("j-0-x", 0, 2, "Pending", "waiting", 0), podJSON("j-1-x", 1, 2, "Running", "running", 0))
	os.WriteFile(filepath.Join(dir, "j-1-x.log"), []byte("hotpath load: waiting for the start\n"), 0o644)
	code, out := collect()
	for _, s := range []string{"pod j-0-x (shard 0, Pending, waiting", "its log could not be read", "ContainerCreating",
		"pod j-1-x (shard 1, Running, running", "waiting for the start", "no pod of job j printed a result"} {
		if code != 1 || !strings.Contains(out, s) {
			t.Errorf("pending and running pods: exit %d, output lacks %q:\n%s", code, s, out)
		}
	}
	// A result line that does not read.
	writePods(t, dir, podJSON("j-1-x", 1, 1, "Succeeded", "terminated", 0))
	os.WriteFile(filepath.Join(dir, "j-1-x.log"), []byte(ResultLinePrefix+`{"schema":"hotpath-load/1","histograms":{"latency":"!!"}}`+"\n"), 0o644)
	if code, out := collect(); code != 1 || !strings.Contains(out, "a result line that does not read") {
		t.Errorf("bad result line: exit %d: %s", code, out)
	}
	// kubectl itself fails: its message is shown.
	os.WriteFile(filepath.Join(dir, "get.err"), []byte("error: You must be logged in to the server (Unauthorized)\n"), 0o644)
	if code, out := collect(); code != 1 || !strings.Contains(out, "You must be logged in") {
		t.Errorf("kubectl failing: exit %d: %s", code, out)
	}
	var out2 bytes.Buffer
	if code := run([]string{"load", "collect"}, &out2, &out2); code != 2 || !strings.Contains(out2.String(), "--job") {
		t.Errorf("no --job: exit %d: %s", code, out2.String())
	}
}
