// Package clientbench compares Go HTTP clients the way seed 003 does (GET,
// POST JSON, with headers, parallel) with the server out of the process, so
// the figures are the client's alone: ns/op, B/op, allocs/op and the
// client's CPU-µs per request (getrusage around the loop).
//
// Run it through bench/client.sh, which starts the server pinned on one CPU
// and the benchmark on another. Without HOTPATH_BENCH_URL the benchmarks
// start an in-process hotpath native server, which allocates nothing per
// request (so B/op and allocs/op stay the client's) but shares the CPU.
package clientbench

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/imroc/req/v3"
	"github.com/valyala/fasthttp"

	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
)

const postBody = `{"name":"hotpath","count":42,"tags":["fast","safe","measured"]}`

// baseURL is the server under load: HOTPATH_BENCH_URL, or an in-process
// native server.
func baseURL(b *testing.B) string {
	if u := os.Getenv("HOTPATH_BENCH_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var sink [512]byte
	srv := &server.Server{Native: func(c *server.Ctx) {
		if string(c.Path()) == "/discard" { // BenchmarkUpload
			io.Copy(io.Discard, c.Body())
			return
		}
		c.ReadBody(sink[:0])
		c.SetContentType("application/json")
		c.WriteString(`{"id":1,"name":"hotpath","tags":["fast","safe"]}`)
	}}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// doer is one client's way to make the three kinds of request; each
// returns the response body's length.
type doer struct {
	get, post, headers func() (int, error)
}

func netHTTPDoer(c *http.Client, url string) doer {
	read := func(resp *http.Response, err error) (int, error) {
		if err != nil {
			return 0, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return int(n), err
	}
	return doer{
		get: func() (int, error) { return read(c.Get(url + "/json")) },
		post: func() (int, error) {
			return read(c.Post(url+"/echo", "application/json", strings.NewReader(postBody)))
		},
		headers: func() (int, error) {
			r, _ := http.NewRequest("GET", url+"/json", nil)
			r.Header.Set("Authorization", "Bearer token-123")
			r.Header.Set("X-Request-Id", "abc-123")
			r.Header.Set("Accept", "application/json")
			return read(c.Do(r))
		},
	}
}

func clients(url string) map[string]doer {
	rc := resty.New()
	rq := req.C()
	fc := &fasthttp.Client{MaxConnsPerHost: 512}
	fget := func(u string, hdr bool, body []byte) (int, error) {
		r, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(r)
		defer fasthttp.ReleaseResponse(resp)
		r.SetRequestURI(u)
		if hdr {
			r.Header.Set("Authorization", "Bearer token-123")
			r.Header.Set("X-Request-Id", "abc-123")
			r.Header.Set("Accept", "application/json")
		}
		if body != nil {
			r.Header.SetMethod("POST")
			r.Header.SetContentType("application/json")
			r.SetBody(body)
		}
		err := fc.Do(r, resp)
		return len(resp.Body()), err
	}
	pb := []byte(postBody)
	return map[string]doer{
		"net-http": netHTTPDoer(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}, url),
		"hotpath":  netHTTPDoer(&http.Client{Transport: &client.Transport{}}, url),
		// What users call: net/http's default client, and hotpath's
		// client.New() with its defaults (a 30 s timeout, the drain).
		"http.DefaultClient": netHTTPDoer(http.DefaultClient, url),
		"client.New":         netHTTPDoer(client.New(), url),
		"resty": {
			get: func() (int, error) {
				r, err := rc.R().Get(url + "/json")
				return len(r.Body()), err
			},
			post: func() (int, error) {
				r, err := rc.R().SetHeader("Content-Type", "application/json").SetBody(pb).Post(url + "/echo")
				return len(r.Body()), err
			},
			headers: func() (int, error) {
				r, err := rc.R().SetHeader("Authorization", "Bearer token-123").SetHeader("X-Request-Id", "abc-123").
					SetHeader("Accept", "application/json").Get(url + "/json")
				return len(r.Body()), err
			},
		},
		"req": {
			get: func() (int, error) {
				r, err := rq.R().Get(url + "/json")
				return len(r.Bytes()), err
			},
			post: func() (int, error) {
				r, err := rq.R().SetHeader("Content-Type", "application/json").SetBodyBytes(pb).Post(url + "/echo")
				return len(r.Bytes()), err
			},
			headers: func() (int, error) {
				r, err := rq.R().SetHeader("Authorization", "Bearer token-123").SetHeader("X-Request-Id", "abc-123").
					SetHeader("Accept", "application/json").Get(url + "/json")
				return len(r.Bytes()), err
			},
		},
		"fasthttp": {
			get:     func() (int, error) { return fget(url+"/json", false, nil) },
			post:    func() (int, error) { return fget(url+"/echo", false, pb) },
			headers: func() (int, error) { return fget(url+"/json", true, nil) },
		},
	}
}

var order = []string{"net-http", "hotpath", "http.DefaultClient", "client.New", "fasthttp", "resty", "req"}

// cpuClock is this process's CPU time so far, user and system apart.
type cpuClock struct{ user, sys time.Duration }

func cpuTime() cpuClock {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpuClock{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())}
}

// reportCPU reports the CPU used since c0 per operation: cpu-us/op (user
// and system), and sys-us/op, the kernel's share (system calls, the
// loopback, wake-ups), which every client pays for the same requests.
func reportCPU(b *testing.B, c0 cpuClock) {
	c := cpuTime()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(c.user-c0.user+c.sys-c0.sys), "cpu-us/op")
	b.ReportMetric(per(c.sys-c0.sys), "sys-us/op")
}

