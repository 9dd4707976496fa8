package clientbench

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
)

// tlsBaseURL is the TLS server under load: HOTPATH_BENCH_TLS_URL (hotpath
// serve --tls, HTTP/2 and HTTP/1.1 by ALPN), or an in-process native
// server with httptest's certificate.
func tlsBaseURL(b *testing.B) string {
	if u := os.Getenv("HOTPATH_BENCH_TLS_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &server.Server{Native: func(c *server.Ctx) {
		c.SetContentType("application/json")
		c.WriteString(`{"id":1,"name":"hotpath","tags":["fast","safe"]}`)
	}}
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS() // for its certificate only
	certs := ts.TLS.Certificates
	ts.Close()
	srv.TLSConfig = &tls.Config{Certificates: certs}
	go srv.ServeTLS(ln, "", "")
	b.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String()
}

// insecure trusts the benchmark's server whatever its certificate: the
// clients compared all verify it alike (not at all), and every
// connection is kept, so the handshake is paid once per connection.
func insecure() *tls.Config { return &tls.Config{InsecureSkipVerify: true} }

func httpsClients(h2 bool) map[string]*http.Client {
	std := &http.Transport{TLSClientConfig: insecure(), MaxIdleConnsPerHost: 512, Protocols: new(http.Protocols)}
	std.Protocols.SetHTTP1(!h2)
	std.Protocols.SetHTTP2(h2)
	ours := client.New(func(t *client.Transport) {
		t.TLSClientConfig = insecure()
		if !h2 {
			t.Protocols = new(http.Protocols)
			t.Protocols.SetHTTP1(true)
		}
	})
	return map[string]*http.Client{"net-http": {Transport: std}, "client.New": ours}
}

// getOnce GETs url/json and reads the body, checking the protocol.
func getOnce(c *http.Client, url string, major int) error {
	resp, err := c.Get(url + "/json")
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.ProtoMajor != major {
		err = &protoError{resp.Proto}
	}
	return err
}

type protoError struct{ proto string }

func (e *protoError) Error() string { return "answered over " + e.proto }

// BenchmarkHTTPSGet: GETs over TLS on HTTP/1.1, connections kept, at 1
// and 8 concurrent requests: net/http's transport against client.New()
// (hotpath's own TLS connections).
func BenchmarkHTTPSGet(b *testing.B) { runHTTPS(b, false, []int{1, 8}) }

// BenchmarkH2Get: GETs over TLS on HTTP/2, at 1 and 100 concurrent
// streams: net/http's HTTP/2 client against client.New().
func BenchmarkH2Get(b *testing.B) { runHTTPS(b, true, []int{1, 100}) }

func runHTTPS(b *testing.B, h2 bool, conc []int) {
	url := tlsBaseURL(b)
	major := 1
	if h2 {
		major = 2
	}
	for _, n := range conc {
		for _, name := range []string{"net-http", "client.New"} {
			c := httpsClients(h2)[name]
			b.Run("conc="+strconv.Itoa(n)+"/"+name, func(b *testing.B) {
				defer c.CloseIdleConnections()
				if err := getOnce(c, url, major); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				b.SetParallelism(n)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := getOnce(c, url, major); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				reportCPU(b, cpu0)
			})
		}
	}
}
