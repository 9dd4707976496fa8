package server

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// TestNativeH2Semantics replays the adapter's semantics cases over
// HTTP/2, on hotpath's engine's modes (h2 over TLS and h2c): each raw
// HTTP/1.1 request of semCases is sent by Go's HTTP/2 client to the
// HTTP/2 engine and to net/http's HTTP/2 server on the same transport
// (the hand-off mode, the oracle), which serve the same handlers; the
// answers a client reads must agree, but for the differences listed in
// h2NativeDifferences with their reasons. (HTTP/1.1 has its own
// differential against net/http's HTTP/1.1 server, on the wire:
// TestAdapterSemantics.)
func TestNativeH2Semantics(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		nbase, nc := m.serve(t, &Server{}, semanticsMux(), nil)
		obase, oc := mode{proto: map[string]string{"h2": "handoff", "h2c": "handoff-h2c"}[m.proto]}.serve(t, &Server{}, semanticsMux(), nil)
		for _, c := range semCases {
			if c.n > 1 || strings.Contains(c.raw[:strings.Index(c.raw, "\r\n")], "HTTP/1.0") {
				continue // pipelining and HTTP/1.0 have no HTTP/2 form
			}
			t.Run(c.name, func(t *testing.T) {
				do := func(base string, cl *http.Client) string {
					req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(c.raw)))
					if err != nil {
						t.Skipf("not a request Go's client can send: %v", err)
					}
					out, err := http.NewRequest(req.Method, base+req.RequestURI, req.Body)
					if err != nil {
						t.Skipf("not a request Go's client can send: %v", err)
					}
					for k, vv := range req.Header {
						if k != "Connection" {
							out.Header[k] = vv
						}
					}
					out.ContentLength = req.ContentLength
					resp, err := cl.Do(out)
					if err != nil {
						return "error: " + err.Error()
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					return describe(resp, body, err)
				}
				got := normalizeBoundary(do(nbase, nc))
				want := normalizeBoundary(do(obase, oc))
				if got == want {
					if reason, listed := h2NativeDifferences[c.name]; listed {
						t.Errorf("listed as different (%s) but the engines now agree: remove the entry", reason)
					}
					return
				}
				if reason, listed := h2NativeDifferences[c.name]; listed {
					t.Logf("listed difference: %s\nnative:   %s\nnet/http: %s", reason, got, want)
					return
				}
				t.Errorf("native HTTP/2 and net/http's HTTP/2 differ:\nnative:   %s\nnet/http: %s", got, want)
			})
		}
	}, mode{proto: "h2"}, mode{proto: "h2c"})
}

// h2NativeDifferences lists the semantics cases where hotpath's engine
// answers differently from net/http's HTTP/2 server, and why.
var h2NativeDifferences = map[string]string{
	// The native writer holds up to 16 KiB of body before it commits the
	// head (one DATA frame's worth), net/http's HTTP/2 writer 4 KiB; a
	// handler that writes 4–16 KiB and returns gets a Content-Length from
	// hotpath's engine, which tells the client more, not less.
	"sniff/large":        "16 KiB response buffer (net/http's HTTP/2: 4 KiB): a 5 KB body gets Content-Length",
	"size/5000":          "16 KiB response buffer (net/http's HTTP/2: 4 KiB): a 5 KB body gets Content-Length",
	"trailer/large-body": "16 KiB response buffer (net/http's HTTP/2: 4 KiB): a 5 KB body gets Content-Length",
}

// A Content-Length the handler sets that is not a length is left out of
// the HTTP/2 response, and the server sends the length it knows, as
// net/http's HTTP/2 server does: sent as it was, it made curl reset the
// stream (PROTOCOL_ERROR).
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2HandlerBadContentLength(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "abc")
		io.WriteString(w, "hello")
	})
	c := rawH2(t, &Server{Handler: h})
	var enc h2.Encoder
	c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
	var dec h2.Decoder
	var lengths []string
	var body []byte
	readFrames(t, c, func(f *h2.Frame) bool {
		switch f.Type {
		case h2.FrameRSTStream, h2.FrameGoAway:
			t.Fatalf("%v frame: %v", f.Type, f.ErrCode())
		case h2.FrameHeaders:
			dec.Decode(f.BlockFragment(), func(fl h2.Field) {
				if string(fl.Name) == "content-length" {
					lengths = append(lengths, string(fl.Value))
				}
			})
		case h2.FrameData:
			body = append(body, f.Payload...)
		}
		return f.StreamID == 1 && f.Flags.Has(h2.FlagEndStream)
	})
	if !slices.Equal(lengths, []string{"5"}) || string(body) != "hello" {
		t.Fatalf("content-length %q, body %q; want [5] and hello", lengths, body)
	}
}