// run benchmarks kind with each client: one request at a time when
// parallel is 0, else parallel goroutines (GOMAXPROCS is 1 in
// bench/client.sh, so that many requests in flight).
func run(b *testing.B, kind string, parallel int) {
	url := baseURL(b)
	all := clients(url)
	for _, name := range order {
		d := all[name]
		f := map[string]func() (int, error){"get": d.get, "post": d.post, "headers": d.headers}[kind]
		b.Run(name, func(b *testing.B) {
			if n, err := f(); err != nil || n == 0 { // warm the pool, check the body
				b.Fatalf("%s: %d bytes, %v", name, n, err)
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			if parallel > 0 {
				b.SetParallelism(parallel)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := f(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			} else {
				for i := 0; i < b.N; i++ {
					if _, err := f(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			reportCPU(b, cpu0)
		})
	}
}

func BenchmarkGet(b *testing.B)         { run(b, "get", 0) }
func BenchmarkPostJSON(b *testing.B)    { run(b, "post", 0) }
func BenchmarkHeaders(b *testing.B)     { run(b, "headers", 0) }
func BenchmarkGetParallel(b *testing.B) { run(b, "get", 8) }

// BenchmarkGetInFlight16: 16 GETs in flight at once (issue 38's "16 in
// flight" target).
func BenchmarkGetInFlight16(b *testing.B) { run(b, "get", 16) }

// TestClientsAgree: every client gets the same body from each endpoint,
// so the benchmark compares the same work.
func TestClientsAgree(t *testing.T) {
	url := os.Getenv("HOTPATH_BENCH_URL")
	if url == "" {
		t.Skip("set HOTPATH_BENCH_URL (bench/client.sh does)")
	}
	var want []int
	for _, name := range order {
		d := clients(url)[name]
		var got []int
		for _, f := range []func() (int, error){d.get, d.post, d.headers} {
			n, err := f()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, n)
		}
		if want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("%s: body lengths %v, net/http %v", name, got, want)
		}
	}
}

// BenchmarkUpload posts 3 MiB to /discard (under the native API's 4 MiB
// body limit): from memory with its length and chunked, and from a file
// with its length, behind io.NopCloser ("file": both transports copy it)
// and as the *os.File itself ("sendfile": both send it with sendfile):
// net/http's transport against hotpath's client.Transport (the peers'
// big-body paths are their own business; seed 003 measures small
// requests).
func BenchmarkUpload(b *testing.B) {
	url := baseURL(b)
	body := bytes.Repeat([]byte("hotpath-"), 3<<20/8)
	path := filepath.Join(b.TempDir(), "upload")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		b.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	for _, framing := range []string{"length", "chunked", "file", "sendfile"} {
		b.Run(framing, func(b *testing.B) {
			for _, name := range []string{"net-http", "hotpath"} {
				var rt http.RoundTripper = &http.Transport{}
				if name == "hotpath" {
					rt = &client.Transport{}
				}
				c := &http.Client{Transport: rt}
				b.Run(name, func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					cpu0 := cpuTime()
					for b.Loop() {
						var src io.Reader = io.MultiReader(bytes.NewReader(body))
						switch framing {
						case "file":
							file.Seek(0, io.SeekStart)
							src = io.NopCloser(file) // a file the client must not close
						case "sendfile":
							f, err := os.Open(path) // the client closes it
							if err != nil {
								b.Fatal(err)
							}
							src = f
						}
						req, _ := http.NewRequest("POST", url+"/discard", src)
						if framing != "chunked" {
							req.ContentLength = int64(len(body))
						}
						resp, err := c.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Fatalf("status %d", resp.StatusCode)
						}
					}
					reportCPU(b, cpu0)
				})
			}
		})
	}
}
