package server

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Request trailers: one rule on both protocols and both APIs, the head's
// limits (MaxHeaderCount fields, MaxHeaderBytes), with a clear answer past
// them; and trailers on a stream the server refused cost nothing.

// Trailers the client sent on a stream the server refused, before it saw
// the refusal, are dropped: the connection, and its other streams, go on
// (RFC 9113 §5.1), on both APIs.
//
// Modes: hotpath's HTTP/2 engine, raw frames: trailers on a refused
// stream.
func TestH2TrailersOnRefusedStream(t *testing.T) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			o := startOrphanTarget(t, api == "native", 0, 0, func(s *Server) { s.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1} })
			c := h2From(t, o.addr, "")
			var enc h2.Encoder
			b := h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, "/block"), 0)
			// Stream 3 is past the limit: a POST with a body and trailers,
			// all sent before the refusal can arrive.
			blk := postBlock(&enc)
			b = h2.AppendHeaders(b, 3, h2.FlagEndHeaders, h2.Priority{}, blk, 0)
			b = h2.AppendData(b, 3, 0, []byte("body"), 0)
			tr := enc.StartBlock(nil)
			tr = enc.AppendField(tr, "x-checksum", "abc")
			b = h2.AppendHeaders(b, 3, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, tr, 0)
			c.Write(b)
			f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway })
			if f.Type != h2.FrameRSTStream || f.StreamID != 3 || f.ErrCode() != h2.ErrCodeRefusedStream {
				t.Fatalf("%v %v on stream %d, want RST_STREAM REFUSED_STREAM on stream 3", f.Type, f.ErrCode(), f.StreamID)
			}
			ping(t, c) // the trailers did not end the connection
			close(o.release)
			f = readFrames(t, c, func(f *h2.Frame) bool {
				return f.Type == h2.FrameGoAway || f.Type == h2.FrameRSTStream || f.StreamID == 1 && f.Flags.Has(h2.FlagEndStream)
			})
			if f.Type == h2.FrameGoAway || f.Type == h2.FrameRSTStream {
				t.Fatalf("%v %v, want stream 1 answered", f.Type, f.ErrCode())
			}
		})
	}
}

// Request trailers follow the head's limits on both APIs: within them
// they reach the handler; past MaxHeaderCount fields or MaxHeaderBytes,
// the stream is reset (ENHANCE_YOUR_CALM) and the handler's body read
// fails naming the limit. The connection goes on.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestH2TrailerLimits(t *testing.T) {
	cases := []struct {
		name    string
		fields  int
		valueSz int
		want    string // in the body error; "" for none
	}{
		{"300 fields", 300, 4, ""},
		{"600 fields", 600, 4, "MaxHeaderCount (500)"},
		{"2000 fields", 2000, 4, "exceed 16384 bytes"}, // 2,000 × 32 bytes of overhead each (§4.1 of RFC 7541) come first
		{"20 KiB", 10, 2 << 10, "exceed 16384 bytes"},
		{"80 KiB", 10, 8 << 10, "exceed 16384 bytes"},
	}
	for _, api := range []string{"handler", "native"} {
		for _, tc := range cases {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				type outcome struct {
					err      error
					trailers int
				}
				got := make(chan outcome, 1)
				s := &Server{ErrorLog: discardLog}
				if api == "native" {
					s.Native = func(c *Ctx) {
						_, err := io.ReadAll(c.Body())
						got <- outcome{err, -1}
					}
				} else {
					s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						_, err := io.ReadAll(r.Body)
						got <- outcome{err, len(r.Trailer)}
					})
				}
				c := rawH2(t, s)
				c.Write(h2.AppendSettingsAck(nil))
				var enc h2.Encoder
				blk := postBlock(&enc)
				b := h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, blk, 0)
				b = h2.AppendData(b, 1, 0, []byte("body"), 0)
				tr := enc.StartBlock(nil)
				value := strings.Repeat("v", tc.valueSz)
				for i := range tc.fields {
					tr = enc.AppendField(tr, fmt.Sprintf("x-t-%d", i), value)
				}
				b = h2.AppendHeaderBlock(b, 1, true, tr, h2.DefaultMaxFrameSize)
				go c.Write(b)
				var o outcome
				select {
				case o = <-got:
				case <-time.After(10 * time.Second):
					t.Fatal("the handler's body read did not end")
				}
				if tc.want == "" {
					if o.err != nil || api == "handler" && o.trailers != tc.fields {
						t.Fatalf("body read: %v, %d trailers; want no error and %d trailers", o.err, o.trailers, tc.fields)
					}
					return
				}
				if o.err == nil || !strings.Contains(o.err.Error(), tc.want) {
					t.Errorf("body read: %v, want an error naming %s", o.err, tc.want)
				}
				f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway })
				if f.Type != h2.FrameRSTStream || f.ErrCode() != h2.ErrCodeEnhanceYourCalm {
					t.Errorf("%v %v, want RST_STREAM ENHANCE_YOUR_CALM", f.Type, f.ErrCode())
				}
				ping(t, c)
			})
		}
	}
}

// HTTP/1.1 chunked trailers meet the same limits: within them they reach
// the handler; past them the body read fails and the client gets a 431
// naming the limit, on both APIs.
//
// Modes: HTTP/1.1 chunked trailers, raw bytes (HTTP/2's:
// TestH2TrailerLimits).
func TestH1TrailerLimits(t *testing.T) {
	cases := []struct {
		name    string
		fields  int
		valueSz int
		want    string // in the 431's reason; "" for a 200
	}{
		{"400 fields", 400, 4, ""},
		{"600 fields", 600, 4, "MaxHeaderCount (500)"},
		{"20 KiB", 10, 2 << 10, "exceed 16384 bytes"},
	}
	for _, api := range []string{"handler", "native"} {
		for _, tc := range cases {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				s := &Server{ErrorLog: discardLog}
				if api == "native" {
					s.Native = func(c *Ctx) {
						if _, err := c.ReadBody(nil); err == nil {
							c.WriteString("ok")
						}
					}
				} else {
					s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if _, err := io.ReadAll(r.Body); err == nil {
							fmt.Fprintf(w, "ok %d", len(r.Trailer))
						}
					})
				}
				c := dial(t, startServer(t, s))
				var b strings.Builder
				b.WriteString("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n")
				value := strings.Repeat("v", tc.valueSz)
				for i := range tc.fields {
					fmt.Fprintf(&b, "X-T-%d: %s\r\n", i, value)
				}
				b.WriteString("\r\n")
				go io.WriteString(c, b.String())
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				if tc.want == "" {
					want := "ok"
					if api == "handler" {
						want = fmt.Sprintf("ok %d", tc.fields)
					}
					if resp.StatusCode != 200 || string(body) != want {
						t.Errorf("%s %q, want 200 %q", resp.Status, body, want)
					}
					return
				}
				if resp.StatusCode != 431 || !strings.Contains(string(body), tc.want) {
					t.Errorf("%s %q, want 431 naming %s", resp.Status, body, tc.want)
				}
			})
		}
	}
}
