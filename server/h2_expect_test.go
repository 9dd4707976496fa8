package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// A request with "Expect: 100-continue" answered without reading its
// body ends its stream at once: the final response with END_STREAM, then
// RST_STREAM (NO_ERROR, RFC 9113 §8.1) telling the client to keep its
// body, without the client sending any of it. The stream no longer
// counts against the connection.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames (rawH2):
// the frames that end the stream are what is tested; HTTP/1.1 closes or
// keeps the connection instead (TestSemExpectContinue...), and the
// hand-off's HTTP/2 is net/http's.
func TestH2ExpectContinueUnreadEndsStream(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(mode{"h2c", native}.String(), func(t *testing.T) {
			s := &Server{}
			if native {
				s.Native = func(c *Ctx) { c.Error(http.StatusUnauthorized, "no") }
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "no", http.StatusUnauthorized)
				})
			}
			c := rawH2(t, s)
			var enc h2.Encoder
			for id := uint32(1); id <= 5; id += 2 {
				b := enc.StartBlock(nil)
				b = enc.AppendField(b, ":method", "POST")
				b = enc.AppendField(b, ":scheme", "http")
				b = enc.AppendField(b, ":authority", "example.com")
				b = enc.AppendField(b, ":path", "/")
				b = enc.AppendField(b, "expect", "100-continue")
				b = enc.AppendField(b, "content-length", "1000")
				if _, err := c.Write(h2.AppendHeaders(nil, id, h2.FlagEndHeaders, h2.Priority{}, b, 0)); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var ended bool
				f := readFrames(t, c, func(f *h2.Frame) bool {
					if f.StreamID != id {
						return false
					}
					if f.Type == h2.FrameHeaders || f.Type == h2.FrameData {
						ended = ended || f.Flags.Has(h2.FlagEndStream)
					}
					return f.Type == h2.FrameRSTStream
				})
				if !ended {
					t.Fatalf("stream %d: RST_STREAM before the response ended", id)
				}
				if f.ErrCode() != h2.ErrCodeNo {
					t.Fatalf("stream %d: RST_STREAM %v, want NO_ERROR", id, f.ErrCode())
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("stream %d: reset %v after the request, want within h2NoErrWait of the response", id, d)
				}
			}
		})
	}
}
