package percalltransport

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"sync"
	"time"
)

// ---- must flag ----

func fetch(url string) ([]byte, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 10}} // want `a new http.Transport is built and used for one call`
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func roundTrip(req *http.Request) (*http.Response, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone() // want `a new http.Transport is built and used for one call`
	tr.TLSClientConfig = &tls.Config{ServerName: "x"}
	return tr.RoundTrip(req)
}

func assignedLater(req *http.Request) (*http.Response, error) {
	c := &http.Client{Timeout: time.Second}
	c.Transport = &http.Transport{} // want `a new http.Transport is built and used for one call`
	return c.Do(req)
}

// ---- must not flag ----

var shared = &http.Transport{MaxIdleConnsPerHost: 64}

// A new Client over a shared Transport keeps the pool (telegraf chimp_api.go).
func goodSharedTransport(url string) (*http.Response, error) {
	c := &http.Client{Transport: shared, Timeout: 5 * time.Second}
	return c.Get(url)
}

// A new Client with the default Transport: the catalog's "myth" (fine).
func goodDefaultTransport(url string) (*http.Response, error) {
	return (&http.Client{Timeout: time.Second}).Get(url)
}

type gatherer struct{ client *http.Client }

// Lazy init (telegraf couchdb.go, haproxy.go).
func (g *gatherer) goodLazy(url string) (*http.Response, error) {
	if g.client == nil {
		g.client = &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: time.Second}}
	}
	return g.client.Get(url)
}

var (
	once   sync.Once
	client *http.Client
)

func goodOnce(url string) (*http.Response, error) {
	once.Do(func() {
		client = &http.Client{Transport: &http.Transport{}}
	})
	return client.Get(url)
}

// A constructor: the caller keeps the client.
func goodConstructor() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
}

// Stored in a field: long-lived.
func (g *gatherer) goodStore() {
	g.client = &http.Client{Transport: &http.Transport{}}
}

// init runs once.
func init() {
	c := &http.Client{Transport: &http.Transport{}}
	c.Get("http://example.com")
}

// Built per call but handed to other code: not judged.
func goodPassed(use func(*http.Transport)) {
	t := &http.Transport{}
	use(t)
}

func goodSuppressed(url string) {
	c := &http.Client{Transport: &http.Transport{}} //nolint:per-call-transport // one-shot probe
	c.Get(url)
}

// Built once, reused for every iteration (coredns's health poller).
func goodReusedInLoop(ctx context.Context, url string) {
	client := http.Client{Transport: &http.Transport{MaxIdleConns: 100}}
	for ctx.Err() == nil {
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// Built inside the loop: one Transport per iteration.
func perIteration(urls []string) {
	for _, u := range urls {
		client := &http.Client{Transport: &http.Transport{}} // want `a new http.Transport is built and used for one call`
		resp, err := client.Get(u)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
