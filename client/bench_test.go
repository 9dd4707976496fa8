package client_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
)

// nativeServer starts a hotpath native server, which allocates nothing per
// request, so a benchmark's allocations are the client's alone.
func nativeServer(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var sink [256]byte
	srv := &server.Server{Native: func(c *server.Ctx) {
		c.SetContentType("application/json")
		c.ReadBody(sink[:0])
		c.WriteString(`{"id":1,"name":"hotpath","tags":["fast","safe"]}`)
	}}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// The whole Do, NewRequest included: what a caller pays per request.
func benchmarkGet(b *testing.B, rt http.RoundTripper, parallel bool) {
	benchmarkClient(b, &http.Client{Transport: rt}, parallel)
}

func benchmarkClient(b *testing.B, c *http.Client, parallel bool) {
	url := nativeServer(b) + "/json"
	defer c.CloseIdleConnections()
	do := func(buf []byte) {
		req, _ := http.NewRequest("GET", url, nil)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
	b.ReportAllocs()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 512)
			for pb.Next() {
				do(buf)
			}
		})
		return
	}
	buf := make([]byte, 512)
	for b.Loop() {
		do(buf)
	}
}

func stdTransport() http.RoundTripper { return &http.Transport{MaxIdleConnsPerHost: 256} }

func BenchmarkGet(b *testing.B) {
	b.Run("net-http", func(b *testing.B) { benchmarkGet(b, stdTransport(), false) })
	b.Run("hotpath", func(b *testing.B) { benchmarkGet(b, &client.Transport{}, false) })
}

func BenchmarkGetParallel(b *testing.B) {
	b.Run("net-http", func(b *testing.B) { benchmarkGet(b, stdTransport(), true) })
	b.Run("hotpath", func(b *testing.B) { benchmarkGet(b, &client.Transport{}, true) })
}

func BenchmarkPostJSON(b *testing.B) {
	body := `{"name":"hotpath","count":42,"tags":["a","b","c"]}`
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http", stdTransport()}, {"hotpath", &client.Transport{}}} {
		b.Run(tc.name, func(b *testing.B) {
			url := nativeServer(b) + "/json"
			c := &http.Client{Transport: tc.rt}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkStatsOverhead: New's Transport with Stats set, against the
// same Transport without.
func BenchmarkStatsOverhead(b *testing.B) {
	var s client.Stats
	b.Run("bare", func(b *testing.B) { benchmarkGet(b, client.NewTransport(), false) })
	b.Run("stats", func(b *testing.B) {
		tr := client.NewTransport()
		tr.Stats = &s
		benchmarkGet(b, tr, false)
	})
}

// BenchmarkClients: the clients users get, as they call them: net/http's
// default client, client.New() with its defaults (a 30 s timeout, the
// drain), and net/http's transport with the same defaults
// (NewHTTPTransport, DrainBody and http.Client.Timeout).
func BenchmarkClients(b *testing.B) {
	b.Run("http.DefaultClient", func(b *testing.B) {
		benchmarkClient(b, &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, false)
	})
	b.Run("client.New", func(b *testing.B) { benchmarkClient(b, client.New(), false) })
	b.Run("NewHTTPTransport", func(b *testing.B) { benchmarkClient(b, netHTTPClient(), false) })
}
