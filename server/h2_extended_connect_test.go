//lint:file-ignore SA1019 x/net's HTTP/2 Transport (deprecated for net/http's) is the Go client that can send RFC 8441's ":protocol": net/http's refuses the field (Go 1.26, 1.27)

package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// xconnectClient is an HTTP/2 client for m's server that can send RFC
// 8441's extended CONNECT: x/net's (net/http's own refuses the
// ":protocol" header), with c's TLS settings.
func xconnectClient(t *testing.T, m mode, c *http.Client) *http.Client {
	tr := &http2.Transport{}
	if m.cleartext() {
		tr.AllowHTTP = true
		tr.DialTLSContext = func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	} else {
		tr.TLSClientConfig = c.Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// skipWithoutXConnect skips a test whose Go client cannot send RFC
// 8441's ":protocol" field: from Go 1.27, x/net's Transport runs on
// net/http's, which refuses it. There, TestBrowser (headless Chromium,
// websocket package) checks extended CONNECT.
func skipWithoutXConnect(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), `invalid header field name ":protocol"`) {
		t.Skipf("this Go's HTTP/2 client refuses the :protocol field (%v); TestBrowser covers RFC 8441 here", err)
	}
}

// extendedConnect sends an extended CONNECT for protocol to url, its body
// the returned pipe.
func extendedConnect(t *testing.T, c *http.Client, url, protocol string) (*io.PipeWriter, *http.Response, error) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodConnect, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(":protocol", protocol)
	resp, err := c.Do(req)
	if err != nil {
		pw.Close()
	}
	return pw, resp, err
}

// TestExtendedConnect: with ExtendedConnect, hotpath's HTTP/2 engine
// takes RFC 8441's extended CONNECT on both APIs: the handler sees
// method CONNECT, :path as the URL's path and the protocol in
// Header[":protocol"] (RequestHeader(":protocol") on the native API),
// and the stream carries bytes both ways while the handler runs, well
// past MaxRequestBodyBytes (a tunnel's bytes are not a request body).
// Without ExtendedConnect the server's SETTINGS do not allow it, and
// x/net's client refuses to send one.
//
// Modes: hotpath's HTTP/2 engine (h2, h2c) × both APIs: RFC 8441 is
// HTTP/2's, and with the hand-off net/http's engine decides (GODEBUG).
func TestExtendedConnect(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", r.Method+" "+r.URL.Path+" "+r.Header.Get(":protocol"))
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		rc.Flush()
		buf := make([]byte, 100)
		for {
			n, err := io.ReadFull(r.Body, buf)
			if err != nil {
				return
			}
			w.Write(buf[:n])
			rc.Flush()
		}
	})
	nh := func(x *Ctx) {
		x.SetHeader("X-Seen", string(x.Method())+" "+string(x.Path())+" "+string(x.RequestHeader(":protocol")))
		x.SetStatus(200)
		x.Flush()
		buf := make([]byte, 100)
		for {
			n, err := io.ReadFull(x.Body(), buf)
			if err != nil {
				return
			}
			x.Write(buf[:n])
			x.Flush()
		}
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{ExtendedConnect: true, MaxRequestBodyBytes: 16}, h, nh)
		pw, resp, err := extendedConnect(t, xconnectClient(t, m, c), base+"/tunnel", "echo-test")
		skipWithoutXConnect(t, err)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if got := resp.Header.Get("X-Seen"); resp.StatusCode != 200 || got != "CONNECT /tunnel echo-test" {
			t.Fatalf("answered %d, the handler saw %q; want 200 and \"CONNECT /tunnel echo-test\"", resp.StatusCode, got)
		}
		got := make([]byte, 100)
		for i := range 10 { // 1,000 bytes through a 16-byte MaxRequestBodyBytes
			chunk := bytes.Repeat([]byte{byte('a' + i)}, 100)
			if _, err := pw.Write(chunk); err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
			if _, err := io.ReadFull(resp.Body, got); err != nil || !bytes.Equal(got, chunk) {
				t.Fatalf("chunk %d echoed %q, %v", i, got, err)
			}
		}
		pw.Close()
		if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
			t.Fatalf("after the client's end: %q, %v; want the stream's end", rest, err)
		}
	}, h2EngineModes()...)

	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{}, h, nh)
		_, _, err := extendedConnect(t, xconnectClient(t, m, c), base+"/tunnel", "echo-test")
		skipWithoutXConnect(t, err)
		if err == nil || !strings.Contains(err.Error(), "extended connect not supported") {
			t.Fatalf("an extended CONNECT to a server without ExtendedConnect: %v; want the client to refuse it", err)
		}
	}, h2EngineModes()...)
}

// h2EngineModes are the modes served by hotpath's HTTP/2 engine.
func h2EngineModes() []mode {
	return modesWhere(func(m mode) bool { return m.isH2() && !m.isHandoff() })
}

// TestSetReadDeadlineReplacesReadStall: a handler that sets its own read
// deadline (ResponseController, or Ctx.SetReadDeadline; here: none)
// reads a body that pauses for longer than ReadStallTimeout, on both
// protocols (HTTP/2 cut it before). Without it, the stall cuts the body.
//
// Modes: every mode but the hand-off's, whose HTTP/2 body reads are
// net/http's, under the hand-off's own guard.
func TestSetReadDeadlineReplacesReadStall(t *testing.T) {
	read := func(own bool, setRead func(time.Time) error, body io.Reader) string {
		if own {
			setRead(time.Time{})
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	}
	for _, own := range []bool{true, false} {
		name := map[bool]string{true: "own deadline", false: "stall timeout"}[own]
		t.Run(name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, read(own, http.NewResponseController(w).SetReadDeadline, r.Body))
			})
			nh := func(x *Ctx) { x.WriteString(read(own, x.SetReadDeadline, x.Body())) }
			runModes(t, func(t *testing.T, m mode) {
				t.Parallel()
				base, c := m.serve(t, &Server{ReadStallTimeout: 100 * time.Millisecond}, h, nh)
				pr, pw := io.Pipe()
				go func() {
					pw.Write([]byte("first "))
					time.Sleep(500 * time.Millisecond) // five stall timeouts
					pw.Write([]byte("second"))
					pw.Close()
				}()
				req := mustRequest(t, "POST", base+"/")
				req.Body = pr
				resp, err := c.Do(req)
				if err != nil {
					if own {
						t.Fatal(err)
					}
					return // the stall cut the connection before the answer
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if own && string(b) != "first second" {
					t.Fatalf("the handler read %q; want the whole body", b)
				}
				if !own && string(b) == "first second" {
					t.Fatalf("the body paused past ReadStallTimeout was read whole")
				}
			}, modesWhere(func(m mode) bool { return !m.isHandoff() })...)
		})
	}
}
