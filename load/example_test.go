package load_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// Run an open-loop test: 500 requests per second over 4 connections for
// half a second, latency timed from each request's intended send time.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()

	res, err := load.Run(context.Background(), load.Config{
		URL:         srv.URL,
		Connections: 4,
		Rate:        500,
		Duration:    500 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// res.WriteText(os.Stdout) prints the summary; res.WriteJSON the
	// --json form. The schedule made 250 sends due; a generator short of
	// CPU starts fewer and counts the rest as dropped (Result.Dropped).
	fmt.Println(res.Mode, res.Engine, res.Sent+res.Dropped, "due (sent or dropped),", res.Status["200"] == res.Sent, "(every sent request got a 200),", res.Conns.Opened, "connections")

	// Output: open-loop fast 250 due (sent or dropped), true (every sent request got a 200), 4 connections
}

// Merge runs made at the same time on several machines (read with
// load.ReadResult from their --json output): the percentiles are those
// of all requests together.
func ExampleMerge() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var runs []*load.Result
	for range 2 {
		res, err := load.Run(context.Background(), load.Config{URL: srv.URL, Connections: 2, Requests: 100})
		if err != nil {
			fmt.Println(err)
			return
		}
		runs = append(runs, res)
	}
	all, err := load.Merge(runs...)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(all.Sources, "runs,", all.Requests, "requests,", all.Latency.Count, "latencies")
	// Output: 2 runs, 200 requests, 200 latencies
}

// Gate a run, as CI does: the thresholds are evaluated on the result
// (and again on a merge of shards), and Validate says what is wrong with
// one before a run.
func ExampleThreshold() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	fmt.Println(load.Threshold("errors<0.01").Validate())
	res, err := load.Run(context.Background(), load.Config{
		URL:        srv.URL,
		Requests:   100,
		Thresholds: []load.Threshold{"p99<10s", "errors<1%", "status:5xx<1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range res.Thresholds {
		fmt.Println(t.Threshold, t.Pass)
	}
	fmt.Println("passed:", res.ThresholdsPassed())
	// Output:
	// load: threshold "errors<0.01": errors is a count; write errors<1% for a share or errors<1 for a count
	// p99<10s true
	// errors<1% true
	// status:5xx<1 true
	// passed: true
}
