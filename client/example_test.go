package client_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// One shared client for the whole program, with reuse statistics.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]int{"id": 7})
	}))
	defer srv.Close()

	var stats client.Stats
	c := client.New(func(t *client.Transport) { t.Stats = &stats }) // an Option sets the Transport's fields
	for i := 0; i < 10; i++ {
		resp, err := c.Get(srv.URL)
		if err != nil {
			panic(err)
		}
		var v struct{ ID int }
		json.NewDecoder(resp.Body).Decode(&v) // leaves the trailing newline unread
		resp.Body.Close()                     // drained within 64 KiB / 50 ms: the connection is kept
	}
	s := stats.Snapshot()
	fmt.Printf("requests=%d new connections=%d reuse=%.0f%%\n", s.Requests, s.NewConns, 100*s.ReuseRatio)
	// Output: requests=10 new connections=1 reuse=90%
}

// The fast HTTP/1.1 RoundTripper drops into any http.Client.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer srv.Close()

	tr := &client.Transport{} // https:// and proxied requests go to a tuned http.Transport
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Get(srv.URL + "/fast")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output: 200 OK hello from /fast
}

// NewTransport's defaults, changed field by field, in a client of your
// own.
func ExampleNewTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	tr := client.NewTransport() // New's defaults: proxy from the environment, 30 s per request...
	tr.Timeout = 5 * time.Second
	tr.Proxy = nil
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output: 200 OK ok
}

// The one-line swap for code that builds its own *http.Transport: every
// field keeps net/http's meaning.
func ExampleFromHTTPTransport() {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	c := &http.Client{Transport: client.FromHTTPTransport(tr)}
	_ = c
}

// Staying on net/http's transport: the same defaults, with the drain and
// the overall timeout added around it.
func ExampleNewHTTPTransport() {
	tr := client.NewHTTPTransport()
	c := &http.Client{Transport: client.DrainBody(tr, 0, 0), Timeout: client.DefaultTimeout} // drain: 64 KiB, 50 ms
	_ = c
}

// DrainBody adds the bounded drain to a RoundTripper you already have.
func ExampleDrainBody() {
	tr := client.DrainBody(&http.Transport{MaxIdleConnsPerHost: 64}, 0, 0) // 64 KiB, 50 ms
	c := &http.Client{Transport: tr}
	_ = c
}
